package store

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestPeriodicTrimReturnsFreedSpace: with a trim interval of a second,
// deleting every other object of an interleaved set (free space in many
// small pieces) gives at least 99% of the freed bytes back to the host by
// itself, and the volume stays clean with the kept objects intact.
func TestPeriodicTrimReturnsFreedSpace(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolDB)
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		t.Fatal(err)
	}
	logOff, logLen := oracle.LogRange(t, img)
	allocated := func(t *testing.T, path string) int64 { return oracle.AllocatedOutside(t, path, logOff, logLen) }
	passes := make(chan gc.TrimPass, 1000)
	s, err := OpenWith(img, Options{Trim: gc.TrimOptions{Interval: time.Second, PassDone: func(p gc.TrimPass) { passes <- p }}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket("frag"); err != nil {
		t.Fatal(err)
	}
	const n, size = 400, 48 << 10
	body := func(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("object %d;", i)), size/8+1)[:size] }
	for i := range n {
		if _, err := s.PutObject("frag", fmt.Sprintf("o%04d", i), bytes.NewReader(body(i)), size, Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	// Let the first passes (which walk the whole volume: after open all
	// of it counts as freed) finish before measuring.
	time.Sleep(1500 * time.Millisecond)
	before := allocated(t, img)
	var freed int64
	for i := 1; i < n; i += 2 {
		if err := s.DeleteObject("frag", fmt.Sprintf("o%04d", i)); err != nil {
			t.Fatal(err)
		}
		freed += size
	}
	deadline := time.Now().Add(15 * time.Second)
	for before-allocated(t, img) < freed*99/100 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	after := allocated(t, img)
	t.Logf("allocated (outside the log) %d KiB before the deletes, %d KiB after; %d KiB freed", before>>10, after>>10, freed>>10)
	if before-after < freed*99/100 {
		t.Fatalf("the host got back %d of %d freed bytes (want 99%%)", before-after, freed)
	}
	c := s.Trimmer().Status().Counters
	if c.Passes == 0 || c.DiscardedBytes < freed || c.Errors != 0 || c.Unsupported {
		t.Fatalf("counters %+v", c)
	}
	for i := 0; i < n; i += 2 {
		o, err := s.GetObject("frag", fmt.Sprintf("o%04d", i))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(o.Reader())
		o.Close()
		if err != nil || !bytes.Equal(got, body(i)) {
			t.Fatalf("object %d after trim: %v", i, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// TestCloseStopsTrim: Close cancels a pass on demand under way and the
// volume closes cleanly.
func TestCloseStopsTrim(t *testing.T) {
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	s, err := OpenWith(img, Options{Trim: gc.TrimOptions{Interval: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Trimmer().Start(gc.TrimRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st := s.Trimmer().Status(); st.Current != nil {
		t.Fatalf("a pass still runs after Close: %+v", st.Current)
	}
	s, err = Open(img)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
