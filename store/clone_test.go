package store

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"io"
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

func md5hex(p []byte) string {
	h := md5.Sum(p)
	return hex.EncodeToString(h[:])
}

func readAll(t *testing.T, s *Store, bucket, key, id string) []byte {
	t.Helper()
	o, err := s.Versions().Get(bucket, key, id)
	if err != nil {
		t.Fatalf("get %s/%s %s: %v", bucket, key, id, err)
	}
	defer o.Close()
	b, err := io.ReadAll(o.Reader())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCopiesShareBlocks: CopyObject (across buckets, onto itself, from
// an old version) and UploadPartCopy (whole, an aligned range, an
// unaligned one) share the source's blocks where they can; every copy
// reads back its bytes after its source is gone, its ETag is the MD5 of
// its bytes, each bucket is charged for the blocks its objects map, and
// xfs_repair -n is clean.
func TestCopiesShareBlocks(t *testing.T) {
	s, img := newTestStore(t)
	if !s.v.Geometry().Reflink {
		t.Fatal("the store's volume has no reflink")
	}
	rng := rand.New(rand.NewSource(1))
	body := make([]byte, 11<<20+123)
	rng.Read(body)
	for _, b := range []string{"src", "dst", "ver"} {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Versions().SetState("ver", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	if err := s.Quotas().Set("dst", BucketQuota{HardBytes: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	shared := func() uint64 {
		st, err := s.v.Space().Shared()
		if err != nil {
			t.Fatal(err)
		}
		return st.SavedBlocks
	}
	blocks := uint64(len(body)+4095) / 4096
	if _, err := s.PutObject("src", "obj", bytes.NewReader(body), int64(len(body)), Meta{ContentType: "a/b"}); err != nil {
		t.Fatal(err)
	}
	before := shared()
	info, err := s.CopyObject("src", "obj", "dst", "copy", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := shared() - before; got != blocks {
		t.Errorf("a copy saved %d blocks, want %d", got, blocks)
	}
	if info.ETag != md5hex(body) || info.Meta.ContentType != "a/b" {
		t.Errorf("copy: ETag %s (want %s), content type %q", info.ETag, md5hex(body), info.Meta.ContentType)
	}
	usage, err := s.Quotas().Get("dst")
	if err != nil || usage.Bytes < uint64(len(body)) {
		t.Errorf("dst is charged %d bytes for a copy of %d (%v)", usage.Bytes, len(body), err)
	}
	// A copy onto itself with new metadata.
	if _, err := s.CopyObject("dst", "copy", "dst", "copy", &Meta{ContentType: "c/d"}); err != nil {
		t.Fatal(err)
	}
	// Versions: copies of an old version.
	v1, err := s.PutObject("ver", "k", bytes.NewReader(body), int64(len(body)), Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutObject("ver", "k", bytes.NewReader(body[:minClone]), minClone, Meta{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Versions().Copy("ver", "k", v1.VersionID, "dst", "from-version", nil); err != nil {
		t.Fatal(err)
	}
	// Parts: the whole object, an aligned range and an unaligned one.
	up, err := s.Uploads().Create("dst", "parts", Meta{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := s.GetObject("src", "obj")
	if err != nil {
		t.Fatal(err)
	}
	ranges := [][2]int64{{0, 5 << 20}, {5 << 20, 5 << 20}, {12345, 0}}
	ranges[2][1] = int64(len(body)) - ranges[2][0]
	var want []byte
	var parts []CompletePart
	before = shared()
	for i, r := range ranges {
		pi, err := s.Uploads().CopyPart("dst", "parts", up.UploadID, i+1, src, r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		chunk := body[r[0] : r[0]+r[1]]
		if pi.ETag != md5hex(chunk) || pi.Size != r[1] {
			t.Errorf("part %d: ETag %s size %d, want %s %d", i+1, pi.ETag, pi.Size, md5hex(chunk), r[1])
		}
		want = append(want, chunk...)
		parts = append(parts, CompletePart{PartNumber: i + 1, ETag: pi.ETag})
	}
	src.Close()
	if got := shared() - before; got != 10<<20/4096 {
		t.Errorf("the part copies saved %d blocks, want the two aligned ones' %d", got, 10<<20/4096)
	}
	// Completion moves the parts' extents, shared ones included.
	if _, err := s.Uploads().Complete("dst", "parts", up.UploadID, parts); err != nil {
		t.Fatal(err)
	}
	if o, err := s.GetObject("dst", "parts"); err != nil {
		t.Fatal(err)
	} else if st, _ := s.v.Stat(o.ino); st.Flags2&format.Diflag2Reflink == 0 {
		t.Errorf("the object completed from shared parts lacks the reflink flag (flags2 %#x)", st.Flags2)
	} else {
		o.Close()
	}
	// A copy of an object completed from parts: its ETag is the MD5 of
	// its bytes (read once), as a copy of bytes would give.
	mp, err := s.CopyObject("dst", "parts", "dst", "parts-copy", nil)
	if err != nil || mp.ETag != md5hex(want) {
		t.Errorf("copy of a multipart object: ETag %s, want %s (%v)", mp.ETag, md5hex(want), err)
	}
	// A copy asked for a checksum computes it.
	cs, err := s.CopyObject("src", "obj", "dst", "summed", &Meta{Checksums: Checksums{Algorithm: "CRC32"}})
	if err != nil || cs.Meta.Checksums.CRC32 == "" {
		t.Errorf("copy with a checksum: %+v, %v", cs.Meta.Checksums, err)
	}

	// The sources go; every copy keeps its bytes.
	if err := s.DeleteObject("src", "obj"); err != nil {
		t.Fatal(err)
	}
	for key, data := range map[string][]byte{"copy": body, "from-version": body, "parts": want, "parts-copy": want, "summed": body} {
		if got := readAll(t, s, "dst", key, ""); !bytes.Equal(got, data) {
			t.Errorf("dst/%s reads %d other bytes (want %d)", key, len(got), len(data))
		}
	}
	if got := readAll(t, s, "ver", "k", v1.VersionID); !bytes.Equal(got, body) {
		t.Errorf("the source version changed")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, img)
}
