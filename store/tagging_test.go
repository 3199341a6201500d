package store

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestTagRules(t *testing.T) {
	many := func(n int) []Tag {
		var tags []Tag
		for i := range n {
			tags = append(tags, Tag{fmt.Sprint("k", i), "v"})
		}
		return tags
	}
	for _, tc := range []struct {
		name string
		tags []Tag
		ok   bool
	}{
		{"none", nil, true},
		{"ten", many(MaxTags), true},
		{"eleven", many(MaxTags + 1), false},
		{"empty value", []Tag{{"k", ""}}, true},
		{"empty key", []Tag{{"", "v"}}, false},
		{"key of 128 runes", []Tag{{strings.Repeat("é", MaxTagKeyLen), "v"}}, true},
		{"key of 129 runes", []Tag{{strings.Repeat("k", MaxTagKeyLen+1), "v"}}, false},
		{"value of 256 runes", []Tag{{"k", strings.Repeat("ü", MaxTagValueLen)}}, true},
		{"value of 257 runes", []Tag{{"k", strings.Repeat("v", MaxTagValueLen+1)}}, false},
		{"duplicate key", []Tag{{"k", "1"}, {"k", "2"}}, false},
		{"bad UTF-8 key", []Tag{{"\xff", "v"}}, false},
		{"bad UTF-8 value", []Tag{{"k", "\xfe"}}, false},
	} {
		err := checkTags(tc.tags)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalidTag)) {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestTagEncoding(t *testing.T) {
	tags := []Tag{{"z", "last"}, {"a b", "x&y=z"}, {"é", ""}, {"k", "100%"}}
	enc := encodeTags(tags)
	if enc != "a+b=x%26y%3Dz&k=100%25&z=last&%C3%A9=" {
		t.Errorf("encoded %q", enc)
	}
	back, err := decodeTags(enc)
	if err != nil || !slices.Equal(back, sortedTags(tags)) {
		t.Errorf("decoded %v, %v", back, err)
	}
}

func TestObjectTagging(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	tags := []Tag{{"b", "2"}, {"a", "1"}}
	sorted := []Tag{{"a", "1"}, {"b", "2"}}
	info := put(t, s, "bkt", "obj", "body", Meta{Tags: tags})
	if !slices.Equal(info.Meta.Tags, sorted) {
		t.Errorf("put returns tags %v", info.Meta.Tags)
	}
	if _, got := get(t, s, "bkt", "obj"); !slices.Equal(got.Meta.Tags, sorted) {
		t.Errorf("get returns tags %v", got.Meta.Tags)
	}
	if got, err := s.GetObjectTagging("bkt", "obj"); err != nil || !slices.Equal(got, sorted) {
		t.Errorf("GetObjectTagging: %v, %v", got, err)
	}
	if v, err := s.v.Names().LookupPath("bkt/obj", false); err != nil {
		t.Fatal(err)
	} else if raw, err := s.v.Xattrs().Get(v, xattrTagging); err != nil || string(raw) != "a=1&b=2" {
		t.Errorf("stored %s = %q (%v)", xattrTagging, raw, err)
	}
	if err := s.PutObjectTagging("bkt", "obj", []Tag{{"only", "one"}}); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.HeadObject("bkt", "obj"); !slices.Equal(h.Meta.Tags, []Tag{{"only", "one"}}) {
		t.Errorf("after PutObjectTagging: %v", h.Meta.Tags)
	}
	if err := s.PutObjectTagging("bkt", "obj", []Tag{{"", "v"}}); !errors.Is(err, ErrInvalidTag) {
		t.Errorf("invalid tags: %v", err)
	}
	// COPY keeps tags, REPLACE takes the new meta's.
	if _, err := s.CopyObject("bkt", "obj", "bkt", "copy", nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetObjectTagging("bkt", "copy"); !slices.Equal(got, []Tag{{"only", "one"}}) {
		t.Errorf("copied tags %v", got)
	}
	if _, err := s.CopyObject("bkt", "obj", "bkt", "replaced", &Meta{Tags: []Tag{{"new", "tag"}}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetObjectTagging("bkt", "replaced"); !slices.Equal(got, []Tag{{"new", "tag"}}) {
		t.Errorf("replaced tags %v", got)
	}
	for _, del := range []func() error{
		func() error { return s.DeleteObjectTagging("bkt", "obj") },
		func() error { return s.PutObjectTagging("bkt", "copy", nil) },
	} {
		if err := del(); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"obj", "copy"} {
		if got, err := s.GetObjectTagging("bkt", k); err != nil || len(got) != 0 {
			t.Errorf("%s after removing tags: %v, %v", k, got, err)
		}
	}
	if err := s.DeleteObjectTagging("bkt", "obj"); err != nil {
		t.Errorf("deleting no tags: %v", err)
	}
	// Folder markers carry tags too; missing objects give ErrNoSuchKey.
	put(t, s, "bkt", "dir/", "", Meta{Tags: []Tag{{"f", "1"}}})
	if got, err := s.GetObjectTagging("bkt", "dir/"); err != nil || !slices.Equal(got, []Tag{{"f", "1"}}) {
		t.Errorf("folder marker tags: %v, %v", got, err)
	}
	for _, call := range []func() error{
		func() error { _, err := s.GetObjectTagging("bkt", "nope"); return err },
		func() error { return s.PutObjectTagging("bkt", "nope", sorted) },
		func() error { return s.DeleteObjectTagging("bkt", "nope") },
	} {
		if err := call(); !errors.Is(err, ErrNoSuchKey) {
			t.Errorf("missing object: %v", err)
		}
	}
	if _, err := s.PutObject("bkt", "bad", strings.NewReader(""), 0, Meta{Tags: []Tag{{"k", "1"}, {"k", "1"}}}); !errors.Is(err, ErrInvalidTag) {
		t.Errorf("put with invalid tags: %v", err)
	}
}

func TestChecksumsStored(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	sums := Checksums{CRC32: "NhCmhg==", SHA256: "LCa0a2j/xo/5m0U8HTBBNBNCLXBkg7+g+YpeiGJm564="}
	put(t, s, "bkt", "obj", "foo", Meta{Checksums: sums})
	_, info := get(t, s, "bkt", "obj")
	if info.Meta.Checksums != sums {
		t.Errorf("get returns %+v", info.Meta.Checksums)
	}
	ino, _ := s.v.Names().LookupPath("bkt/obj", false)
	list, _ := s.v.Xattrs().List(ino)
	var names []string
	for _, x := range list {
		if strings.HasPrefix(x.FullName(), xattrChecksum) {
			names = append(names, x.FullName())
		}
	}
	slices.Sort(names)
	if want := []string{xattrChecksum + "crc32", xattrChecksum + "sha256"}; !slices.Equal(names, want) {
		t.Errorf("checksum xattrs %v, want %v", names, want)
	}
	// A copy has the same content: its checksums stay, also with new meta.
	if _, err := s.CopyObject("bkt", "obj", "bkt", "copy", &Meta{ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.HeadObject("bkt", "copy"); h.Meta.Checksums != sums {
		t.Errorf("copy has %+v", h.Meta.Checksums)
	}
}

// reportingReader learns its checksum only at the end, as a reader of an
// aws-chunked body with a trailer does.
type reportingReader struct {
	io.Reader
	done bool
	sum  Checksums
}

func (r *reportingReader) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	if err == io.EOF {
		r.done = true
	}
	return n, err
}

func (r *reportingReader) Checksums() Checksums {
	if !r.done {
		return Checksums{}
	}
	return r.sum
}

// TestChecksumReporterStored: checksums a reader reports after its end are
// stored with objects and parts, replacing those given up front.
func TestChecksumReporterStored(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("sums"); err != nil {
		t.Fatal(err)
	}
	late := Checksums{CRC32C: "late+crc32c=="}
	r := &reportingReader{Reader: strings.NewReader("body"), sum: late}
	if _, err := s.PutObject("sums", "obj", r, 4, Meta{Checksums: Checksums{SHA1: "early"}}); err != nil {
		t.Fatal(err)
	}
	info, err := s.HeadObject("sums", "obj")
	if err != nil || info.Meta.Checksums != late {
		t.Errorf("stored checksums %+v (%v), want %+v", info.Meta.Checksums, err, late)
	}
	up, err := s.multipart().Create("sums", "mp", Meta{})
	if err != nil {
		t.Fatal(err)
	}
	r = &reportingReader{Reader: strings.NewReader("part"), sum: late}
	p, err := s.multipart().UploadPart("sums", "mp", up.UploadID, 1, r, 4, Checksums{})
	if err != nil || p.Checksums != late {
		t.Fatalf("part checksums %+v (%v), want %+v", p.Checksums, err, late)
	}
	parts, err := s.multipart().ListParts("sums", "mp", up.UploadID, ListPartsOptions{})
	if err != nil || len(parts.Parts) != 1 || parts.Parts[0].Checksums != late {
		t.Errorf("listed part: %+v (%v)", parts.Parts, err)
	}
}
