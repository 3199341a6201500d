package store

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// uploadParts creates an upload of key and uploads bodies as parts 1..n.
func uploadParts(t *testing.T, s *Store, bucket, key string, meta Meta, bodies ...[]byte) (UploadInfo, []CompletePart) {
	t.Helper()
	up, err := s.multipart().Create(bucket, key, meta)
	if err != nil {
		t.Fatal(err)
	}
	var parts []CompletePart
	for i, b := range bodies {
		p, err := s.multipart().UploadPart(bucket, key, up.UploadID, i+1, bytes.NewReader(b), int64(len(b)), Checksums{})
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		if sum := md5.Sum(b); p.ETag != hex.EncodeToString(sum[:]) || p.Size != int64(len(b)) {
			t.Fatalf("part %d: %+v", i+1, p)
		}
		parts = append(parts, CompletePart{PartNumber: i + 1, ETag: `"` + p.ETag + `"`})
	}
	return up, parts
}

// multipartETag is S3's ETag of an object uploaded in these parts.
func multipartETag(bodies ...[]byte) string {
	h := md5.New()
	for _, b := range bodies {
		sum := md5.Sum(b)
		h.Write(sum[:])
	}
	return fmt.Sprintf("%x-%d", h.Sum(nil), len(bodies))
}

// noStaging fails when .xfs3/tmp holds anything but its empty staging
// directories.
func noStaging(t *testing.T, s *Store) {
	t.Helper()
	if ents := stagedEntries(t, s); len(ents) > 0 {
		t.Errorf("staging directories hold %d entries: %v", len(ents), ents)
	}
}

// stagedEntries lists what .xfs3/tmp holds besides its staging
// directories, and what those hold.
func stagedEntries(t *testing.T, s *Store) []xfs.DirEntry {
	t.Helper()
	ents, err := s.v.Names().ReadDir(s.tmp)
	if err != nil {
		t.Fatal(err)
	}
	var out []xfs.DirEntry
	for _, e := range ents {
		if !slices.Contains(s.staging[:], e.Ino) {
			out = append(out, e)
		}
	}
	for _, d := range s.staging {
		in, err := s.v.Names().ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, in...)
	}
	return out
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	rng.Read(b)
	return b
}

func TestMultipartErrors(t *testing.T) {
	s, _ := newTestStore(t)
	s.minPart = 16 << 10
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	big, small := randomBytes(rng, 16<<10), randomBytes(rng, 100)
	up, good := uploadParts(t, s, "bkt", "k", Meta{}, big, small, big)
	for _, tc := range []struct {
		name   string
		bucket string
		key    string
		id     string
		parts  []CompletePart
		err    error
	}{
		{"unknown upload", "bkt", "k", "nope", good, ErrNoSuchUpload},
		{"other key", "bkt", "other", up.UploadID, good, ErrNoSuchUpload},
		{"no bucket", "nobucket", "k", up.UploadID, good, ErrNoSuchBucket},
		{"no parts", "bkt", "k", up.UploadID, nil, ErrInvalidPart},
		{"descending", "bkt", "k", up.UploadID, []CompletePart{good[1], good[0]}, ErrInvalidPartOrder},
		{"repeated", "bkt", "k", up.UploadID, []CompletePart{good[0], good[0]}, ErrInvalidPartOrder},
		{"missing part", "bkt", "k", up.UploadID, []CompletePart{good[0], {PartNumber: 7, ETag: good[0].ETag}}, ErrInvalidPart},
		{"wrong etag", "bkt", "k", up.UploadID, []CompletePart{good[0], {PartNumber: 2, ETag: good[0].ETag}}, ErrInvalidPart},
		{"part number 0", "bkt", "k", up.UploadID, []CompletePart{{PartNumber: 0, ETag: good[0].ETag}}, ErrInvalidPart},
		{"small middle part", "bkt", "k", up.UploadID, good, ErrEntityTooSmall},
	} {
		if _, err := s.multipart().Complete(tc.bucket, tc.key, tc.id, tc.parts); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	for _, tc := range []struct {
		name string
		err  error
		call func() error
	}{
		{"create empty key", ErrInvalidKey, func() error { _, err := s.multipart().Create("bkt", "", Meta{}); return err }},
		{"create no bucket", ErrNoSuchBucket, func() error { _, err := s.multipart().Create("nobucket", "k", Meta{}); return err }},
		{"create bad tags", ErrInvalidTag, func() error {
			_, err := s.multipart().Create("bkt", "k", Meta{Tags: []Tag{{"a", "1"}, {"a", "2"}}})
			return err
		}},
		{"part 0", ErrInvalidPart, func() error {
			_, err := s.multipart().UploadPart("bkt", "k", up.UploadID, 0, strings.NewReader("x"), 1, Checksums{})
			return err
		}},
		{"part 10001", ErrInvalidPart, func() error {
			_, err := s.multipart().UploadPart("bkt", "k", up.UploadID, MaxPartNumber+1, strings.NewReader("x"), 1, Checksums{})
			return err
		}},
		{"part too large", ErrEntityTooLarge, func() error {
			_, err := s.multipart().UploadPart("bkt", "k", up.UploadID, 1, strings.NewReader("x"), MaxPartSize+1, Checksums{})
			return err
		}},
		{"part short body", ErrIncompleteBody, func() error {
			_, err := s.multipart().UploadPart("bkt", "k", up.UploadID, 1, strings.NewReader("x"), 2, Checksums{})
			return err
		}},
		{"part of unknown upload", ErrNoSuchUpload, func() error {
			_, err := s.multipart().UploadPart("bkt", "k", "nope", 1, strings.NewReader("x"), 1, Checksums{})
			return err
		}},
		{"abort unknown", ErrNoSuchUpload, func() error { return s.multipart().Abort("bkt", "k", "nope") }},
		{"list parts unknown", ErrNoSuchUpload, func() error {
			_, err := s.multipart().ListParts("bkt", "k", "nope", ListPartsOptions{})
			return err
		}},
		{"list uploads no bucket", ErrNoSuchBucket, func() error {
			_, err := s.multipart().List("nobucket", ListUploadsOptions{})
			return err
		}},
	} {
		if err := tc.call(); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	// The failed calls changed nothing: the upload completes.
	good = []CompletePart{good[0], {PartNumber: 3, ETag: strings.Trim(good[2].ETag, `"`)}}
	info, err := s.multipart().Complete("bkt", "k", up.UploadID, good)
	if err != nil {
		t.Fatal(err)
	}
	if info.ETag != multipartETag(big, big) || info.Size != int64(2*len(big)) {
		t.Errorf("completed: %+v", info)
	}
	again, err := s.multipart().Complete("bkt", "k", up.UploadID, good)
	if err != nil || again.ETag != info.ETag || again.Size != info.Size || !again.LastModified.Equal(info.LastModified) {
		t.Errorf("complete twice: %+v, %v; first %+v", again, err, info)
	}
	if err := s.DeleteObject("bkt", "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket("bkt"); err != nil {
		t.Errorf("delete the bucket once its upload completed: %v", err)
	}
	noStaging(t, s)
}

// TestMultipartObjectAndPrefix: an upload completes onto a key that
// became a prefix meanwhile, and onto a folder marker (content and all).
func TestMultipartObjectAndPrefix(t *testing.T) {
	s, _ := newTestStore(t)
	s.minPart = 8 << 10
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), 8<<10)
	for _, key := range []string{"a", "m/"} {
		up, parts := uploadParts(t, s, "bkt", key, Meta{}, body, body)
		put(t, s, "bkt", key+"/b", "child", Meta{})
		if _, err := s.multipart().Complete("bkt", key, up.UploadID, parts); err != nil {
			t.Fatalf("complete %q over a prefix: %v", key, err)
		}
		if got, _ := get(t, s, "bkt", key); got != string(body)+string(body) {
			t.Errorf("%q holds %d bytes", key, len(got))
		}
		if got, _ := get(t, s, "bkt", key+"/b"); got != "child" {
			t.Errorf("%q/b = %q", key, got)
		}
	}
}

// TestMultipartRandomized completes seeded random uploads whose parts are
// block aligned (moved) or not (every later part copied), replaces some
// parts, leaves others unused, and checks content, ETag, metadata and
// extent counts.
func TestMultipartRandomized(t *testing.T) {
	s, _ := newTestStore(t)
	s.minPart = 16 << 10
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	bs := s.v.Geometry().BlockSize
	rng := rand.New(rand.NewSource(42))
	partSize := func(last bool) int {
		switch k := rng.Intn(4); {
		case last && k == 0:
			return 1 + rng.Intn(3*bs) // short last part
		case k < 2:
			return int(s.minPart) + rng.Intn(8)*bs // aligned: moved
		default:
			return int(s.minPart) + 1 + rng.Intn(3*bs) // unaligned
		}
	}
	moved, copied := 0, 0
	for round := 0; round < 12; round++ {
		key := fmt.Sprintf("dir%d/obj%d", round%3, round)
		meta := Meta{ContentType: "application/x-test", User: map[string]string{"round": fmt.Sprint(round)},
			Tags: []Tag{{"round", fmt.Sprint(round)}, {"kind", "multipart"}}}
		up, err := s.multipart().Create("bkt", key, meta)
		if err != nil {
			t.Fatal(err)
		}
		n := 1 + rng.Intn(6)
		bodies := map[int][]byte{}
		upload := func(num int, last bool) {
			b := randomBytes(rng, partSize(last))
			if _, err := s.multipart().UploadPart("bkt", key, up.UploadID, num, bytes.NewReader(b), int64(len(b)), Checksums{}); err != nil {
				t.Fatal(err)
			}
			bodies[num] = b
		}
		// Part numbers with gaps, uploaded out of order, some twice.
		nums := rng.Perm(3 * n)[:n]
		for i, num := range nums {
			nums[i] = num + 1
		}
		for _, num := range nums {
			upload(num, false)
		}
		for _, num := range nums {
			if rng.Intn(3) == 0 {
				upload(num, false) // replaced
			}
		}
		sorted := append([]int(nil), nums...)
		for i := range sorted {
			for j := i + 1; j < len(sorted); j++ {
				if sorted[j] < sorted[i] {
					sorted[i], sorted[j] = sorted[j], sorted[i]
				}
			}
		}
		used := sorted
		if len(used) > 1 && rng.Intn(3) == 0 {
			used = used[:len(used)-1] // the last uploaded part stays unused
		}
		upload(used[len(used)-1], true)
		var parts []CompletePart
		var want []byte
		var ordered [][]byte
		for _, num := range used {
			sum := md5.Sum(bodies[num])
			parts = append(parts, CompletePart{PartNumber: num, ETag: hex.EncodeToString(sum[:])})
			if len(want)%bs == 0 {
				moved++
			} else {
				copied++
			}
			want = append(want, bodies[num]...)
			ordered = append(ordered, bodies[num])
		}
		info, err := s.multipart().Complete("bkt", key, up.UploadID, parts)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got, head := get(t, s, "bkt", key)
		if got != string(want) {
			t.Fatalf("round %d: object differs (%d bytes, want %d)", round, len(got), len(want))
		}
		if info.ETag != multipartETag(ordered...) || head.ETag != info.ETag || head.Size != int64(len(want)) {
			t.Errorf("round %d: ETag %s / %s, want %s", round, info.ETag, head.ETag, multipartETag(ordered...))
		}
		if !head.Meta.Equal(meta.clone()) {
			t.Errorf("round %d: meta %+v, want %+v", round, head.Meta, meta)
		}
	}
	t.Logf("%d parts moved, %d copied", moved, copied)
	if moved == 0 || copied == 0 {
		t.Errorf("want both paths: %d moved, %d copied", moved, copied)
	}
	res, err := s.multipart().List("bkt", ListUploadsOptions{})
	if err != nil || len(res.Uploads) != 0 {
		t.Errorf("uploads left: %+v, %v", res, err)
	}
	ents, _ := s.v.Names().ReadDir(s.upl)
	if len(ents) != 0 {
		t.Errorf("%d upload directories left", len(ents))
	}
	noStaging(t, s)
}

// TestMultipartMovesExtents: aligned parts end up in the object without
// a copy (the parts' blocks, and no more, belong to the object) and a
// 5 MiB + 1 byte middle part sends the rest down the copy path.
func TestMultipartMovesExtents(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(9))
	a, b, c := randomBytes(rng, MinPartSize), randomBytes(rng, MinPartSize+1), randomBytes(rng, 12345)
	statfs := func() uint64 {
		st, err := s.v.Space().Statfs()
		if err != nil {
			t.Fatal(err)
		}
		return st.FreeBlocks
	}
	up, parts := uploadParts(t, s, "bkt", "aligned", Meta{}, a, a)
	before := statfs()
	if _, err := s.multipart().Complete("bkt", "aligned", up.UploadID, parts); err != nil {
		t.Fatal(err)
	}
	if after := statfs(); after < before {
		t.Errorf("moving aligned parts used %d blocks", before-after)
	}
	up, parts = uploadParts(t, s, "bkt", "mixed", Meta{}, a, b, a, c)
	if _, err := s.multipart().Complete("bkt", "mixed", up.UploadID, parts); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][][]byte{"aligned": {a, a}, "mixed": {a, b, a, c}} {
		got, info := get(t, s, "bkt", key)
		if got != string(bytes.Join(want, nil)) || info.ETag != multipartETag(want...) {
			t.Errorf("%s: wrong content or ETag %s", key, info.ETag)
		}
	}
}

func TestMultipartAbortAndRestart(t *testing.T) {
	s, img := newTestStore(t)
	s.minPart = 8 << 10
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("p"), 8<<10)
	gone, _ := uploadParts(t, s, "bkt", "gone", Meta{}, body)
	kept, parts := uploadParts(t, s, "bkt", "kept", Meta{ContentType: "text/plain", Tags: []Tag{{"t", "v"}}}, body, body[:10])
	if err := s.multipart().Abort("bkt", "gone", gone.UploadID); err != nil {
		t.Fatal(err)
	}
	if err := s.multipart().Abort("bkt", "gone", gone.UploadID); !errors.Is(err, ErrNoSuchUpload) {
		t.Errorf("abort twice: %v", err)
	}
	if _, err := s.multipart().UploadPart("bkt", "gone", gone.UploadID, 2, bytes.NewReader(body), int64(len(body)), Checksums{}); !errors.Is(err, ErrNoSuchUpload) {
		t.Errorf("part of an aborted upload: %v", err)
	}
	// A staging leftover (a crash mid-PUT) goes on reopen; uploads stay.
	for _, d := range []format.Ino{s.tmp, s.staging[3]} {
		if _, err := s.v.Names().Create(d, "leftover", fileAttrs); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.minPart = 8 << 10
	noStaging(t, s)
	res, err := s.multipart().List("bkt", ListUploadsOptions{})
	if err != nil || len(res.Uploads) != 1 {
		t.Fatalf("after reopen: %+v, %v", res, err)
	}
	u := res.Uploads[0]
	if u.UploadID != kept.UploadID || u.Key != "kept" || !u.Initiated.Equal(kept.Initiated) || !u.Meta.Equal(kept.Meta) {
		t.Errorf("reloaded upload %+v, want %+v", u, kept)
	}
	info, err := s.multipart().Complete("bkt", "kept", kept.UploadID, parts)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != int64(len(body)+10) {
		t.Errorf("size %d", info.Size)
	}
	if err := s.DeleteObject("bkt", "kept"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket("bkt"); err != nil {
		t.Error(err)
	}
}

func TestListParts(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	up, err := s.multipart().Create("bkt", "k", Meta{})
	if err != nil {
		t.Fatal(err)
	}
	sums := Checksums{CRC32: "AAAAAA==", SHA256: "x"}
	var want []int
	for n := 1; n <= 23; n += 2 {
		body := strings.Repeat("z", n)
		if _, err := s.multipart().UploadPart("bkt", "k", up.UploadID, n, strings.NewReader(body), -1, sums); err != nil {
			t.Fatal(err)
		}
		want = append(want, n)
	}
	var got []int
	marker := 0
	for pages := 0; ; pages++ {
		res, err := s.multipart().ListParts("bkt", "k", up.UploadID, ListPartsOptions{PartNumberMarker: marker, MaxParts: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Parts {
			sum := md5.Sum([]byte(strings.Repeat("z", p.PartNumber)))
			if p.Size != int64(p.PartNumber) || p.ETag != hex.EncodeToString(sum[:]) || p.Checksums != sums || p.LastModified.IsZero() {
				t.Errorf("part %+v", p)
			}
			got = append(got, p.PartNumber)
		}
		if res.Upload.UploadID != up.UploadID {
			t.Errorf("page names upload %q", res.Upload.UploadID)
		}
		if !res.IsTruncated {
			if pages != 2 {
				t.Errorf("%d pages, want 3", pages+1)
			}
			break
		}
		marker = res.NextPartNumberMarker
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parts %v, want %v", got, want)
	}
}

func TestListMultipartUploads(t *testing.T) {
	s, _ := newTestStore(t)
	for _, b := range []string{"bkt", "other"} {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	keys := []string{"a", "b/1", "b/2", "b/2", "c", "c", "c", "d/x/y", "e"}
	ids := map[string][]string{}
	for _, k := range keys {
		up, err := s.multipart().Create("bkt", k, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		ids[k] = append(ids[k], up.UploadID)
	}
	if _, err := s.multipart().Create("other", "a", Meta{}); err != nil {
		t.Fatal(err)
	}
	// pages lists every page as "key#n" (the n-th upload of key) and
	// "prefix/" entries.
	pages := func(opt ListUploadsOptions) []string {
		var out []string
		for range 20 {
			res, err := s.multipart().List("bkt", opt)
			if err != nil {
				t.Fatal(err)
			}
			var page []string
			for _, u := range res.Uploads {
				n := -1
				for i, id := range ids[u.Key] {
					if id == u.UploadID {
						n = i
					}
				}
				page = append(page, fmt.Sprintf("%s#%d", u.Key, n))
			}
			page = append(page, res.CommonPrefixes...)
			out = append(out, strings.Join(page, ","))
			if !res.IsTruncated {
				return out
			}
			opt.KeyMarker, opt.UploadIDMarker = res.NextKeyMarker, res.NextUploadIDMarker
		}
		t.Fatal("listing does not end")
		return nil
	}
	for _, tc := range []struct {
		opt  ListUploadsOptions
		want []string
	}{
		{ListUploadsOptions{}, []string{"a#0,b/1#0,b/2#0,b/2#1,c#0,c#1,c#2,d/x/y#0,e#0"}},
		{ListUploadsOptions{MaxUploads: 2}, []string{"a#0,b/1#0", "b/2#0,b/2#1", "c#0,c#1", "c#2,d/x/y#0", "e#0"}},
		{ListUploadsOptions{Delimiter: "/"}, []string{"a#0,c#0,c#1,c#2,e#0,b/,d/"}},
		{ListUploadsOptions{Delimiter: "/", MaxUploads: 2}, []string{"a#0,b/", "c#0,c#1", "c#2,d/", "e#0"}},
		{ListUploadsOptions{Prefix: "b/"}, []string{"b/1#0,b/2#0,b/2#1"}},
		{ListUploadsOptions{Prefix: "d/", Delimiter: "/"}, []string{"d/x/"}},
		{ListUploadsOptions{KeyMarker: "c"}, []string{"d/x/y#0,e#0"}},
		{ListUploadsOptions{KeyMarker: "c", UploadIDMarker: ids["c"][0]}, []string{"c#1,c#2,d/x/y#0,e#0"}},
		{ListUploadsOptions{KeyMarker: "b/", Delimiter: "/"}, []string{"c#0,c#1,c#2,e#0,d/"}},
	} {
		if got := pages(tc.opt); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%+v:\n got %q\nwant %q", tc.opt, got, tc.want)
		}
	}
}

// failingReader gives its bytes and then err, with the final bytes or
// after them.
type failingReader struct {
	data     []byte
	err      error
	withData bool // err comes with the final bytes (n > 0)
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	if len(r.data) == 0 && r.withData {
		return n, r.err
	}
	return n, nil
}

// TestReaderErrorAbandonsWrite: a reader error, even one that comes with
// the final bytes or only where EOF was due, stores nothing and leaves
// nothing behind, for PutObject and UploadPart alike.
func TestReaderErrorAbandonsWrite(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	up, err := s.multipart().Create("bkt", "part", Meta{})
	if err != nil {
		t.Fatal(err)
	}
	bad := fmt.Errorf("checksum mismatch: %w", ErrBadDigest)
	for _, size := range []int{0, 1000, chunkSize, chunkSize + 5} {
		for _, withData := range []bool{true, false} {
			for _, declared := range []bool{true, false} {
				name := fmt.Sprintf("size %d, error with data %v, size declared %v", size, withData, declared)
				body := bytes.Repeat([]byte("b"), size)
				n := int64(-1)
				if declared {
					n = int64(size)
				}
				_, err := s.PutObject("bkt", "obj", &failingReader{data: body, err: bad, withData: withData}, n, Meta{})
				if !errors.Is(err, ErrBadDigest) {
					t.Errorf("put, %s: %v", name, err)
				}
				if _, err := s.HeadObject("bkt", "obj"); !errors.Is(err, ErrNoSuchKey) {
					t.Errorf("put, %s: object exists (%v)", name, err)
				}
				_, err = s.multipart().UploadPart("bkt", "part", up.UploadID, 1, &failingReader{data: body, err: bad, withData: withData}, n, Checksums{})
				if !errors.Is(err, ErrBadDigest) {
					t.Errorf("part, %s: %v", name, err)
				}
				res, err := s.multipart().ListParts("bkt", "part", up.UploadID, ListPartsOptions{})
				if err != nil || len(res.Parts) != 0 {
					t.Errorf("part, %s: parts %+v (%v)", name, res.Parts, err)
				}
				noStaging(t, s)
			}
		}
	}
	// An earlier good part survives a failed replacement.
	if _, err := s.multipart().UploadPart("bkt", "part", up.UploadID, 1, strings.NewReader("good"), 4, Checksums{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.multipart().UploadPart("bkt", "part", up.UploadID, 1, &failingReader{data: []byte("evil"), err: bad, withData: true}, 4, Checksums{})
	if !errors.Is(err, ErrBadDigest) {
		t.Errorf("replacement: %v", err)
	}
	res, _ := s.multipart().ListParts("bkt", "part", up.UploadID, ListPartsOptions{})
	if len(res.Parts) != 1 || res.Parts[0].Size != 4 || res.Parts[0].ETag != fmt.Sprintf("%x", md5.Sum([]byte("good"))) {
		t.Errorf("after a failed replacement: %+v", res.Parts)
	}
	// Bytes past the declared size are not read; EOF after them is fine.
	put(t, s, "bkt", "exact", "abc", Meta{})
	if _, err := s.PutObject("bkt", "x", io.MultiReader(strings.NewReader("abc"), strings.NewReader("def")), 3, Meta{}); err != nil {
		t.Errorf("extra bytes: %v", err)
	}
}

// TestMultipartConcurrent uploads parts from several goroutines, some to
// the same part number, lists meanwhile, then races completion against
// abort: exactly one of them wins and the winner's outcome holds.
func TestMultipartConcurrent(t *testing.T) {
	s, _ := newTestStore(t)
	s.minPart = 8 << 10
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	up, err := s.multipart().Create("bkt", "k", Meta{})
	if err != nil {
		t.Fatal(err)
	}
	body := func(part, writer int) []byte {
		return bytes.Repeat([]byte{byte('a' + writer)}, 8<<10+part) // unaligned: copy path too
	}
	errs := make(chan error, 8)
	for w := range 4 {
		go func() {
			for part := 1; part <= 6; part++ {
				b := body(part, w)
				if _, err := s.multipart().UploadPart("bkt", "k", up.UploadID, part, bytes.NewReader(b), int64(len(b)), Checksums{}); err != nil {
					errs <- err
					return
				}
				if _, err := s.multipart().ListParts("bkt", "k", up.UploadID, ListPartsOptions{}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.multipart().ListParts("bkt", "k", up.UploadID, ListPartsOptions{})
	if err != nil || len(res.Parts) != 6 {
		t.Fatalf("parts %+v, %v", res.Parts, err)
	}
	var parts []CompletePart
	var want []byte
	for _, p := range res.Parts {
		parts = append(parts, CompletePart{PartNumber: p.PartNumber, ETag: p.ETag})
		for w := range 4 { // whichever writer's part won
			if b := body(p.PartNumber, w); md5Hex(b) == p.ETag {
				want = append(want, b...)
			}
		}
	}
	var completed, aborted error
	finished := make(chan struct{}, 2)
	go func() {
		_, completed = s.multipart().Complete("bkt", "k", up.UploadID, parts)
		finished <- struct{}{}
	}()
	go func() {
		aborted = s.multipart().Abort("bkt", "k", up.UploadID)
		finished <- struct{}{}
	}()
	<-finished
	<-finished
	switch {
	case completed == nil && errors.Is(aborted, ErrNoSuchUpload):
		if got, _ := get(t, s, "bkt", "k"); got != string(want) {
			t.Errorf("completed object holds %d bytes, want %d", len(got), len(want))
		}
	case aborted == nil && errors.Is(completed, ErrNoSuchUpload):
		if _, err := s.HeadObject("bkt", "k"); !errors.Is(err, ErrNoSuchKey) {
			t.Errorf("aborted upload left an object: %v", err)
		}
	default:
		t.Errorf("complete: %v, abort: %v; want exactly one to succeed", completed, aborted)
	}
	noStaging(t, s)
}

func md5Hex(p []byte) string {
	sum := md5.Sum(p)
	return hex.EncodeToString(sum[:])
}

// TestUploadIDsAreSafeArguments: upload IDs are lowercase hex, so a
// command line never takes one for an option (a base64 ID beginning with
// '-' broke `aws s3api upload-part --upload-id ID`).
func TestUploadIDsAreSafeArguments(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := newUploadID()
		if len(id) != 48 || strings.Trim(id, "0123456789abcdef") != "" || seen[id] {
			t.Fatalf("upload ID %q", id)
		}
		seen[id] = true
	}
}
