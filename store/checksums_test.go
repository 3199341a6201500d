package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/store/checksum"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// checksummedParts uploads bodies as parts of an upload with checksum
// algorithm alg and type typ, each part with its checksum, and returns the
// upload and the Complete list with each part's checksum.
func checksummedParts(t *testing.T, s *Store, key string, alg *checksum.Algorithm, typ string, bodies ...[]byte) (UploadInfo, []CompletePart) {
	t.Helper()
	up, err := s.multipart().Create("bkt", key, Meta{Checksums: Checksums{Algorithm: alg.Header(), Type: typ}})
	if err != nil {
		t.Fatal(err)
	}
	var parts []CompletePart
	for i, b := range bodies {
		var sums Checksums
		sums.Set(alg, alg.Of(b))
		p, err := s.multipart().UploadPart("bkt", key, up.UploadID, i+1, bytes.NewReader(b), int64(len(b)), sums)
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		parts = append(parts, CompletePart{PartNumber: i + 1, ETag: p.ETag, Checksums: sums})
	}
	return up, parts
}

// TestMultipartChecksums completes random uploads of every algorithm and
// type and checks the object's checksum against one computed from the
// whole content (full object) or from the part digests (composite), and
// the parts record ObjectParts reads back (seeded).
func TestMultipartChecksums(t *testing.T) {
	s, _ := newTestStore(t)
	s.minPart = 8 << 10
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(14))
	for _, alg := range checksum.All {
		for _, typ := range []checksum.Type{checksum.Composite, checksum.FullObject} {
			if !alg.Supports(typ) {
				_, err := s.multipart().Create("bkt", "x", Meta{Checksums: Checksums{Algorithm: alg.Name(), Type: string(typ)}})
				if !errors.Is(err, ErrInvalidChecksum) {
					t.Errorf("%s %s: created (%v)", alg.Name(), typ, err)
				}
				continue
			}
			key := fmt.Sprintf("%s-%s", alg.Header(), typ)
			var bodies [][]byte
			var whole []byte
			var digest []byte
			for range 1 + rng.Intn(4) {
				b := make([]byte, int(s.minPart)+rng.Intn(5000))
				rng.Read(b)
				bodies = append(bodies, b)
				whole = append(whole, b...)
				d, _ := alg.Decode(alg.Of(b))
				digest = append(digest, d...)
			}
			up, parts := checksummedParts(t, s, key, alg, string(typ), bodies...)
			info, err := s.multipart().Complete("bkt", key, up.UploadID, parts)
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			want := alg.Of(whole)
			if typ == checksum.Composite {
				want = fmt.Sprintf("%s-%d", alg.Of(digest), len(bodies))
			}
			got := info.Meta.Checksums
			if got.Value(alg) != want || got.Type != string(typ) || got.Algorithm != "" {
				t.Errorf("%s: completed with %+v, want %s", key, got, want)
			}
			head, err := s.HeadObject("bkt", key)
			if err != nil || head.Meta.Checksums != got {
				t.Errorf("%s: stored %+v (%v), want %+v", key, head.Meta.Checksums, err, got)
			}
			res, err := s.ObjectParts("bkt", key, ListPartsOptions{})
			if err != nil || res.Count != len(bodies) || len(res.Parts) != len(bodies) {
				t.Fatalf("%s: parts %+v (%v)", key, res, err)
			}
			for i, p := range res.Parts {
				if p.PartNumber != i+1 || p.Size != int64(len(bodies[i])) || p.Checksum != alg.Of(bodies[i]) || p.ETag != strings.Trim(parts[i].ETag, `"`) {
					t.Errorf("%s: part %d recorded as %+v", key, i+1, p)
				}
			}
		}
	}
}

// TestMultipartChecksumRefusals: every way a completion's checksums can
// be wrong is refused, and the upload survives to be completed right.
func TestMultipartChecksumRefusals(t *testing.T) {
	s, _ := newTestStore(t)
	s.minPart = 1
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	bodies := [][]byte{[]byte("first part"), []byte("second")}
	up, parts := checksummedParts(t, s, "k", checksum.SHA256, "", bodies...)
	wrong := func(f func(p []CompletePart)) []CompletePart {
		c := append([]CompletePart(nil), parts...)
		f(c)
		return c
	}
	for _, c := range []struct {
		name  string
		parts []CompletePart
		opt   CompleteOptions
		want  error
	}{
		{"part sum differs", wrong(func(p []CompletePart) { p[1].Checksums.SHA256 = checksum.SHA256.Of([]byte("x")) }), CompleteOptions{}, ErrInvalidPart},
		{"part sum of another algorithm", wrong(func(p []CompletePart) { p[0].Checksums.CRC32 = "AAAAAA==" }), CompleteOptions{}, ErrInvalidPart},
		{"composite needs every part's", wrong(func(p []CompletePart) { p[1].Checksums = Checksums{} }), CompleteOptions{}, ErrInvalidChecksum},
		{"object sum differs", parts, CompleteOptions{Checksums: Checksums{SHA256: checksum.SHA256.Of(nil) + "-2"}}, ErrBadDigest},
		{"object sum of another algorithm", parts, CompleteOptions{Checksums: Checksums{CRC32: "AAAAAA=="}}, ErrInvalidChecksum},
	} {
		if _, err := s.multipart().CompleteWith("bkt", "k", up.UploadID, c.parts, c.opt); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if _, err := s.HeadObject("bkt", "k"); !errors.Is(err, ErrNoSuchKey) {
			t.Fatalf("%s: an object was stored (%v)", c.name, err)
		}
	}
	var digest []byte
	for _, b := range bodies {
		d, _ := checksum.SHA256.Decode(checksum.SHA256.Of(b))
		digest = append(digest, d...)
	}
	want := checksum.SHA256.Of(digest)
	info, err := s.multipart().CompleteWith("bkt", "k", up.UploadID, parts, CompleteOptions{Checksums: Checksums{SHA256: want}})
	if err != nil || info.Meta.Checksums.SHA256 != want+"-2" {
		t.Fatalf("complete: %+v %v", info.Meta.Checksums, err)
	}
}

// TestPartChecksumMustFitUpload: S3 takes a part's checksum only in its
// upload's algorithm, and needs it when the upload has one; an upload
// without one takes any.
func TestPartChecksumMustFitUpload(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	plain, err := s.multipart().Create("bkt", "plain", Meta{})
	if err != nil {
		t.Fatal(err)
	}
	crc, err := s.multipart().Create("bkt", "crc", Meta{Checksums: Checksums{Algorithm: "CRC32"}})
	if err != nil || crc.Meta.Checksums != (Checksums{Algorithm: "CRC32", Type: "COMPOSITE"}) {
		t.Fatalf("created %+v (%v)", crc.Meta.Checksums, err)
	}
	body := []byte("part")
	for _, c := range []struct {
		upload string
		sums   Checksums
		ok     bool
	}{
		{plain.UploadID, Checksums{}, true},
		{plain.UploadID, Checksums{CRC32: checksum.CRC32.Of(body)}, true},
		{crc.UploadID, Checksums{}, false},
		{crc.UploadID, Checksums{SHA1: checksum.SHA1.Of(body)}, false},
		{crc.UploadID, Checksums{CRC32: checksum.CRC32.Of(body)}, true},
	} {
		key := map[bool]string{true: "plain", false: "crc"}[c.upload == plain.UploadID]
		_, err := s.multipart().UploadPart("bkt", key, c.upload, 1, bytes.NewReader(body), 4, c.sums)
		if c.ok != (err == nil) || err != nil && !errors.Is(err, ErrInvalidChecksum) {
			t.Errorf("%s part with %+v: %v", key, c.sums, err)
		}
	}
	if _, err := s.multipart().Create("bkt", "x", Meta{Checksums: Checksums{Algorithm: "SHA384"}}); !errors.Is(err, ErrInvalidChecksum) {
		t.Errorf("an unknown algorithm: %v", err)
	}
}

// TestObjectPartsPages: an upload of more parts than an xattr page holds
// is recorded whole, and ObjectParts pages through it.
func TestObjectPartsPages(t *testing.T) {
	s, img := newTestStore(t)
	s.minPart = 1
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	n := partsPerPage + 37
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = []byte(fmt.Sprint("part ", i))
	}
	up, parts := checksummedParts(t, s, "many", checksum.CRC32C, "FULL_OBJECT", bodies...)
	if _, err := s.multipart().Complete("bkt", "many", up.UploadID, parts); err != nil {
		t.Fatal(err)
	}
	seen, marker := 0, 0
	for {
		res, err := s.ObjectParts("bkt", "many", ListPartsOptions{PartNumberMarker: marker, MaxParts: 100})
		if err != nil || res.Count != n {
			t.Fatalf("page after %d: %+v %v", marker, res.Count, err)
		}
		for _, p := range res.Parts {
			seen++
			if p.PartNumber != seen || p.Checksum != checksum.CRC32C.Of(bodies[seen-1]) {
				t.Fatalf("part %d: %+v", seen, p)
			}
		}
		if !res.IsTruncated {
			break
		}
		marker = res.NextPartNumberMarker
	}
	if seen != n {
		t.Errorf("paged through %d of %d parts", seen, n)
	}
	put(t, s, "bkt", "single", "x", Meta{})
	if res, err := s.ObjectParts("bkt", "single", ListPartsOptions{}); err != nil || res.Count != 0 || res.Parts != nil {
		t.Errorf("single PUT has parts %+v (%v)", res, err)
	}
	// The kernel reads the record as documented, and xfs_repair finds the
	// volume clean.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	snap, err := oracle.SnapshotDir(oracle.Mount(t, img, true))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := snap.Lookup("bkt/many")
	second := e.Xattrs[xattrParts+".2"]
	if !ok || e.Xattrs[xattrParts] != fmt.Sprint(n) || !strings.HasPrefix(second, fmt.Sprintf("%d %d ", partsPerPage+1, len(bodies[partsPerPage]))) ||
		strings.Count(second, "\n") != n-partsPerPage || e.Xattrs[xattrChecksumType] != "FULL_OBJECT" {
		t.Errorf("kernel shows %v", e.Xattrs)
	}
}

// TestCopyChecksums: a copy keeps a full-object checksum or none, and
// computes one when asked or when the source's is composite.
func TestCopyChecksums(t *testing.T) {
	s, _ := newTestStore(t)
	s.minPart = 1
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	body := []byte("copied content")
	put(t, s, "bkt", "src", string(body), Meta{Checksums: Checksums{CRC32: checksum.CRC32.Of(body)}})
	put(t, s, "bkt", "plain", string(body), Meta{})
	put(t, s, "bkt", "xxh", string(body), Meta{Checksums: Checksums{XXHASH3: checksum.XXHASH3.Of(body)}})
	up, parts := checksummedParts(t, s, "mp", checksum.SHA1, "", body[:5], body[5:])
	if _, err := s.multipart().Complete("bkt", "mp", up.UploadID, parts); err != nil {
		t.Fatal(err)
	}
	up, parts = checksummedParts(t, s, "mp128", checksum.XXHASH128, "", body[:5], body[5:])
	if _, err := s.multipart().Complete("bkt", "mp128", up.UploadID, parts); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		src  string
		meta *Meta
		want Checksums
	}{
		{"src", nil, Checksums{CRC32: checksum.CRC32.Of(body)}},
		{"src", &Meta{Checksums: Checksums{Algorithm: "SHA256"}}, Checksums{SHA256: checksum.SHA256.Of(body), Type: "FULL_OBJECT"}},
		{"mp", nil, Checksums{SHA1: checksum.SHA1.Of(body), Type: "FULL_OBJECT"}},
		{"plain", nil, Checksums{}},
		{"plain", &Meta{ContentType: "text/plain"}, Checksums{}},
		{"plain", &Meta{Checksums: Checksums{Algorithm: "xxhash64"}}, Checksums{XXHASH64: checksum.XXHASH64.Of(body), Type: "FULL_OBJECT"}},
		{"xxh", nil, Checksums{XXHASH3: checksum.XXHASH3.Of(body)}},
		{"mp128", nil, Checksums{XXHASH128: checksum.XXHASH128.Of(body), Type: "FULL_OBJECT"}},
		{"src", &Meta{Checksums: Checksums{Algorithm: "MD5"}}, Checksums{MD5: checksum.MD5.Of(body), Type: "FULL_OBJECT"}},
	} {
		info, err := s.CopyObject("bkt", c.src, "bkt", "dst", c.meta)
		if err != nil {
			t.Fatal(err)
		}
		head, _ := s.HeadObject("bkt", "dst")
		if info.Meta.Checksums != c.want || head.Meta.Checksums != c.want {
			t.Errorf("copy of %s with %+v: %+v, stored %+v, want %+v", c.src, c.meta, info.Meta.Checksums, head.Meta.Checksums, c.want)
		}
	}
}

// TestUploadChecksumSurvivesReopen: an upload's algorithm and type are
// on the volume, so a restarted store still demands them of the parts and
// completes with that checksum.
func TestUploadChecksumSurvivesReopen(t *testing.T) {
	s, img := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	up, err := s.multipart().Create("bkt", "k", Meta{Checksums: Checksums{Algorithm: "crc32c", Type: "FULL_OBJECT"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info, err := s.multipart().Get("bkt", "k", up.UploadID)
	if err != nil || info.Meta.Checksums != (Checksums{Algorithm: "CRC32C", Type: "FULL_OBJECT"}) {
		t.Fatalf("reopened upload: %+v (%v)", info.Meta.Checksums, err)
	}
	body := []byte("part after a restart")
	if _, err := s.multipart().UploadPart("bkt", "k", up.UploadID, 1, bytes.NewReader(body), int64(len(body)), Checksums{}); !errors.Is(err, ErrInvalidChecksum) {
		t.Errorf("a part without the upload's checksum: %v", err)
	}
	p, err := s.multipart().UploadPart("bkt", "k", up.UploadID, 1, bytes.NewReader(body), int64(len(body)), Checksums{CRC32C: checksum.CRC32C.Of(body)})
	if err != nil {
		t.Fatal(err)
	}
	done, err := s.multipart().Complete("bkt", "k", up.UploadID, []CompletePart{{PartNumber: 1, ETag: p.ETag}})
	if err != nil || done.Meta.Checksums != (Checksums{CRC32C: checksum.CRC32C.Of(body), Type: "FULL_OBJECT"}) {
		t.Errorf("completed with %+v (%v)", done.Meta.Checksums, err)
	}
}
