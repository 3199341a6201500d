package store

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"math/rand"
	"testing"
)

// shaReader hashes what it reads with SHA-256, as an upload's signature
// check does in front of the store.
type shaReader struct {
	r io.Reader
	h hash.Hash
}

func (s *shaReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.h.Write(p[:n])
	return n, err
}

// BenchmarkPutLarge puts 64 MiB objects from memory through a SHA-256
// reader (the edge's signature check), one writer at a time, so that the
// store's part of a large upload shows without a client beside it:
// reading, the ETag's MD5 and writing. Reported in MB/s of body.
//
//	go test -run '^$' -bench PutLarge -benchtime 8x ./store/
func BenchmarkPutLarge(b *testing.B) {
	const size = 64 << 20
	s, _ := newStoreOfSize(b, 2<<30)
	if err := s.CreateBucket("big"); err != nil {
		b.Fatal(err)
	}
	data := make([]byte, size)
	rand.New(rand.NewSource(1)).Read(data)
	b.SetBytes(size)
	for i := 0; b.Loop(); i++ {
		body := &shaReader{r: &chunkedSource{data: data}, h: sha256.New()}
		if _, err := s.PutObject("big", fmt.Sprintf("k%d", i%4), body, size, Meta{}); err != nil {
			b.Fatal(err)
		}
	}
}

// chunkedSource gives data in pieces of 64 KiB, as a socket does.
type chunkedSource struct{ data []byte }

func (c *chunkedSource) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 64<<10)], c.data)
	c.data = c.data[n:]
	return n, nil
}
