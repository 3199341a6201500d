package store

import (
	"bytes"
	"testing"
)

// BenchmarkListPage pages alone through the bucket of
// BenchmarkMixedReadsUnderPuts (2000 keys of 4 KiB in 20 directories),
// 100 keys a page: the CPU and allocations of one page without other
// load.
//
//	go test -run '^$' -bench ListPage -benchmem ./store/
func BenchmarkListPage(b *testing.B) {
	s, _ := newStoreOfSize(b, 1<<30)
	if err := s.CreateBucket("read"); err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat([]byte("r"), 4096)
	for i := range 2000 {
		if _, err := s.PutObject("read", mixedKey(i), bytes.NewReader(data), int64(len(data)), Meta{}); err != nil {
			b.Fatal(err)
		}
	}
	opt := ListOptions{MaxKeys: 100}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		page, err := s.ListObjects("read", opt)
		if err != nil {
			b.Fatal(err)
		}
		if len(page.Objects) != 100 {
			b.Fatalf("page of %d objects, want 100", len(page.Objects))
		}
		opt.StartAfter = page.NextMarker
		if !page.IsTruncated {
			opt.StartAfter = ""
		}
	}
}
