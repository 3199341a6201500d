package checksum

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// mod251 is n bytes counting modulo 251 (long enough for xxHash's
// streaming and long-input paths, not periodic in its 64-byte stripes).
func mod251(n, mul int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * mul % 251)
	}
	return b
}

// TestKnownVectors checks every algorithm against published values: the
// CRC catalogue's check values of "123456789", AWS's aws-c-checksums
// and aws-c-s3 test vectors for CRC-64/NVME, the NVMe command set
// specification's 4 KiB buffers, FIPS 180 examples for the SHAs, RFC
// 1321's for MD5, and for the xxHashes the canonical values printed by
// the reference xxhsum 0.8.1 (-H1, -H2, -H3; Python's hashlib for MD5
// and SHA512 of the longer inputs).
func TestKnownVectors(t *testing.T) {
	for _, c := range []struct {
		alg  *Algorithm
		data []byte
		want []byte
	}{
		{CRC32, []byte("123456789"), be32(0xcbf43926)},
		{CRC32C, []byte("123456789"), be32(0xe3069283)},
		{CRC64NVME, []byte("123456789"), be64(0xae8b14860a799888)},
		{CRC64NVME, make([]byte, 32), be64(0xcf3473434d4ecf3b)},
		{CRC64NVME, seq(32), be64(0xb9d9d4a8492cbd7f)},
		{CRC64NVME, []byte("aaaaaaaaaa"), []byte{0x0c, 0x1a, 0x80, 0x03, 0x6d, 0x65, 0xc5, 0x55}},
		{CRC64NVME, make([]byte, 4096), be64(0x6482d367eb22b64e)},
		{CRC64NVME, bytes.Repeat([]byte{0xff}, 4096), be64(0xc0ddba7302eca3ac)},
		{CRC64NVME, []byte("hello world!"), be64(0xd9160d1fa8e418e3)},
		{CRC32, []byte("The quick brown fox jumps over the lazy dog"), be32(0x414fa339)},
		{CRC32C, []byte("The quick brown fox jumps over the lazy dog"), be32(0x22620404)},
		{SHA1, []byte("abc"), mustHex("a9993e364706816aba3e25717850c26c9cd0d89d")},
		{SHA256, []byte("abc"), mustHex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")},
		{CRC32, nil, be32(0)},
		{CRC64NVME, nil, be64(0)},
		{MD5, nil, mustHex("d41d8cd98f00b204e9800998ecf8427e")},
		{MD5, []byte("abc"), mustHex("900150983cd24fb0d6963f7d28e17f72")},
		{MD5, mod251(70000, 1), mustHex("83a59980ece79dbb8eaadbea1819fd2b")},
		{SHA512, []byte("abc"), mustHex("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a" +
			"2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")},
		{SHA512, mod251(70000, 1), mustHex("8d47c764d31a9b7ae51fdfa14a26720d4d6aec051f592e448c0a662058b81738" +
			"a06bce17c37a356568bea781bca83b28b41392933d1b9dacc2488a6f5efbef9c")},
		{XXHASH64, nil, be64(0xef46db3751d8e999)},
		{XXHASH64, []byte("a"), be64(0xd24ec4f1a98c6e5b)},
		{XXHASH64, []byte("abc"), be64(0x44bc2cf5ad770999)},
		{XXHASH64, []byte("The quick brown fox jumps over the lazy dog"), be64(0x0b242d361fda71bc)},
		{XXHASH64, mod251(1000, 7), be64(0x023fd2ed1ff957d5)},
		{XXHASH64, mod251(70000, 1), be64(0xfcb0c39fbcc2aaf3)},
		{XXHASH3, nil, be64(0x2d06800538d394c2)},
		{XXHASH3, []byte("a"), be64(0xe6c632b61e964e1f)},
		{XXHASH3, []byte("abc"), be64(0x78af5f94892f3950)},
		{XXHASH3, []byte("The quick brown fox jumps over the lazy dog"), be64(0xce7d19a5418fb365)},
		{XXHASH3, mod251(1000, 7), be64(0xd1eb8367bf3294e7)},
		{XXHASH3, mod251(70000, 1), be64(0xc30ebc4be7b94cbb)},
		// XXH128's canonical form: the high 64 bits first.
		{XXHASH128, nil, mustHex("99aa06d3014798d86001c324468d497f")},
		{XXHASH128, []byte("a"), mustHex("a96faf705af16834e6c632b61e964e1f")},
		{XXHASH128, []byte("abc"), mustHex("06b05ab6733a618578af5f94892f3950")},
		{XXHASH128, []byte("The quick brown fox jumps over the lazy dog"), mustHex("ddd650205ca3e7fa24a1cc2e3a8a7651")},
		{XXHASH128, mod251(1000, 7), mustHex("5ed35fc6b4f0ef20d1eb8367bf3294e7")},
		{XXHASH128, mod251(70000, 1), mustHex("b9ee647138722296c30ebc4be7b94cbb")},
	} {
		if got := c.alg.Of(c.data); got != base64.StdEncoding.EncodeToString(c.want) {
			t.Errorf("%s(%.20q) = %s, want %x", c.alg.Name(), c.data, got, c.want)
		}
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestFullObjectCombines: the full-object CRC computed from random parts'
// CRCs and sizes equals the CRC of their concatenation (seeded).
func TestFullObjectCombines(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 4))
	for _, alg := range []*Algorithm{CRC32, CRC32C, CRC64NVME} {
		for round := range 200 {
			var whole []byte
			var parts []Part
			for range 1 + rng.IntN(6) {
				n := rng.IntN(3000)
				if rng.IntN(8) == 0 {
					n = 0
				}
				p := make([]byte, n)
				for i := range p {
					p[i] = byte(rng.Uint32())
				}
				whole = append(whole, p...)
				sum, _ := alg.Decode(alg.Of(p))
				parts = append(parts, Part{Sum: sum, Size: int64(n)})
			}
			got, err := alg.Multipart(FullObject, parts)
			if err != nil {
				t.Fatal(err)
			}
			if want := alg.Of(whole); got != want {
				t.Fatalf("%s round %d: combined %s, whole %s", alg.Name(), round, got, want)
			}
		}
	}
}

// TestCombineLargeLength: shifting by a length far beyond memory agrees
// with shifting twice by its halves (x^(a+b) = x^a·x^b).
func TestCombineLargeLength(t *testing.T) {
	for _, alg := range []*Algorithm{CRC32, CRC32C, CRC64NVME} {
		c := alg.crc
		const n = 5 << 40
		if c.xPow(8*n) != c.mulMod(c.xPow(8*n/2), c.xPow(8*n/2)) {
			t.Errorf("%s: x^(8n) differs from its halves' product", alg.Name())
		}
		// The catalogue's check string split in two combines to its check value.
		a, _ := alg.Decode(alg.Of([]byte("12345")))
		b, _ := alg.Decode(alg.Of([]byte("6789")))
		whole, _ := alg.Decode(alg.Of([]byte("123456789")))
		if got := c.mulMod(c.xPow(8*4), c.get(a)) ^ c.get(b); got != c.get(whole) {
			t.Errorf("%s: crc(12345)·x^32 ⊕ crc(6789) = %x, want %x", alg.Name(), got, c.get(whole))
		}
	}
}

// TestComposite pins S3's composite form with values measured on AWS (a
// three-part SHA256 upload) and the rule for the others.
func TestComposite(t *testing.T) {
	var parts []Part
	for _, v := range []string{"lcKa6Boe7a167tUCN5C4OaFygGSYD8MBnBARTrdL+1w=",
		"gHjhbUT4oo2tSCtSZJdlKi+jeNXJT+VImqdPXsXvkOc=", "4l9PQ3zOPZ0oGFvknFX+J4zZwE4WMzO+l3r8XrbWOeM="} {
		sum, err := SHA256.Decode(v)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, Part{Sum: sum})
	}
	got, err := SHA256.Multipart(Composite, parts)
	if err != nil {
		t.Fatal(err)
	}
	if want := "rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=-3"; got != want {
		t.Errorf("composite %s, want %s", got, want)
	}
	if WithoutPartCount(got) != "rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=" {
		t.Errorf("WithoutPartCount(%s)", got)
	}
	crcParts := []Part{{Sum: be32(1)}, {Sum: be32(2)}}
	got, _ = CRC32.Multipart(Composite, crcParts)
	if want := CRC32.Of(append(be32(1), be32(2)...)) + "-2"; got != want {
		t.Errorf("CRC32 composite %s, want %s", got, want)
	}
}

func TestTypeRules(t *testing.T) {
	for _, c := range []struct {
		alg       *Algorithm
		composite bool
		full      bool
		def       Type
	}{
		{CRC32, true, true, Composite},
		{CRC32C, true, true, Composite},
		{CRC64NVME, false, true, FullObject},
		{MD5, true, false, Composite},
		{SHA1, true, false, Composite},
		{SHA256, true, false, Composite},
		{SHA512, true, false, Composite},
		{XXHASH128, true, false, Composite},
		{XXHASH3, true, false, Composite},
		{XXHASH64, true, false, Composite},
	} {
		if c.alg.Supports(Composite) != c.composite || c.alg.Supports(FullObject) != c.full || c.alg.DefaultType() != c.def {
			t.Errorf("%s: rules differ", c.alg.Name())
		}
		if _, err := c.alg.Multipart(Type("BOTH"), nil); err == nil {
			t.Errorf("%s: an unknown type was accepted", c.alg.Name())
		}
	}
	for _, a := range []*Algorithm{MD5, SHA1, SHA256, SHA512, XXHASH128, XXHASH3, XXHASH64} {
		if _, err := a.Multipart(FullObject, []Part{{Sum: make([]byte, a.Size()), Size: 1}}); err == nil {
			t.Errorf("a full-object %s was computed", a.Name())
		}
	}
	if _, err := CRC32.Multipart(FullObject, []Part{{Sum: []byte{1}}}); err == nil {
		t.Error("a short part digest was accepted")
	}
}

func TestLookupAndDecode(t *testing.T) {
	for _, name := range []string{"crc32", "CRC32C", "Crc64Nvme", "sha1", "SHA256", "md5", "Sha512", "xxhash64", "XXHASH3", "XxHash128"} {
		if a, ok := Lookup(name); !ok || !strings.EqualFold(a.Name(), name) {
			t.Errorf("Lookup(%q) failed", name)
		}
	}
	for _, name := range []string{"", "crc64", "sha384", "xxhash", "xxh3", "xxhash32", "crc32 "} {
		if _, ok := Lookup(name); ok {
			t.Errorf("Lookup(%q) succeeded", name)
		}
	}
	// Non-canonical spellings of a 4-byte value (padding bits set, a line
	// break) are malformed too (FuzzDecode found the first).
	for _, v := range []string{"", "AAAA", "AAAAAA==", "!!!!!!==", "AAAAAA=", "AAAAAAA=", "000000==", "AAAA\nAA==", "AAAAAA==\r\n"} {
		if _, err := CRC32.Decode(v); err == nil && v != "AAAAAA==" {
			t.Errorf("CRC32.Decode(%q) accepted", v)
		}
	}
	if _, err := CRC32.Decode("AAAAAA=="); err != nil {
		t.Errorf("CRC32.Decode of a valid value: %v", err)
	}
	for _, v := range []string{"COMPOSITE", "FULL_OBJECT"} {
		if _, ok := ParseType(v); !ok {
			t.Errorf("ParseType(%q) failed", v)
		}
	}
	if _, ok := ParseType("composite"); ok {
		t.Error("ParseType took a lower-case type")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add("AAAAAA==")
	f.Add("rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=")
	f.Add("AAAAAAAAAAA=")
	f.Add("mapG0wFHmNhgAcMkRo1Jfw==")
	f.Add(SHA512.Of(nil))
	f.Fuzz(func(t *testing.T, v string) {
		for _, a := range All {
			if sum, err := a.Decode(v); err == nil && (len(sum) != a.Size() || a.Encode(sum) != v) {
				t.Fatalf("%s.Decode(%q) gave %x", a.Name(), v, sum)
			}
		}
	})
}

// BenchmarkAlgorithms: hashing throughput of each algorithm over 1 MiB
// (what a PUT pays per byte for the checksum it sends or names).
func BenchmarkAlgorithms(b *testing.B) {
	data := make([]byte, 1<<20)
	for _, alg := range All {
		b.Run(alg.Name(), func(b *testing.B) {
			h := alg.New()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				h.Write(data)
			}
		})
	}
}

// BenchmarkFullObject: the full-object CRC of 10,000 parts from their CRCs.
func BenchmarkFullObject(b *testing.B) {
	parts := make([]Part, 10000)
	for i := range parts {
		parts[i] = Part{Sum: make([]byte, 8), Size: 5 << 20}
	}
	for b.Loop() {
		if _, err := CRC64NVME.Multipart(FullObject, parts); err != nil {
			b.Fatal(err)
		}
	}
}
