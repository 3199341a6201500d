package store

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestOpenWithSickStagingAG: a volume whose AGF of the AG holding a
// staging directory fails verification opens (the staging directory it
// cannot free is left for xfs_repair), with that AG listed sick and the
// other buckets writable.
func TestOpenWithSickStagingAG(t *testing.T) {
	s, img := newTestStore(t)
	if err := s.CreateBucket("bucket"); err != nil {
		t.Fatal(err)
	}
	g := s.v.Geometry()
	ag, _ := g.InoToAg(s.staging[len(s.staging)-1])
	if ag == 0 {
		t.Skip("the last staging directory is in AG 0, whose headers hold the root")
	}
	agf := format.DaddrToByte(g.AgHeaderDaddr(ag, 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("damaged!"), agf+100); err != nil {
		t.Fatal(err)
	}
	f.Close()

	s, err = Open(img)
	if err != nil {
		t.Fatalf("open with the AGF of a staging directory's AG damaged: %v", err)
	}
	defer s.Close()
	if h := s.Health(); h.State != HealthDegraded || len(h.Sick) != 1 || h.Sick[0].Kind != "ag" || h.Sick[0].AG != ag {
		t.Fatalf("health %+v, want AG %d sick", h, ag)
	}
	if _, err := s.PutObject("bucket", "after", strings.NewReader("x"), 1, Meta{}); err != nil {
		t.Fatalf("PUT with AG %d sick: %v", ag, err)
	}
}

// TestOpenWithSickQuotaBlock0: a volume whose first quota file block
// (the records of project 0, the defaults, and of the first buckets)
// fails verification opens; the bucket whose record it holds reads and
// refuses writes with a *SickError naming it and the quota block, and
// the store's own files (project 0) are still written.
func TestOpenWithSickQuotaBlock0(t *testing.T) {
	oracle.Require(t, oracle.ToolDB)
	s, img := newTestStore(t)
	if err := s.CreateBucket("early"); err != nil {
		t.Fatal(err)
	}
	if err := s.Quotas().Set("early", BucketQuota{HardObjects: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutObject("early", "before", strings.NewReader("x"), 1, Meta{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sb := oracle.DBSuperblock(t, img)
	var qino uint64
	var agblocks, bs int64
	fmt.Sscan(sb["pquotino"], &qino)
	fmt.Sscan(sb["agblocks"], &agblocks)
	fmt.Sscan(sb["blocksize"], &bs)
	off := int64(-1)
	for _, line := range strings.Split(oracle.DB(t, img, fmt.Sprintf("inode %d", qino), "bmap"), "\n") {
		var fo, start, ag, agbno, count, flag int64
		if _, err := fmt.Sscanf(line, "data offset %d startblock %d (%d/%d) count %d flag %d", &fo, &start, &ag, &agbno, &count, &flag); err == nil && fo == 0 {
			off = (ag*agblocks + agbno) * bs
		}
	}
	if off < 0 {
		t.Fatal("the quota file maps no block 0")
	}
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("damaged!"), off+200); err != nil {
		t.Fatal(err)
	}
	f.Close()

	s, err = Open(img)
	if err != nil {
		t.Fatalf("open with quota file block 0 damaged: %v", err)
	}
	defer s.Close()
	h := s.Health()
	if h.State != HealthDegraded || len(h.Sick) != 1 || h.Sick[0].Place != PlaceQuota || !slices.Contains(h.Sick[0].Buckets, "early") {
		t.Fatalf("health %+v, want quota block 0 sick, holding bucket early's record", h)
	}
	o, err := s.GetObject("early", "before")
	if err != nil {
		t.Fatalf("GET from the bucket whose record is sick: %v", err)
	}
	o.Close()
	_, err = s.PutObject("early", "after", strings.NewReader("x"), 1, Meta{})
	var se *SickError
	if !errors.As(err, &se) || se.Bucket != "early" || se.Damage == nil || se.Damage.Place != PlaceQuota {
		t.Fatalf("PUT into the bucket whose record is sick: %v, want a SickError naming its quota record", err)
	}
	// Project 0 (the store's own files) is not limited: it is left uncharged.
	if err := (SystemFiles{s.store}).write("probe", []byte("x")); err != nil {
		t.Fatalf("a system file with project 0's record sick: %v", err)
	}
}
