package store

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestBodyClass: the smallest class that holds n bytes, every class up
// to chunkSize.
func TestBodyClass(t *testing.T) {
	for _, c := range []struct{ n, class int }{
		{0, 0}, {1, 0}, {4096, 0}, {4097, 1}, {8192, 1}, {128 << 10, 5}, {chunkSize - 1, bodyClasses - 1}, {chunkSize, bodyClasses - 1},
	} {
		if got := bodyClass(c.n); got != c.class {
			t.Errorf("bodyClass(%d) = %d, want %d", c.n, got, c.class)
		}
	}
}

// TestReadSmallBody: bodies of every class read back with their MD5
// through recycled buffers (each filled with the previous body first,
// so a stale byte would show); a short body or a failed read is refused
// and gives its buffer back.
func TestReadSmallBody(t *testing.T) {
	for round := range 3 {
		for _, size := range []int{0, 1, 4095, 4096, 4097, 100 << 10, chunkSize - 1} {
			want := bytes.Repeat([]byte{byte('a' + round), byte(size)}, size/2+1)[:size]
			body, err := readSmallBody(bytes.NewReader(want), int64(size))
			if err != nil {
				t.Fatalf("size %d: %v", size, err)
			}
			sum := md5.Sum(want)
			if !bytes.Equal(body.data, want) || body.etag != hex.EncodeToString(sum[:]) {
				t.Fatalf("size %d: body or ETag differ", size)
			}
			body.release()
			body.release() // a second release is a no-op
		}
	}
	if _, err := readSmallBody(strings.NewReader("abc"), 10); !errors.Is(err, ErrIncompleteBody) {
		t.Errorf("short body: %v", err)
	}
	// Bytes past the declared size are the verifying reader's to refuse;
	// here they are left unread.
	if body, err := readSmallBody(strings.NewReader("abcdef"), 3); err != nil || string(body.data) != "abc" {
		t.Errorf("longer body: %q, %v", body.data, err)
	}
	failing := io.MultiReader(strings.NewReader("ab"), iotestErr{})
	if _, err := readSmallBody(failing, 10); err == nil || errors.Is(err, ErrIncompleteBody) {
		t.Errorf("failed read: %v", err)
	}
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("connection reset") }
