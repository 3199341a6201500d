package store

import (
	"bytes"
	"testing"
)

// BenchmarkCompleteMultipart times CompleteMultipartUpload of 1 GiB in
// 100 parts: "move" with block-aligned parts (extents remapped), "copy"
// with a first part one byte longer, which sends every later part down
// the copy path. Uploading and flushing the parts is not timed; the time
// includes removing the 100 emptied part files. Run with
// -benchtime=1x: each iteration writes 1 GiB of parts.
func BenchmarkCompleteMultipart(b *testing.B) {
	const parts = 100
	const partSize = 10 << 20
	for _, bc := range []struct {
		name  string
		extra int
	}{{"move", 0}, {"copy", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			s, _ := newStoreOfSize(b, 4<<30)
			if err := s.CreateBucket("bench"); err != nil {
				b.Fatal(err)
			}
			body := bytes.Repeat([]byte("0123456789abcdef"), partSize/16)
			first := append(append([]byte(nil), body...), make([]byte, bc.extra)...)
			b.SetBytes(parts*partSize + int64(bc.extra))
			for b.Loop() {
				b.StopTimer()
				up, err := s.multipart().Create("bench", "big", Meta{})
				if err != nil {
					b.Fatal(err)
				}
				var list []CompletePart
				for n := 1; n <= parts; n++ {
					p := body
					if n == 1 {
						p = first
					}
					info, err := s.multipart().UploadPart("bench", "big", up.UploadID, n, bytes.NewReader(p), int64(len(p)), Checksums{})
					if err != nil {
						b.Fatal(err)
					}
					list = append(list, CompletePart{PartNumber: n, ETag: info.ETag})
				}
				// Flushed first, so that writeback of the parts does not
				// stall the timed metadata writes.
				if err := s.v.Sync(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				info, err := s.multipart().Complete("bench", "big", up.UploadID, list)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if info.Size != parts*partSize+int64(bc.extra) {
					b.Fatalf("size %d", info.Size)
				}
				if err := s.DeleteObject("bench", "big"); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
