package s3api

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/xfs3/xfs3/store"
)

// BenchmarkListXML writes a page of 1000 keys as the handlers did before
// listxml.go (reflect: the conversion and encoding/xml through writeXML)
// and as they do now (hand: writeXMLDoc), for ListObjectsV2, ListObjects
// (with Owner) and ListObjectVersions; the store is not involved.
//
//	go test -run '^$' -bench ListXML -benchmem ./s3api/
func BenchmarkListXML(b *testing.B) {
	const keys = 1000
	o := owner{ID: ownerID(testAccessKey), DisplayName: testAccessKey}
	base := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	objects := make([]store.ObjectInfo, keys)
	for i := range objects {
		objects[i] = store.ObjectInfo{
			Key: fmt.Sprintf("bench/d%d/obj-%06d", i%10, i), Size: 4096,
			LastModified: base.Add(time.Duration(i) * time.Millisecond), ETag: "620f0b67a91f7f74151bc5be745b7110",
			VersionID: "null", IsLatest: true,
		}
	}
	q := listQuery{maxKeys: keys}
	page := store.ListResult{Objects: objects, IsTruncated: true, NextMarker: objects[keys-1].Key}
	docs := []struct {
		name string
		doc  interface {
			xmlDoc
			reference() any
		}
	}{
		{"v2", &objectListing{v2: true, bucket: "bench", q: q, page: page}},
		{"v1", &objectListing{bucket: "bench", q: q, owner: &o, page: page}},
		{"versions", &versionListing{bucket: "bench", q: q, owner: o, page: store.VersionListResult{
			Versions: objects, IsTruncated: true, NextKeyMarker: objects[keys-1].Key, NextVersionIDMarker: "null",
		}}},
	}
	for _, d := range docs {
		b.Run(d.name+"/reflect", func(b *testing.B) {
			w := &discardWriter{header: http.Header{}}
			for b.Loop() {
				writeXML(w, http.StatusOK, d.doc.reference())
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/key")
		})
		b.Run(d.name+"/hand", func(b *testing.B) {
			w := &discardWriter{header: http.Header{}}
			for b.Loop() {
				writeXMLDoc(w, http.StatusOK, d.doc)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/key")
		})
	}
}
