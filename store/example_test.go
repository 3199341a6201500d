package store_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// Embedded use: make a volume, store an object, read part of it back and
// list the bucket by "directory".
func Example() {
	dir, err := os.MkdirTemp("", "store-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	vol := filepath.Join(dir, "volume.xfs")
	if _, err := mkfs.Format(vol, mkfs.Options{Size: 256 << 20}); err != nil {
		log.Fatal(err)
	}
	s, err := store.Open(vol)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	if err := s.CreateBucket("photos"); err != nil {
		log.Fatal(err)
	}
	body := strings.NewReader("hello, world")
	info, err := s.PutObject("photos", "2024/hello.txt", body, int64(body.Len()),
		store.Meta{ContentType: "text/plain", User: map[string]string{"owner": "ann"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("etag", info.ETag)

	o, err := s.GetObject("photos", "2024/hello.txt")
	if err != nil {
		log.Fatal(err)
	}
	r, err := o.Range(7, 5)
	if err != nil {
		log.Fatal(err)
	}
	part, _ := io.ReadAll(r)
	o.Close()
	fmt.Printf("bytes 7-11 %q, owner %s\n", part, o.Info.Meta.User["owner"])

	page, err := s.ListObjects("photos", store.ListOptions{Delimiter: "/"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("prefixes", page.CommonPrefixes)
	// Output:
	// etag e4d7f1b4ed2e42d15898f4b27b019da4
	// bytes 7-11 "world", owner ann
	// prefixes [2024/]
}
