package sealed

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/secure-io/sio-go"
	"golang.org/x/crypto/argon2"
	"golang.org/x/sys/cpu"
)

// Algorithm ids, the byte after the salt. They name a key derivation and
// an AEAD together.
const (
	Argon2idAESGCM           byte = 0x00 // Argon2id key, AES-256-GCM stream
	Argon2idChaCha20Poly1305 byte = 0x01 // Argon2id key, ChaCha20-Poly1305 stream
	PBKDF2AESGCM             byte = 0x02 // PBKDF2-HMAC-SHA256 key, AES-256-GCM stream (madmin's FIPS mode)
)

// Sizes of the format, in bytes.
const (
	SaltSize   = 32                       // random per message
	NonceSize  = 8                        // random per message; the AEAD nonce adds a 4-byte counter
	HeaderSize = SaltSize + 1 + NonceSize // salt, id, nonce: 41
	TagSize    = 16                       // AEAD tag on every fragment
	BufSize    = sio.BufSize              // plaintext bytes per full fragment: 16 KiB
)

// MaxPlaintext is the most Open returns: admin documents are a few KiB,
// and a larger body is refused from its length alone. MaxSealed is the
// length of a message holding MaxPlaintext bytes, the most a handler
// needs to read before calling Open.
const (
	MaxPlaintext = 1 << 20
	MaxSealed    = HeaderSize + MaxPlaintext + TagSize*((MaxPlaintext+BufSize-1)/BufSize)
)

// MaxConcurrentArgon2 bounds the Argon2id derivations running at once in
// the process; each holds 64 MiB while it runs.
const MaxConcurrentArgon2 = 2

// Key derivation parameters, as madmin-go fixes them.
const (
	keySize          = 32
	argon2Time       = 1
	argon2MemoryKiB  = 64 * 1024
	argon2Threads    = 4
	pbkdf2Iterations = 8192
)

// Errors of Open and SealWith, to be tested with errors.Is.
var (
	// ErrTooShort: the message cannot hold a header and one tag.
	ErrTooShort = errors.New("sealed: message too short")
	// ErrUnknownAlgorithm: the id byte names no known algorithm.
	ErrUnknownAlgorithm = errors.New("sealed: unknown algorithm id")
	// ErrTooLarge: the plaintext could exceed the caller's bound.
	ErrTooLarge = errors.New("sealed: message too large")
	// ErrDecrypt: the password is wrong or the message was altered,
	// truncated or extended; the two cannot be told apart.
	ErrDecrypt = errors.New("sealed: wrong password or corrupted message")
)

// defaultID is what Seal uses: AES-GCM when the CPU has instructions for
// both AES and the carry-less multiply behind GCM's hash (then Go's
// AES-GCM is fast and constant-time), ChaCha20-Poly1305 otherwise.
// MinIO's test (sio-go's sioutil.NativeAES) also picks AES-GCM on ppc64le
// and on s390x with the AES facilities; those get ChaCha20-Poly1305 here,
// which mc reads as well.
var defaultID = func() byte {
	if cpu.X86.HasAES && cpu.X86.HasPCLMULQDQ || cpu.ARM64.HasAES && cpu.ARM64.HasPMULL {
		return Argon2idAESGCM
	}
	return Argon2idChaCha20Poly1305
}()

// argon2Slots holds one token per running Argon2id derivation.
var argon2Slots = make(chan struct{}, MaxConcurrentArgon2)

// deriveKey derives a message's key as its id says (a known one). Tests
// put a cheap stand-in in its place where the real cost buys nothing.
var deriveKey = func(password string, salt []byte, id byte) ([]byte, error) {
	if id == PBKDF2AESGCM {
		return pbkdf2.Key(sha256.New, password, salt, pbkdf2Iterations, keySize)
	}
	return argon2.IDKey([]byte(password), salt, argon2Time, argon2MemoryKiB, argon2Threads, keySize), nil
}

// SealedSize is the length of a sealed message holding n bytes of
// plaintext (n ≥ 0).
func SealedSize(n int) int {
	fragments := max(1, (n+BufSize-1)/BufSize)
	return HeaderSize + n + TagSize*fragments
}

// Seal encrypts plaintext under password, as madmin-go's EncryptData
// does: a fresh random salt and nonce, an Argon2id key and the AEAD the
// CPU runs best (see SealWith). It costs one Argon2id derivation (see the
// package documentation). The result is SealedSize(len(plaintext)) bytes.
func Seal(password string, plaintext []byte) ([]byte, error) {
	return SealWith(password, plaintext, defaultID)
}

// SealWith is Seal with the algorithm chosen by the caller: one of
// Argon2idAESGCM, Argon2idChaCha20Poly1305 or PBKDF2AESGCM. Any other id
// is ErrUnknownAlgorithm. There is no bound on the plaintext, since the
// sender is trusted with what it sends; the reader bounds it.
func SealWith(password string, plaintext []byte, id byte) ([]byte, error) {
	if !known(id) {
		return nil, fmt.Errorf("%w 0x%02x", ErrUnknownAlgorithm, id)
	}
	msg := make([]byte, HeaderSize, SealedSize(len(plaintext)))
	salt, nonce := msg[:SaltSize], msg[SaltSize+1:HeaderSize]
	rand.Read(salt) // crypto/rand never fails: it crashes the program instead
	msg[SaltSize] = id
	rand.Read(nonce)

	stream, err := newStream(password, salt, id)
	if err != nil {
		return nil, err
	}
	out := bytes.NewBuffer(msg)
	w := stream.EncryptWriter(out, nonce, nil)
	if _, err := w.Write(plaintext); err != nil {
		return nil, fmt.Errorf("sealed: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("sealed: %w", err)
	}
	return out.Bytes(), nil
}

// Open decrypts a message sealed under password with any of the three
// algorithms and returns its plaintext, at most MaxPlaintext bytes. Its
// errors wrap ErrTooShort, ErrUnknownAlgorithm, ErrTooLarge (all decided
// from the first 41 bytes and the length, before any key derivation) or
// ErrDecrypt. It costs one key derivation: an Argon2id one for ids 0x00
// and 0x01 (see the package documentation).
func Open(password string, sealed []byte) ([]byte, error) {
	return OpenLimit(password, sealed, MaxPlaintext)
}

// OpenLimit is Open returning at most limit bytes: for a client reading a
// response larger than MaxPlaintext, or a handler that expects less.
func OpenLimit(password string, sealed []byte, limit int) ([]byte, error) {
	if len(sealed) < SealedSize(0) {
		return nil, fmt.Errorf("%w: %d bytes, the least is %d", ErrTooShort, len(sealed), SealedSize(0))
	}
	salt, id, nonce := sealed[:SaltSize], sealed[SaltSize], sealed[SaltSize+1:HeaderSize]
	if !known(id) {
		return nil, fmt.Errorf("%w 0x%02x", ErrUnknownAlgorithm, id)
	}
	// The plaintext grows with the message (each fragment adds its tag),
	// so a message longer than the one carrying limit bytes carries more.
	// The first test keeps SealedSize(limit) from overflowing.
	if len(sealed)-SealedSize(0) > limit && len(sealed) > SealedSize(max(limit, 0)) {
		return nil, fmt.Errorf("%w: %d bytes may hold more than %d of plaintext", ErrTooLarge, len(sealed), limit)
	}

	stream, err := newStream(password, salt, id)
	if err != nil {
		return nil, err
	}
	body := sealed[HeaderSize:]
	out := bytes.NewBuffer(make([]byte, 0, len(body)-TagSize))
	if _, err := stream.DecryptReader(bytes.NewReader(body), nonce, nil).WriteTo(out); err != nil {
		// The stream is in memory: sio fails only on authentication
		// (NotAuthentic), or on a counter overflow no bounded
		// message reaches.
		return nil, fmt.Errorf("%w (%w)", ErrDecrypt, err)
	}
	return out.Bytes(), nil
}

func known(id byte) bool {
	return id == Argon2idAESGCM || id == Argon2idChaCha20Poly1305 || id == PBKDF2AESGCM
}

// newStream derives the key the id names and returns the id's DARE
// stream over it. id must be known.
func newStream(password string, salt []byte, id byte) (*sio.Stream, error) {
	if id != PBKDF2AESGCM {
		argon2Slots <- struct{}{} // wait for a slot: see MaxConcurrentArgon2
		defer func() { <-argon2Slots }()
	}
	key, err := deriveKey(password, salt, id)
	if err != nil {
		return nil, fmt.Errorf("sealed: %w", err)
	}
	alg := sio.AES_256_GCM
	if id == Argon2idChaCha20Poly1305 {
		alg = sio.ChaCha20Poly1305
	}
	stream, err := alg.Stream(key)
	if err != nil {
		return nil, fmt.Errorf("sealed: %w", err)
	}
	return stream, nil
}
