package sealed

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/secure-io/sio-go"
	"golang.org/x/crypto/argon2"
)

const password = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

var (
	ids   = []byte{Argon2idAESGCM, Argon2idChaCha20Poly1305, PBKDF2AESGCM}
	sizes = []int{0, 1, BufSize - 1, BufSize, BufSize + 1, 3*BufSize + 7}
)

// payload is n bytes that differ from fragment to fragment, so that a
// misplaced fragment would show.
func payload(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + i/BufSize)
	}
	return p
}

// cheapArgon2 puts a hash of password and salt in the place of Argon2id
// for the rest of the test, and returns a count of key derivations.
// Tests of the stream, the framing and the errors gain nothing from
// 64 MiB and 0.1 s per call; the tests named FromFacts run the real
// function, with its parameters written out.
func cheapArgon2(tb testing.TB) *int { return fakeKDF(tb, Argon2idAESGCM, Argon2idChaCha20Poly1305) }

// cheapKDF fakes PBKDF2 as well, for tests that open a message hundreds
// of times and for the fuzz target, where 2 ms a call (15 under -race)
// would dominate.
func cheapKDF(tb testing.TB) *int { return fakeKDF(tb, ids...) }

func fakeKDF(tb testing.TB, fake ...byte) *int {
	var mu sync.Mutex
	calls := new(int)
	orig := deriveKey
	deriveKey = func(pw string, salt []byte, id byte) ([]byte, error) {
		mu.Lock()
		*calls++
		mu.Unlock()
		if !bytes.Contains(fake, []byte{id}) {
			return orig(pw, salt, id)
		}
		return fakeKey([]byte(pw), salt, id), nil
	}
	tb.Cleanup(func() { deriveKey = orig })
	return calls
}

// fakeKey stands in for the key of id: one for both Argon2id ids, as the
// real derivation gives, another for PBKDF2.
func fakeKey(pw, salt []byte, id byte) []byte {
	kdf := "fake argon2id"
	if id == PBKDF2AESGCM {
		kdf = "fake pbkdf2"
	}
	h := sha256.New()
	h.Write([]byte(kdf))
	h.Write(pw)
	h.Write([]byte{0})
	h.Write(salt)
	return h.Sum(nil)
}

func mustSeal(t *testing.T, plaintext []byte, id byte) []byte {
	t.Helper()
	msg, err := SealWith(password, plaintext, id)
	if err != nil {
		t.Fatalf("SealWith(id 0x%02x, %d bytes): %v", id, len(plaintext), err)
	}
	return msg
}

func TestRoundTrip(t *testing.T) {
	cheapArgon2(t)
	for _, id := range ids {
		for _, n := range sizes {
			want := payload(n)
			msg := mustSeal(t, want, id)
			if len(msg) != SealedSize(n) || msg[SaltSize] != id {
				t.Fatalf("id 0x%02x, %d bytes: sealed to %d bytes with id 0x%02x, want %d and 0x%02x", id, n, len(msg), msg[SaltSize], SealedSize(n), id)
			}
			got, err := Open(password, msg)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("id 0x%02x, %d bytes: Open = %d bytes, %v", id, n, len(got), err)
			}
			if _, err := OpenLimit(password, msg, n); err != nil {
				t.Errorf("id 0x%02x: OpenLimit(exactly %d): %v", id, n, err)
			}
			if _, err := OpenLimit(password, msg, n-1); n > 0 && !errors.Is(err, ErrTooLarge) {
				t.Errorf("id 0x%02x: OpenLimit(%d) of %d bytes: %v, want ErrTooLarge", id, n-1, n, err)
			}
		}
	}
}

func TestSealPicksTheCPUsAEAD(t *testing.T) {
	cheapArgon2(t)
	msg, err := Seal(password, []byte(`{"secretKey":"S","status":"enabled"}`))
	if err != nil {
		t.Fatal(err)
	}
	if id := msg[SaltSize]; id != defaultID || id == PBKDF2AESGCM {
		t.Fatalf("Seal used id 0x%02x, want the Argon2id default 0x%02x", id, defaultID)
	}
	if _, err := Open(password, msg); err != nil {
		t.Fatal(err)
	}
	if salt2, _ := Seal(password, nil); bytes.Equal(msg[:SaltSize], salt2[:SaltSize]) {
		t.Fatal("two messages share a salt")
	}
}

func TestSealedSize(t *testing.T) {
	for _, alg := range []sio.Algorithm{sio.AES_256_GCM, sio.ChaCha20Poly1305} {
		stream, err := alg.Stream(make([]byte, 32))
		if err != nil {
			t.Fatal(err)
		}
		for n := range 4*BufSize + 2 {
			if n > 40 && n%BufSize > 2 && n%BufSize < BufSize-2 {
				continue // the interesting sizes are near the fragment edges
			}
			if got, want := SealedSize(n), HeaderSize+n+int(stream.Overhead(int64(n))); got != want {
				t.Fatalf("%s: SealedSize(%d) = %d, sio says %d", alg, n, got, want)
			}
		}
	}
	if MaxSealed != SealedSize(MaxPlaintext) {
		t.Fatalf("MaxSealed = %d, want %d", MaxSealed, SealedSize(MaxPlaintext))
	}
}

func TestWrongPassword(t *testing.T) {
	cheapArgon2(t)
	for _, id := range ids {
		msg := mustSeal(t, payload(100), id)
		for _, pw := range []string{"", password[:len(password)-1], password + "x", "WJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"} {
			if got, err := Open(pw, msg); !errors.Is(err, ErrDecrypt) || got != nil {
				t.Errorf("id 0x%02x, password %q: Open = %d bytes, %v; want ErrDecrypt", id, pw, len(got), err)
			}
		}
	}
}

// flipPositions is every header byte, both ends of every fragment (its
// first bytes and its tag) and some random bytes of a message of n bytes.
func flipPositions(n int, rng *rand.Rand) []int {
	var pos []int
	for i := range HeaderSize {
		pos = append(pos, i)
	}
	for start := HeaderSize; start < n; start += BufSize + TagSize {
		end := min(start+BufSize+TagSize, n)
		pos = append(pos, start, start+1)
		for i := end - TagSize - 1; i < end; i++ {
			pos = append(pos, i)
		}
	}
	for range 400 {
		pos = append(pos, HeaderSize+rng.IntN(n-HeaderSize))
	}
	return pos
}

func TestEveryBitFlipIsDetected(t *testing.T) {
	cheapKDF(t) // hundreds of Opens: what is tested is the stream's authentication
	rng := rand.New(rand.NewPCG(1, 2))
	for _, id := range ids {
		for _, n := range []int{0, 3*BufSize + 7} {
			msg := mustSeal(t, payload(n), id)
			for _, pos := range flipPositions(len(msg), rng) {
				bits := []int{rng.IntN(8)}
				if pos == SaltSize {
					bits = []int{0, 1, 2, 3, 4, 5, 6, 7}
				}
				for _, bit := range bits {
					bad := bytes.Clone(msg)
					bad[pos] ^= 1 << bit
					got, err := Open(password, bad)
					ok := errors.Is(err, ErrDecrypt) || pos == SaltSize && errors.Is(err, ErrUnknownAlgorithm)
					if !ok || got != nil {
						t.Fatalf("id 0x%02x, %d bytes: flipping bit %d of byte %d: Open = %d bytes, %v", id, n, bit, pos, len(got), err)
					}
				}
			}
		}
	}
}

func TestTruncationAndExtension(t *testing.T) {
	cheapArgon2(t)
	const frag = BufSize + TagSize // a full fragment
	short := []int{0, 1, SaltSize - 1, SaltSize, SaltSize + 1, HeaderSize - 1, HeaderSize, HeaderSize + 1, HeaderSize + TagSize - 1}
	for _, id := range ids {
		msg := mustSeal(t, payload(3*BufSize+7), id)
		for _, n := range short {
			if _, err := Open(password, msg[:n]); !errors.Is(err, ErrTooShort) {
				t.Errorf("id 0x%02x, cut to %d: %v, want ErrTooShort", id, n, err)
			}
		}
		cuts := []int{
			HeaderSize + TagSize,                     // one bare tag, as an empty message has
			HeaderSize + frag - 1, HeaderSize + frag, // inside, and at the end of, the first fragment
			HeaderSize + frag + 1, HeaderSize + frag + 16, // a stub of the second
			HeaderSize + 3*frag, // every full fragment, the last one gone
			len(msg) - TagSize - 1, len(msg) - TagSize, len(msg) - 1,
		}
		for _, n := range cuts {
			if got, err := Open(password, msg[:n]); !errors.Is(err, ErrDecrypt) || got != nil {
				t.Errorf("id 0x%02x, cut to %d of %d: %d bytes, %v; want ErrDecrypt", id, n, len(msg), len(got), err)
			}
		}
		body := msg[HeaderSize:]
		fragment := func(i int) []byte { return body[i*frag : min((i+1)*frag, len(body))] }
		splice := func(parts ...[]byte) []byte { return bytes.Join(append([][]byte{msg[:HeaderSize]}, parts...), nil) }
		altered := map[string][]byte{
			"one byte appended":  append(bytes.Clone(msg), 0),
			"last repeated":      splice(body, fragment(3)),
			"first two swapped":  splice(fragment(1), fragment(0), fragment(2), fragment(3)),
			"second dropped":     splice(fragment(0), fragment(2), fragment(3)),
			"last moved earlier": splice(fragment(0), fragment(3)),
		}
		for name, bad := range altered {
			if got, err := Open(password, bad); !errors.Is(err, ErrDecrypt) || got != nil {
				t.Errorf("id 0x%02x, %s: %d bytes, %v; want ErrDecrypt", id, name, len(got), err)
			}
		}
	}
}

// TestRefusalsCostNoDerivation: a body that is too short, of an unknown
// algorithm or too large is refused before the 64 MiB Argon2id runs.
func TestRefusalsCostNoDerivation(t *testing.T) {
	calls := cheapArgon2(t)
	big := mustSeal(t, payload(MaxPlaintext+1), Argon2idAESGCM)
	unknown := mustSeal(t, nil, Argon2idAESGCM)
	*calls = 0
	for _, c := range []struct {
		msg  []byte
		want error
	}{
		{unknown[:SealedSize(0)-1], ErrTooShort},
		{append(bytes.Clone(unknown[:SaltSize]), 0x03), ErrTooShort},
		{append(append(bytes.Clone(unknown[:SaltSize]), 0x03), unknown[SaltSize+1:]...), ErrUnknownAlgorithm},
		{append(append(bytes.Clone(unknown[:SaltSize]), 0xff), unknown[SaltSize+1:]...), ErrUnknownAlgorithm},
		{big, ErrTooLarge},
	} {
		if got, err := Open(password, c.msg); !errors.Is(err, c.want) || got != nil {
			t.Errorf("%d bytes: %d, %v; want %v", len(c.msg), len(got), err, c.want)
		}
	}
	if *calls != 0 {
		t.Errorf("refusals ran %d derivations", *calls)
	}
	if _, err := OpenLimit(password, big, MaxPlaintext+1); err != nil {
		t.Errorf("OpenLimit with room for it: %v", err)
	}
	if _, err := OpenLimit(password, big, -1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("negative limit: %v", err)
	}
	if _, err := SealWith(password, nil, 0x03); !errors.Is(err, ErrUnknownAlgorithm) {
		t.Errorf("SealWith(0x03): %v", err)
	}
}

// The tests named FromFacts check the format, not self-consistency: they
// build or read messages from the wire facts alone, with the parameters
// written out here rather than taken from the package, and run the real
// Argon2id (four times each; about 0.1 s a call).

// factsKey derives the key of a message from the wire facts.
func factsKey(t *testing.T, pw string, salt []byte, id byte) []byte {
	t.Helper()
	if id == 0x02 {
		key, err := pbkdf2.Key(sha256.New, pw, salt, 8192, 32)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	return argon2.IDKey([]byte(pw), salt, 1, 64*1024, 4, 32)
}

func factsStream(t *testing.T, key []byte, id byte) *sio.Stream {
	t.Helper()
	alg := sio.AES_256_GCM
	if id == 0x01 {
		alg = sio.ChaCha20Poly1305
	}
	stream, err := alg.Stream(key)
	if err != nil {
		t.Fatal(err)
	}
	return stream
}

func TestOpenReadsMessagesBuiltFromFacts(t *testing.T) {
	want := payload(2*BufSize + 5)
	for _, id := range ids {
		salt := bytes.Repeat([]byte{0x5a ^ id}, 32)
		nonce := []byte{1, 2, 3, 4, 5, 6, 7, id}
		var msg bytes.Buffer
		msg.Write(salt)
		msg.WriteByte(id)
		msg.Write(nonce)
		w := factsStream(t, factsKey(t, password, salt, id), id).EncryptWriter(&msg, nonce, nil)
		if _, err := w.Write(want); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := Open(password, msg.Bytes())
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("id 0x%02x: Open = %d bytes, %v", id, len(got), err)
		}
	}
}

func TestSealedMessagesReadFromFacts(t *testing.T) {
	want := payload(BufSize + 3)
	for _, id := range ids {
		msg := mustSeal(t, want, id)
		salt, gotID, nonce := msg[:32], msg[32], msg[33:41]
		if gotID != id {
			t.Fatalf("id byte 0x%02x, want 0x%02x", gotID, id)
		}
		var got bytes.Buffer
		r := factsStream(t, factsKey(t, password, salt, id), id).DecryptReader(bytes.NewReader(msg[41:]), nonce, nil)
		if _, err := r.WriteTo(&got); err != nil || !bytes.Equal(got.Bytes(), want) {
			t.Errorf("id 0x%02x: decrypted %d bytes, %v", id, got.Len(), err)
		}
	}
}

// The DARE framing, written out without sio from the package
// documentation's description: fragment i sealed under nonce ‖ le32(i)
// with associated data flag ‖ T.

func handAEAD(t *testing.T, key []byte) (aead cipher.AEAD, tag0 func(nonce []byte) []byte) {
	t.Helper()
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	aead, err = cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return aead, func(nonce []byte) []byte {
		n := append(bytes.Clone(nonce), 0, 0, 0, 0) // counter 0
		return aead.Seal(nil, n, nil, nil)
	}
}

func handSeal(t *testing.T, key, nonce, plaintext []byte) []byte {
	aead, tag0 := handAEAD(t, key)
	var out []byte
	for i := uint32(1); ; i++ {
		piece := plaintext[:min(len(plaintext), 16384)]
		plaintext = plaintext[len(piece):]
		flag := byte(0x00)
		if len(plaintext) == 0 {
			flag = 0x80
		}
		n := binary.LittleEndian.AppendUint32(bytes.Clone(nonce), i)
		out = aead.Seal(out, n, piece, append([]byte{flag}, tag0(nonce)...))
		if flag == 0x80 {
			return out
		}
	}
}

func handOpen(t *testing.T, key, nonce, stream []byte) ([]byte, error) {
	aead, tag0 := handAEAD(t, key)
	var out []byte
	for i := uint32(1); ; i++ {
		frag := stream[:min(len(stream), 16384+16)]
		stream = stream[len(frag):]
		flag := byte(0x00)
		if len(stream) == 0 {
			flag = 0x80
		}
		n := binary.LittleEndian.AppendUint32(bytes.Clone(nonce), i)
		var err error
		if out, err = aead.Open(out, n, frag, append([]byte{flag}, tag0(nonce)...)); err != nil {
			return nil, err
		}
		if flag == 0x80 {
			return out, nil
		}
	}
}

func TestFramingFromFacts(t *testing.T) {
	for _, n := range sizes {
		want := payload(n)
		salt, nonce := bytes.Repeat([]byte{7}, 32), []byte("8 bytes!")
		key := factsKey(t, password, salt, 0x02)
		msg := append(append(append(bytes.Clone(salt), 0x02), nonce...), handSeal(t, key, nonce, want)...)
		if got, err := Open(password, msg); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes framed by hand: Open = %d bytes, %v", n, len(got), err)
		}

		msg = mustSeal(t, want, PBKDF2AESGCM)
		got, err := handOpen(t, factsKey(t, password, msg[:32], 0x02), msg[33:41], msg[41:])
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes sealed: unframed by hand to %d bytes, %v", n, len(got), err)
		}
	}
}

func TestArgon2Bounded(t *testing.T) {
	var (
		mu            sync.Mutex
		running, peak int
	)
	orig := deriveKey
	t.Cleanup(func() { deriveKey = orig })
	deriveKey = func(pw string, salt []byte, id byte) ([]byte, error) {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return fakeKey([]byte(pw), salt, id), nil
	}
	var wg sync.WaitGroup
	for range 4 * MaxConcurrentArgon2 {
		wg.Go(func() {
			msg, err := SealWith(password, []byte("x"), Argon2idChaCha20Poly1305)
			if err == nil {
				_, err = Open(password, msg)
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if peak != MaxConcurrentArgon2 {
		t.Fatalf("at most %d derivations ran at once, want %d", peak, MaxConcurrentArgon2)
	}
}

func FuzzOpen(f *testing.F) {
	// With stand-ins for both key derivations an input costs microseconds:
	// what is fuzzed is the parsing and the stream, not x/crypto.
	cheapKDF(f)
	for _, n := range []int{0, 1, 100, BufSize, BufSize + 1} {
		msg, err := SealWith(password, payload(n), PBKDF2AESGCM)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(msg)
	}
	for _, id := range ids[:2] {
		msg, err := SealWith(password, payload(10), id)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(msg)
	}
	f.Add([]byte{})
	f.Add(make([]byte, SealedSize(0)))
	const limit = 2 * BufSize
	f.Fuzz(func(t *testing.T, msg []byte) {
		got, err := OpenLimit(password, msg, limit)
		if err != nil {
			if got != nil {
				t.Fatalf("%d bytes returned with %v", len(got), err)
			}
			for _, kind := range []error{ErrTooShort, ErrUnknownAlgorithm, ErrTooLarge, ErrDecrypt} {
				if errors.Is(err, kind) {
					return
				}
			}
			t.Fatalf("unclassified error %v", err)
		}
		if len(got) > limit || SealedSize(len(got)) != len(msg) {
			t.Fatalf("opened %d bytes from a %d-byte message (limit %d)", len(got), len(msg), limit)
		}
	})
}
