package identity

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// sealInfo names the purpose of the derived key, so that no other use of
// the root secret can ever produce the same key.
const sealInfo = "xfs3 identity secrets v1"

// sealer encrypts the secret keys kept in the identity document under a
// key derived from the root credentials.
type sealer struct {
	aead cipher.AEAD
}

// newSealer derives the sealing key: HKDF-SHA256 of the root secret key,
// salted with the root access key.
func newSealer(rootAccessKey, rootSecretKey string) (*sealer, error) {
	key, err := hkdf.Key(sha256.New, []byte(rootSecretKey), []byte(rootAccessKey), sealInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

// seal encrypts the secret of accessKey: base64 of nonce || ciphertext.
// The access key is the associated data, so a sealed secret moved to
// another entry of the document no longer opens.
func (s *sealer) seal(accessKey, secret string) string {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(secret)+s.aead.Overhead())
	rand.Read(nonce) // never fails
	out := s.aead.Seal(nonce, nonce, []byte(secret), []byte(accessKey))
	return base64.StdEncoding.EncodeToString(out)
}

// errSealed: a secret sealed under other root credentials (or damaged).
var errSealed = errors.New("sealed under other root credentials")

// open decrypts what seal made for accessKey.
func (s *sealer) open(accessKey, sealed string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil {
		return "", fmt.Errorf("secret of %q: %w", accessKey, err)
	}
	n := s.aead.NonceSize()
	if len(b) < n+s.aead.Overhead() {
		return "", fmt.Errorf("secret of %q: %d bytes: %w", accessKey, len(b), errSealed)
	}
	plain, err := s.aead.Open(nil, b[:n], b[n:], []byte(accessKey))
	if err != nil {
		return "", fmt.Errorf("secret of %q: %w", accessKey, errSealed)
	}
	return string(plain), nil
}
