package xfs

import (
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

func newRWVolume(t *testing.T, size int64, o mkfs.Options) (*Volume, string) {
	t.Helper()
	img := filepath.Join(t.TempDir(), "vol.img")
	o.Size = size
	if _, err := mkfs.Format(img, o); err != nil {
		t.Fatal(err)
	}
	v, err := Open(img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v, img
}

// TestInodeAllocFree allocates thousands of inodes (new chunks, inobt and
// finobt splits), frees a random half, allocates again, frees everything,
// and requires the counters and xfs_repair to agree.
func TestInodeAllocFree(t *testing.T) {
	v, img := newRWVolume(t, 256<<20, mkfs.Options{BlockSize: 1024})
	st0, _ := v.Statfs()
	rng := rand.New(rand.NewSource(3))
	live := map[format.Ino]bool{}
	alloc := func(n int) {
		for done := 0; done < n; {
			tx, err := v.begin(256)
			if err != nil {
				t.Fatal(err)
			}
			batch := min(n-done, 1+rng.Intn(20))
			for i := 0; i < batch; i++ {
				free, err := tx.allocInode(v.Root(), rng.Intn(4) == 0)
				if err != nil {
					t.Fatal(err)
				}
				if live[free.ino] {
					t.Fatalf("inode %d handed out twice", free.ino)
				}
				h := v.icache.hold(free.ino)
				c := tx.track(h, free)
				v.initInodeCore(c.core, newInodeAttrs{Mode: format.SIFREG | 0o644, Nlink: 1, Now: time.Now()}, nil)
				v.icache.release(h)
				live[free.ino] = true
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			done += batch
		}
	}
	release := func(inos []format.Ino) {
		tx, err := v.begin(0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ino := range inos {
			h := v.icache.hold(ino)
			c, err := tx.modify(h, ino)
			if err != nil {
				t.Fatal(err)
			}
			*c.core = *v.freeInodeCore(ino)
			if err := tx.releaseInode(ino); err != nil {
				t.Fatal(err)
			}
			v.icache.release(h)
			delete(live, ino)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	alloc(3000)
	var half []format.Ino
	for ino := range live {
		if rng.Intn(2) == 0 {
			half = append(half, ino)
		}
	}
	release(half)
	alloc(1000)
	st, err := v.Statfs()
	if err != nil {
		t.Fatal(err)
	}
	if got := int(st.Inodes - st.FreeInodes - (st0.Inodes - st0.FreeInodes)); got != len(live) {
		t.Fatalf("AGIs count %d inodes in use beyond the start, model %d", got, len(live))
	}
	var all []format.Ino
	for ino := range live {
		all = append(all, ino)
	}
	release(all)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, img)
}
