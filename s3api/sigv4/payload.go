package sigv4

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
)

// SHA256Reader passes a body through while hashing it, and returns
// ErrContentSHA256Mismatch instead of io.EOF when the digest differs from
// the expected one.
type SHA256Reader struct {
	r    io.Reader
	h    hash.Hash
	want [sha256.Size]byte
	err  error // sticky final result
}

// NewSHA256Reader wraps r to check it against a 64-digit hex SHA-256.
func NewSHA256Reader(r io.Reader, hexSum string) (*SHA256Reader, error) {
	s := &SHA256Reader{r: r, h: sha256.New()}
	if len(hexSum) != 2*sha256.Size {
		return nil, malformed("payload hash %q", hexSum)
	}
	if _, err := hex.Decode(s.want[:], []byte(hexSum)); err != nil {
		return nil, malformed("payload hash %q", hexSum)
	}
	return s, nil
}

// Read implements io.Reader.
func (s *SHA256Reader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.r.Read(p)
	s.h.Write(p[:n])
	if err == io.EOF {
		var got [sha256.Size]byte
		s.h.Sum(got[:0])
		if got != s.want {
			err = fmt.Errorf("%w: body hashes to %x", ErrContentSHA256Mismatch, got)
		}
		s.err = err
	}
	return n, err
}
