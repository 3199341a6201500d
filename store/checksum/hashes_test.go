package checksum

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc64"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// oracleSizes cross xxHash's input-length thresholds (0, 1–3, 4–8,
// 9–16, 17–128, 129–240, then the stripe, block and 1 MiB paths).
var oracleSizes = []int{0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1023, 1024, 1025, 4096 + 7, 65536, 1<<20 + 13}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestStreamingMatchesOneShot: a body hashed in random pieces, as a
// request body arrives, has the checksum of the whole (seeded).
func TestStreamingMatchesOneShot(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 1))
	for _, alg := range All {
		for _, n := range oracleSizes {
			data := randomBytes(rng, n)
			h := alg.New()
			for rest := data; len(rest) > 0; {
				k := min(len(rest), 1+rng.IntN(300))
				h.Write(rest[:k])
				rest = rest[k:]
			}
			if got, want := alg.Encode(h.Sum(nil)), alg.Of(data); got != want {
				t.Errorf("%s of %d bytes in pieces: %s, at once %s", alg.Name(), n, got, want)
			}
			if len(h.Sum(nil)) != alg.Size() {
				t.Errorf("%s: %d-byte digest, Size says %d", alg.Name(), len(h.Sum(nil)), alg.Size())
			}
		}
	}
}

// TestCRC64NVMEMatchesTable: the carry-less-multiplication CRC64NVME
// equals the standard library's table CRC over the same polynomial, on
// inputs of every length class and alignment (seeded).
func TestCRC64NVMEMatchesTable(t *testing.T) {
	table := crc64.MakeTable(polyCRC64NVME)
	rng := rand.New(rand.NewPCG(44, 4))
	for _, n := range oracleSizes {
		data := randomBytes(rng, n+16)
		for _, off := range []int{0, 1, 7, 16} {
			in := data[off : off+n]
			if got, want := CRC64NVME.Of(in), CRC64NVME.Encode(binary.BigEndian.AppendUint64(nil, crc64.Checksum(in, table))); got != want {
				t.Errorf("%d bytes at offset %d: %s, table %s", n, off, got, want)
			}
		}
	}
}

// TestXXHashOracle: the xxHashes of random inputs of every length class
// equal the reference implementation's, xxhsum, in its canonical
// (big-endian) output.
func TestXXHashOracle(t *testing.T) {
	oracle.Require(t, "xxhsum")
	rng := rand.New(rand.NewPCG(44, 2))
	dir := t.TempDir()
	var files []string
	inputs := map[string][]byte{}
	for _, n := range oracleSizes {
		path := filepath.Join(dir, fmt.Sprint("in-", n))
		data := randomBytes(rng, n)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
		inputs[path] = data
	}
	for _, c := range []struct {
		flag string
		alg  *Algorithm
	}{{"-H64", XXHASH64}, {"-H3", XXHASH3}, {"-H128", XXHASH128}} {
		out, err := exec.Command("xxhsum", append([]string{c.flag}, files...)...).Output()
		if err != nil {
			t.Fatalf("xxhsum %s: %v", c.flag, err)
		}
		seen := 0
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			digest, path, ok := parseXXHsum(line)
			data, known := inputs[path]
			if !ok || !known {
				t.Fatalf("xxhsum %s printed %q", c.flag, line)
			}
			seen++
			want, err := hex.DecodeString(digest)
			if err != nil {
				t.Fatalf("xxhsum %s printed %q", c.flag, line)
			}
			if got := c.alg.Of(data); got != c.alg.Encode(want) {
				t.Errorf("%s of %d random bytes: %s, xxhsum %s", c.alg.Name(), len(data), got, digest)
			}
		}
		if seen != len(files) {
			t.Errorf("xxhsum %s hashed %d of %d files", c.flag, seen, len(files))
		}
	}
}

// parseXXHsum reads one line of xxhsum's output: "<hex>  <path>", or
// "XXH3 (<path>) = <hex>" for -H3.
func parseXXHsum(line string) (digest, path string, ok bool) {
	if rest, found := strings.CutPrefix(line, "XXH3 ("); found {
		path, digest, ok = strings.Cut(rest, ") = ")
		return digest, path, ok
	}
	digest, path, ok = strings.Cut(line, "  ")
	return digest, path, ok
}

// minioTypes are minio-go's names for the algorithms.
var minioTypes = map[*Algorithm]minio.ChecksumType{
	CRC32: minio.ChecksumCRC32, CRC32C: minio.ChecksumCRC32C, CRC64NVME: minio.ChecksumCRC64NVME,
	MD5: minio.ChecksumMD5, SHA1: minio.ChecksumSHA1, SHA256: minio.ChecksumSHA256, SHA512: minio.ChecksumSHA512,
	XXHASH128: minio.ChecksumXXHash128, XXHASH3: minio.ChecksumXXHash3, XXHASH64: minio.ChecksumXXHash64,
}

// minioPart is a minio-go part carrying value as its alg checksum.
func minioPart(alg *Algorithm, number int, size int64, value string) minio.ObjectPart {
	p := minio.ObjectPart{PartNumber: number, Size: size}
	*map[*Algorithm]*string{
		CRC32: &p.ChecksumCRC32, CRC32C: &p.ChecksumCRC32C, CRC64NVME: &p.ChecksumCRC64NVME,
		MD5: &p.ChecksumMD5, SHA1: &p.ChecksumSHA1, SHA256: &p.ChecksumSHA256, SHA512: &p.ChecksumSHA512,
		XXHASH128: &p.ChecksumXXHash128, XXHASH3: &p.ChecksumXXHash3, XXHASH64: &p.ChecksumXXHash64,
	}[alg] = value
	return p
}

// TestMatchesMinioGo: every algorithm has minio-go's name, header, digest
// size and wire value, and the multipart checksums minio-go computes
// itself to send on Complete (composite without its "-N", full-object
// for the CRCs) are the ones computed here; the types minio-go can
// combine are the ones Supports allows.
func TestMatchesMinioGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 3))
	sizes := []int{5 << 10, 5 << 10, 777}
	for _, alg := range All {
		mt, ok := minioTypes[alg]
		if !ok {
			t.Fatalf("%s: no minio-go type", alg.Name())
		}
		if mt.String() != alg.Name() || mt.Key() != "x-amz-checksum-"+alg.Header() || mt.RawByteLen() != alg.Size() {
			t.Errorf("%s: minio-go calls it %s, %s, %d bytes", alg.Name(), mt, mt.Key(), mt.RawByteLen())
		}
		var whole []byte
		var parts []Part
		var mparts []minio.ObjectPart
		for i, n := range sizes {
			data := randomBytes(rng, n)
			whole = append(whole, data...)
			v := alg.Of(data)
			if got := mt.EncodeToString(data); got != v {
				t.Errorf("%s of %d bytes: %s, minio-go sends %s", alg.Name(), n, v, got)
			}
			sum, _ := alg.Decode(v)
			parts = append(parts, Part{Sum: sum, Size: int64(n)})
			mparts = append(mparts, minioPart(alg, i+1, int64(n), v))
		}
		if mt.CanComposite() != alg.Supports(Composite) || mt.CanMergeCRC() != alg.Supports(FullObject) {
			t.Errorf("%s: minio-go combines composite %v, full object %v", alg.Name(), mt.CanComposite(), mt.CanMergeCRC())
		}
		if alg.Supports(Composite) {
			want, err := mt.CompositeChecksum(mparts)
			got, _ := alg.Multipart(Composite, parts)
			if err != nil || got != fmt.Sprintf("%s-%d", want.Encoded(), len(parts)) {
				t.Errorf("%s composite: %s, minio-go %s (%v)", alg.Name(), got, want.Encoded(), err)
			}
		}
		if alg.Supports(FullObject) {
			want, err := mt.FullObjectChecksum(mparts)
			got, _ := alg.Multipart(FullObject, parts)
			if err != nil || got != want.Encoded() || got != alg.Of(whole) {
				t.Errorf("%s full object: %s, minio-go %s (%v), whole %s", alg.Name(), got, want.Encoded(), err, alg.Of(whole))
			}
		}
	}
	if Names() != "CRC32, CRC32C, CRC64NVME, MD5, SHA1, SHA256, SHA512, XXHASH128, XXHASH3, XXHASH64" {
		t.Errorf("Names() = %s", Names())
	}
}
