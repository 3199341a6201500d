package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestCompletedParts: a completed object knows its parts (numbers as
// completed, gaps kept, offsets adding up); a PUT object has none; a
// list too long for one xattr spills into more, and the volume stays
// clean for xfs_repair.
func TestCompletedParts(t *testing.T) {
	s, img := newTestStore(t)
	s.minPart = 1
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(3))
	up, err := s.multipart().Create("bkt", "many", Meta{})
	if err != nil {
		t.Fatal(err)
	}
	// Parts 2, 4, 6, ...: more than one page of the parts record.
	const count = 600
	var parts []CompletePart
	var want []ObjectPart
	var content bytes.Buffer
	for i := range count {
		body := randomBytes(rng, 1+i%97+rng.Intn(20))
		n := 2 * (i + 1)
		p, err := s.multipart().UploadPart("bkt", "many", up.UploadID, n, bytes.NewReader(body), int64(len(body)), Checksums{})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, CompletePart{PartNumber: n, ETag: p.ETag})
		want = append(want, ObjectPart{PartNumber: n, Offset: int64(content.Len()), Size: int64(len(body)), ETag: strings.Trim(p.ETag, `"`)})
		content.Write(body)
	}
	if count <= partsPerPage {
		t.Fatalf("%d parts fit one page of %d: the test does not spill", count, partsPerPage)
	}
	info, err := s.multipart().Complete("bkt", "many", up.UploadID, parts)
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.GetObject("bkt", "many")
	if err != nil {
		t.Fatal(err)
	}
	got, err := o.Parts()
	o.Close()
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("parts: %v (%d of %d)", err, len(got), len(want))
	}
	if body, _ := get(t, s, "bkt", "many"); body != content.String() || info.Size != int64(content.Len()) {
		t.Fatalf("content differs")
	}

	put(t, s, "bkt", "plain", "whole", Meta{})
	o, err = s.GetObject("bkt", "plain")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := o.Parts(); err != nil || got != nil {
		t.Errorf("a PUT object has parts %v, %v", got, err)
	}
	o.Close()
	if _, err := o.Parts(); !errors.Is(err, ErrClosed) {
		t.Errorf("parts of a closed object: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// TestRepeatedCompletion: completing a finished upload again with the
// same parts answers the same object; any other list, another upload ID,
// or an object replaced since, gives ErrNoSuchUpload.
func TestRepeatedCompletion(t *testing.T) {
	s, _ := newTestStore(t)
	s.minPart = 4 << 10
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	a, b := bytes.Repeat([]byte("a"), 4<<10), []byte("tail")
	up, parts := uploadParts(t, s, "bkt", "k", Meta{ContentType: "text/x"}, a, b)
	first, err := s.multipart().Complete("bkt", "k", up.UploadID, parts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.multipart().Complete("bkt", "k", up.UploadID, parts)
	if err != nil {
		t.Fatal(err)
	}
	if again.ETag != first.ETag || again.Size != first.Size || !again.LastModified.Equal(first.LastModified) ||
		again.Meta.ContentType != "text/x" {
		t.Errorf("again %+v, first %+v", again, first)
	}
	unquoted := []CompletePart{{PartNumber: 1, ETag: strings.Trim(parts[0].ETag, `"`)}, {PartNumber: 2, ETag: strings.ToUpper(strings.Trim(parts[1].ETag, `"`))}}
	if _, err := s.multipart().Complete("bkt", "k", up.UploadID, unquoted); err != nil {
		t.Errorf("same parts, ETags unquoted and uppercase: %v", err)
	}
	for name, list := range map[string][]CompletePart{
		"one part":       parts[:1],
		"other number":   {parts[0], {PartNumber: 3, ETag: parts[1].ETag}},
		"other etag":     {parts[0], {PartNumber: 2, ETag: parts[0].ETag}},
		"malformed etag": {parts[0], {PartNumber: 2, ETag: "zz"}},
		"empty":          nil,
	} {
		if _, err := s.multipart().Complete("bkt", "k", up.UploadID, list); !errors.Is(err, ErrNoSuchUpload) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := s.multipart().Complete("bkt", "k", "0123", parts); !errors.Is(err, ErrNoSuchUpload) {
		t.Errorf("other upload ID: %v", err)
	}
	if _, err := s.multipart().Complete("bkt", "other", up.UploadID, parts); !errors.Is(err, ErrNoSuchUpload) {
		t.Errorf("other key: %v", err)
	}
	put(t, s, "bkt", "k", "replaced", Meta{})
	if _, err := s.multipart().Complete("bkt", "k", up.UploadID, parts); !errors.Is(err, ErrNoSuchUpload) {
		t.Errorf("after the object was replaced: %v", err)
	}
	if err := s.DeleteObject("bkt", "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.multipart().Complete("bkt", "k", up.UploadID, parts); !errors.Is(err, ErrNoSuchUpload) {
		t.Errorf("after the object was deleted: %v", err)
	}
}

// TestDeleteBucketAbortsUploads: a bucket with only uploads in progress
// is deleted and its uploads are gone; with an object as well it is not
// empty and the uploads stay.
func TestDeleteBucketAbortsUploads(t *testing.T) {
	s, _ := newTestStore(t)
	s.minPart = 1
	for _, b := range []string{"full", "pending"} {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	var pendingIDs []string
	for _, key := range []string{"x", "x", "d/y"} {
		up, _ := uploadParts(t, s, "pending", key, Meta{}, []byte("part one"))
		pendingIDs = append(pendingIDs, up.UploadID)
	}
	fullUp, _ := uploadParts(t, s, "full", "k", Meta{}, []byte("p"))
	put(t, s, "full", "obj", "o", Meta{})

	if err := s.DeleteBucket("full"); !errors.Is(err, ErrBucketNotEmpty) {
		t.Fatalf("bucket with an object and an upload: %v", err)
	}
	if _, err := s.multipart().ListParts("full", "k", fullUp.UploadID, ListPartsOptions{}); err != nil {
		t.Errorf("the upload of a bucket that was not deleted: %v", err)
	}
	if err := s.DeleteBucket("pending"); err != nil {
		t.Fatalf("bucket with only uploads: %v", err)
	}
	if _, err := s.HeadBucket("pending"); !errors.Is(err, ErrNoSuchBucket) {
		t.Errorf("deleted bucket: %v", err)
	}
	for _, id := range pendingIDs {
		if _, err := s.multipart().UploadPart("pending", "x", id, 2, strings.NewReader("z"), 1, Checksums{}); !errors.Is(err, ErrNoSuchBucket) && !errors.Is(err, ErrNoSuchUpload) {
			t.Errorf("upload %s of the deleted bucket: %v", id, err)
		}
	}
	// The upload directories are gone from the volume too.
	ents, err := s.v.Names().ReadDir(s.upl)
	if err != nil || len(ents) != 1 {
		t.Errorf("uploads directory holds %d entries (%v), want the other bucket's one", len(ents), err)
	}
	// A new bucket of the same name starts without them.
	if err := s.CreateBucket("pending"); err != nil {
		t.Fatal(err)
	}
	res, err := s.multipart().List("pending", ListUploadsOptions{})
	if err != nil || len(res.Uploads) != 0 {
		t.Errorf("recreated bucket lists uploads %v, %v", res.Uploads, err)
	}
	noStaging(t, s)
}

// TestDeleteBucketRacesUploads deletes and re-creates a bucket while
// other goroutines start, fill, complete and abort uploads into it: no
// deadlock (DeleteBucket takes upload locks before ns, as everyone does),
// and every call ends with success or one of the expected kinds.
func TestDeleteBucketRacesUploads(t *testing.T) {
	s, _ := newTestStore(t)
	s.minPart = 1
	if err := s.CreateBucket("race"); err != nil {
		t.Fatal(err)
	}
	expected := func(err error) bool {
		return err == nil || errors.Is(err, ErrNoSuchBucket) || errors.Is(err, ErrNoSuchUpload) ||
			errors.Is(err, ErrBucketNotEmpty) || errors.Is(err, ErrBucketExists)
	}
	done := make(chan struct{})
	errs := make(chan error, 16)
	for w := range 4 {
		go func() {
			defer func() { errs <- nil }()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				key := fmt.Sprintf("w%d/%d", w, i)
				up, err := s.multipart().Create("race", key, Meta{})
				if err != nil {
					if !expected(err) {
						errs <- err
					}
					continue
				}
				p, err := s.multipart().UploadPart("race", key, up.UploadID, 1, strings.NewReader("part"), 4, Checksums{})
				if err != nil {
					if !expected(err) {
						errs <- err
					}
					continue
				}
				if i%2 == 0 {
					_, err = s.multipart().Complete("race", key, up.UploadID, []CompletePart{{PartNumber: 1, ETag: p.ETag}})
					if err == nil {
						err = s.DeleteObject("race", key)
					}
				} else {
					err = s.multipart().Abort("race", key, up.UploadID)
				}
				if !expected(err) {
					errs <- err
				}
			}
		}()
	}
	deleted := 0
	for range 60 {
		if err := s.DeleteBucket("race"); err == nil {
			deleted++
		} else if !expected(err) {
			t.Error(err)
		}
		if err := s.CreateBucket("race"); !expected(err) {
			t.Error(err)
		}
	}
	close(done)
	for finished := 0; finished < 4; {
		if err := <-errs; err != nil {
			t.Error(err)
		} else {
			finished++
		}
	}
	if deleted == 0 {
		t.Error("DeleteBucket never succeeded")
	}
	noStaging(t, s)
}
