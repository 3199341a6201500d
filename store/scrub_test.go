package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/store/checksum"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// scrubPass runs a whole pass of r's batches, as the scrubber would.
func scrubPass(t *testing.T, r Scrub) ScrubCounts {
	t.Helper()
	var total ScrubCounts
	cursor := ""
	for i := 0; ; i++ {
		next, c, err := r.ScrubBatch(context.Background(), cursor)
		if err != nil {
			t.Fatalf("scrub batch at %q: %v", cursor, err)
		}
		total.Add(c)
		if next == "" {
			return total
		}
		if i > 10000 {
			t.Fatal("the pass never ends")
		}
		cursor = next
	}
}

// flipBits flips a byte of the file data of inode ino at offset off
// within it, on the stopped volume img, finding the block with xfs_db.
func flipBits(t *testing.T, img string, ino format.Ino, off int64) {
	t.Helper()
	sb := oracle.DBSuperblock(t, img)
	var agblocks, bs int64
	fmt.Sscan(sb["agblocks"], &agblocks)
	fmt.Sscan(sb["blocksize"], &bs)
	for _, line := range strings.Split(oracle.DB(t, img, fmt.Sprintf("inode %d", ino), "bmap"), "\n") {
		var foff, start, ag, agbno, count, flag int64
		if _, err := fmt.Sscanf(line, "data offset %d startblock %d (%d/%d) count %d flag %d", &foff, &start, &ag, &agbno, &count, &flag); err != nil {
			continue
		}
		if off < foff*bs || off >= (foff+count)*bs {
			continue
		}
		pos := (ag*agblocks+agbno)*bs + off - foff*bs
		f, err := os.OpenFile(img, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, pos); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0x5a
		if _, err := f.WriteAt(b, pos); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("inode %d maps no block at offset %d", ino, off)
}

// TestScrubFindsRottenObjects: bits flipped in the data blocks of chosen
// objects (a single PUT, a part of a multipart object, an older version,
// an object checked by its CRC32C) are found by a scrub pass, exactly
// those; GET of them fails with ErrObjectCorrupt across a restart while
// the others read back whole; overwriting or deleting one drops its mark.
func TestScrubFindsRottenObjects(t *testing.T) {
	oracle.Require(t, oracle.ToolDB)
	s, img := newTestStore(t)
	s.minPart = 4096
	rng := rand.New(rand.NewSource(1))
	body := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	for _, b := range []string{"plain", "versioned"} {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Versions().SetState("versioned", "Enabled"); err != nil {
		t.Fatal(err)
	}
	contents := map[string][]byte{}
	putBody := func(bucket, key string, b []byte, m Meta) ObjectInfo {
		info, err := s.PutObject(bucket, key, bytes.NewReader(b), int64(len(b)), m)
		if err != nil {
			t.Fatal(err)
		}
		contents[bucket+"/"+key] = b
		return info
	}
	for i := 0; i < 6; i++ {
		putBody("plain", fmt.Sprintf("obj-%d", i), body(20000+i), Meta{})
	}
	crc := body(30000)
	putBody("plain", "with-crc", crc, Meta{Checksums: Checksums{CRC32C: checksum.CRC32C.Of(crc), Type: string(checksum.FullObject)}})
	old := body(16000)
	oldInfo := putBody("versioned", "k", old, Meta{})
	putBody("versioned", "k", body(16000), Meta{})
	// A multipart object of three parts.
	up, err := s.Uploads().Create("plain", "multi", Meta{})
	if err != nil {
		t.Fatal(err)
	}
	var parts []CompletePart
	var whole []byte
	for n := 1; n <= 3; n++ {
		p := body(8192)
		whole = append(whole, p...)
		pi, err := s.Uploads().UploadPart("plain", "multi", up.UploadID, n, bytes.NewReader(p), int64(len(p)), Checksums{})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, CompletePart{PartNumber: n, ETag: pi.ETag})
	}
	if _, err := s.Uploads().Complete("plain", "multi", up.UploadID, parts); err != nil {
		t.Fatal(err)
	}
	contents["plain/multi"] = whole

	r := s.Scrub()
	if c := scrubPass(t, r); c.Rotten != 0 || c.Errors != 0 || c.Objects != 10 || c.Bytes == 0 || c.SickStructures != 0 || c.Inodes == 0 {
		t.Fatalf("clean pass: %+v", c)
	}
	inoOf := func(bucket, key, id string) format.Ino {
		_, h, _, err := s.head(bucket, key, id)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		return h.Ino()
	}
	type target struct {
		bucket, key, id string
		off             int64
	}
	targets := []target{
		{"plain", "obj-2", "", 12345},
		{"plain", "multi", "", 8192 + 100}, // in part 2
		{"plain", "with-crc", "", 5},
		{"versioned", "k", oldInfo.VersionID, 4096},
	}
	var inos []format.Ino
	for _, tg := range targets {
		inos = append(inos, inoOf(tg.bucket, tg.key, tg.id))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for i, tg := range targets {
		flipBits(t, img, inos[i], tg.off)
	}

	s, err = Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	r = s.Scrub()
	if c := scrubPass(t, r); c.Rotten != int64(len(targets)) || c.Objects != 10 {
		t.Fatalf("pass over the rotten volume: %+v", c)
	}
	rotten, err := r.Rotten()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range rotten {
		got = append(got, m.Bucket+"/"+m.Key+"@"+m.VersionID)
	}
	want := []string{"plain/multi@null", "plain/obj-2@null", "plain/with-crc@null", "versioned/k@" + oldInfo.VersionID}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rotten %v, want %v (%+v)", got, want, rotten)
	}
	if !strings.Contains(rotten[0].Reason, "part 2") {
		t.Fatalf("multipart object's reason %q names no part 2", rotten[0].Reason)
	}

	check := func(s *Store) {
		t.Helper()
		for _, tg := range targets {
			if _, err := s.Versions().Get(tg.bucket, tg.key, tg.id); !errors.Is(err, ErrObjectCorrupt) {
				t.Fatalf("GET %s/%s@%s: %v, want ErrObjectCorrupt", tg.bucket, tg.key, tg.id, err)
			}
		}
		for name, b := range contents {
			bucket, key, _ := strings.Cut(name, "/")
			rotten := false
			for _, tg := range targets {
				rotten = rotten || tg.bucket == bucket && tg.key == key && tg.id == ""
			}
			if rotten {
				continue
			}
			o, err := s.GetObject(bucket, key)
			if err != nil {
				t.Fatalf("GET %s: %v", name, err)
			}
			data, err := io.ReadAll(o.Reader())
			o.Close()
			if err != nil || !bytes.Equal(data, b) {
				t.Fatalf("GET %s: %d bytes, %v", name, len(data), err)
			}
		}
	}
	check(s)
	// The marks survive a restart.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(img); err != nil {
		t.Fatal(err)
	}
	check(s)

	// Overwritten and deleted objects lose their marks.
	fresh := body(1000)
	if _, err := s.PutObject("plain", "obj-2", bytes.NewReader(fresh), int64(len(fresh)), Meta{}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteObject("plain", "with-crc"); err != nil {
		t.Fatal(err)
	}
	if o, err := s.GetObject("plain", "obj-2"); err != nil {
		t.Fatalf("GET of the overwritten object: %v", err)
	} else {
		o.Close()
	}
	rotten, err = s.Scrub().Rotten()
	if err != nil || len(rotten) != 2 {
		t.Fatalf("after overwrite and delete: %+v, %v", rotten, err)
	}
}

// TestScrubGoesPastSickListing: a bucket whose listing meets a damaged
// prefix directory does not fail the pass: the directory is listed sick
// by the metadata walk, the listing counts as an error, and the next
// bucket's objects are still checked.
func TestScrubGoesPastSickListing(t *testing.T) {
	oracle.Require(t, oracle.ToolDB)
	s, img := newTestStore(t)
	for _, b := range []string{"a-hurt", "b-fine"} {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 60; i++ {
		k := fmt.Sprintf("p/object-with-a-rather-long-name-%03d", i)
		if _, err := s.PutObject("a-hurt", k, strings.NewReader(k), int64(len(k)), Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 5; i++ {
		if _, err := s.PutObject("b-fine", fmt.Sprint(i), strings.NewReader("fine"), 4, Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	bucket, err := s.v.Names().Lookup(s.v.Root(), "a-hurt")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := s.v.Names().Lookup(bucket, "p")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	flipBits(t, img, dir, 200) // past the block's header: a bad CRC
	s, err = Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c := scrubPass(t, s.Scrub()); c.SickStructures != 1 || c.Errors != 1 || c.Objects != 5 || c.Rotten != 0 {
		t.Fatalf("pass over a volume with a damaged prefix: %+v, want 1 sick structure, 1 error and b-fine's 5 objects", c)
	}
}

// TestScrubberWorker: the store's scrubber runs a pass on demand and
// reports it in Status.
func TestScrubberWorker(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		put(t, s, "bkt", fmt.Sprintf("k%d", i), strings.Repeat("x", 5000), Meta{})
	}
	if _, err := s.Scrub().Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := s.Scrub().Status()
		if st.Last != nil {
			if st.Last.Err != "" || st.Last.Counts.Objects != 20 || st.Last.Counts.Damaged() || !st.Last.OnDemand {
				t.Fatalf("pass: %+v", st.Last)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pass ended: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c, err := s.Scrub().LoadCursor(); err != nil || c != "" {
		t.Fatalf("cursor after a whole pass: %q, %v", c, err)
	}
}
