package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// gcBody is the content of version n of key: its length and bytes derive
// from both, so a reader can tell a whole version from a mix.
func gcBody(key string, n int) []byte {
	size := (n * 7919) % (300 << 10)
	head := fmt.Sprintf("%s#%d#%d#", key, n, size)
	b := bytes.Repeat([]byte(head), size/len(head)+1)
	return b[:size]
}

// wholeVersion reports whether b is some whole version of key.
func wholeVersion(key string, b []byte) bool {
	var n, size int
	if len(b) == 0 {
		return true // version 0 and every multiple of 300 KiB / 7919
	}
	if _, err := fmt.Sscanf(string(b[len(key):min(len(b), len(key)+40)]), "#%d#%d#", &n, &size); err != nil {
		return false
	}
	return bytes.Equal(b, gcBody(key, n))
}

// TestGCModesStress: in each gc mode, writers overwrite and delete their
// own keys while readers open the same keys, hold them and read them to
// the end. Every read is one whole version; afterwards nothing waits to
// be freed, every block and inode the deleted versions held is free
// again (xfs_repair -n checks the counts), and the kernel sees exactly
// the objects the writers left.
func TestGCModesStress(t *testing.T) {
	for _, mode := range []gc.Mode{gc.PerCPU, gc.Sync, gc.Sweep} {
		t.Run(string(mode), func(t *testing.T) { gcStress(t, mode) })
	}
}

func gcStress(t *testing.T, mode gc.Mode) {
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		t.Fatal(err)
	}
	s, err := OpenWith(img, Options{GC: gc.Options{Mode: mode}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	st0, err := s.v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	const writers, readers, keysEach = 6, 4, 4
	opsEach := 120
	if testing.Short() {
		opsEach = 30
	}
	final := make([]map[string][]byte, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers+readers)
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			mine := map[string][]byte{}
			for op := range opsEach {
				key := fmt.Sprintf("w%d/k%d", w, rng.Intn(keysEach))
				if rng.Intn(3) == 0 {
					if err := s.DeleteObject("bkt", key); err != nil {
						errs <- err
						return
					}
					delete(mine, key)
					continue
				}
				body := gcBody(key, op*writers+w+1)
				if _, err := s.PutObject("bkt", key, bytes.NewReader(body), int64(len(body)), Meta{}); err != nil {
					errs <- fmt.Errorf("put %s: %w", key, err)
					return
				}
				mine[key] = body
			}
			final[w] = mine
		}()
	}
	var rwg sync.WaitGroup
	for r := range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			rng := rand.New(rand.NewSource(int64(100 + r)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("w%d/k%d", rng.Intn(writers), rng.Intn(keysEach))
				o, err := s.GetObject("bkt", key)
				if err != nil {
					continue // deleted meanwhile, or never written
				}
				time.Sleep(time.Duration(rng.Intn(2000)) * time.Microsecond) // hold it open
				b, err := io.ReadAll(o.Reader())
				o.Close()
				if err != nil || !wholeVersion(key, b) {
					errs <- fmt.Errorf("read of %s: %d bytes, not one whole version (%v)", key, len(b), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The collector waits a moment for stragglers before it frees a short
	// queue; flushing ends that wait (on a loaded machine it may not have
	// passed yet).
	s.gc.Flush()
	st := s.GCStats()
	if n := s.v.Space().Unlinked(); n != 0 {
		t.Errorf("%d inodes still wait to be freed after the readers closed and a flush", n)
	}
	if st.Inactivated != st.Queued || st.Errors != 0 || st.Mode != mode {
		t.Errorf("gc stats %+v", st)
	}
	t.Logf("%s: %+v", mode, st)
	// Deleting what is left must give back exactly what the volume had.
	want := map[string][]byte{}
	for _, m := range final {
		for k, b := range m {
			want[k] = b
		}
	}
	checkKernelSees(t, s, img, want)
	s, err = OpenWith(img, Options{GC: gc.Options{Mode: mode}})
	if err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if err := s.DeleteObject("bkt", k); err != nil {
			t.Fatal(err)
		}
	}
	st1, err := s.v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	// Inode chunks stay allocated when their inodes are freed.
	g := s.v.Geometry()
	chunks := (st1.Inodes - st0.Inodes) * uint64(g.InodeSize) / uint64(g.BlockSize)
	if st1.FreeBlocks+chunks != st0.FreeBlocks || st1.Inodes-st1.FreeInodes != st0.Inodes-st0.FreeInodes {
		t.Errorf("after deleting everything: %d free blocks (+%d in inode chunks), %d inodes in use; want %d and %d",
			st1.FreeBlocks, chunks, st1.Inodes-st1.FreeInodes, st0.FreeBlocks, st0.Inodes-st0.FreeInodes)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// checkKernelSees closes s, checks img with xfs_repair -n and a read-only
// kernel mount that must show bucket bkt holding exactly want.
func checkKernelSees(t *testing.T, s *Store, img string, want map[string][]byte) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	defer oracle.Unmount(t, mnt)
	seen := 0
	err := filepath.WalkDir(filepath.Join(mnt, "bkt"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(mnt, "bkt"), p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if w, ok := want[filepath.ToSlash(rel)]; !ok || !bytes.Equal(w, b) {
			t.Errorf("the kernel shows %s (%d bytes), which the store does not hold so", rel, len(b))
		}
		seen++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(want) {
		t.Errorf("the kernel shows %d objects, want %d", seen, len(want))
	}
}

// TestFullVolumeWaitsForGC: on a full volume, a PUT right after DELETEs
// succeeds without anyone asking for the freed space: the write that finds
// no space waits for the collector and tries once more. The collector is
// slowed so the deletes are still queued when the PUT runs.
func TestFullVolumeWaitsForGC(t *testing.T) {
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	s, err := OpenWith(img, Options{GC: gc.Options{Mode: gc.PerCPU, Delay: time.Hour, Batch: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("f"), 1<<20)
	n := 0
	for ; ; n++ {
		_, err := s.PutObject("bkt", fmt.Sprintf("k%d", n), bytes.NewReader(body), int64(len(body)), Meta{})
		if errors.Is(err, ErrNoSpace) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if err := s.DeleteObject("bkt", fmt.Sprintf("k%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.GCStats(); st.Pending == 0 {
		t.Fatalf("the deletes were freed before the PUT (%+v): nothing is tested", st)
	}
	if _, err := s.PutObject("bkt", "after", bytes.NewReader(body), int64(len(body)), Meta{}); err != nil {
		t.Fatalf("PUT after deleting %d objects on a full volume: %v", n, err)
	}
}
