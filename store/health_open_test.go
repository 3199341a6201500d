package store

import (
	"os"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
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
