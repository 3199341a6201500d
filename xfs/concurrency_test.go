package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestConcurrentWriters runs goroutines that create, write, rename, set
// attributes and delete in one shared directory and in their own ones,
// while others read. Run under the race detector in CI. Afterwards the
// survivors must read back exactly, xfs_repair must be clean and the
// kernel must show the same bytes.
func TestConcurrentWriters(t *testing.T) { runConcurrentWriters(t, xfs.Options{}) }

// TestConcurrentWritersTinyCache is TestConcurrentWriters with caches of
// a few dozen blocks and inodes: every operation evicts, and reclaim
// runs all the time beside lookups, commits and write-backs.
func TestConcurrentWritersTinyCache(t *testing.T) {
	runConcurrentWriters(t, xfs.Options{CacheBytes: 256 << 10})
}

func runConcurrentWriters(t *testing.T, o xfs.Options) {
	const workers = 10
	opsPer := envInt("XFS3_CONCURRENT_OPS", 300)
	img := filepath.Join(t.TempDir(), "conc.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, o)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := v.Names().Mkdir(v.Root(), "shared", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	type file struct {
		dir  format.Ino
		path string
		data []byte
	}
	var mu sync.Mutex
	survivors := map[string][]byte{} // path -> content
	var wg sync.WaitGroup
	errs := make(chan error, workers*2)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			own, err := v.Names().Mkdir(v.Root(), fmt.Sprintf("w%02d", w), xfs.Attrs{Mode: 0o755})
			if err != nil {
				errs <- err
				return
			}
			var mine []file
			for op := 0; op < opsPer; op++ {
				dir, dirName := own, fmt.Sprintf("w%02d", w)
				if rng.Intn(2) == 0 {
					dir, dirName = shared, "shared"
				}
				switch k := rng.Intn(10); {
				case k < 5 || len(mine) == 0:
					name := fmt.Sprintf("w%02d-%04d", w, op)
					ino, err := v.Names().Create(dir, name, xfs.Attrs{Mode: 0o644})
					if err != nil {
						errs <- fmt.Errorf("worker %d create: %w", w, err)
						return
					}
					data := make([]byte, rng.Intn(100000))
					rng.Read(data)
					if _, err := v.Files().WriteAt(ino, data, 0); err != nil {
						errs <- fmt.Errorf("worker %d write: %w", w, err)
						return
					}
					if rng.Intn(3) == 0 {
						if err := v.Xattrs().Set(ino, "user.worker", []byte(name), 0); err != nil {
							errs <- fmt.Errorf("worker %d setxattr: %w", w, err)
							return
						}
					}
					mine = append(mine, file{dir, dirName + "/" + name, data})
				case k < 7:
					i := rng.Intn(len(mine))
					f := mine[i]
					if err := v.Names().Unlink(f.dir, filepath.Base(f.path)); err != nil {
						errs <- fmt.Errorf("worker %d unlink %s: %w", w, f.path, err)
						return
					}
					mine = append(mine[:i], mine[i+1:]...)
				case k < 8:
					i := rng.Intn(len(mine))
					f := mine[i]
					to, toName := shared, "shared"
					if f.dir == shared {
						to, toName = own, dirName
						if dir == shared {
							toName = fmt.Sprintf("w%02d", w)
						}
					}
					newName := filepath.Base(f.path) + "r"
					if err := v.Names().Rename(f.dir, filepath.Base(f.path), to, newName); err != nil {
						errs <- fmt.Errorf("worker %d rename %s: %w", w, f.path, err)
						return
					}
					mine[i] = file{to, toName + "/" + newName, f.data}
				default:
					// Read somebody's directory while it changes.
					if _, err := v.Names().ReadDir(shared); err != nil {
						errs <- fmt.Errorf("worker %d readdir: %w", w, err)
						return
					}
				}
			}
			mu.Lock()
			for _, f := range mine {
				survivors[f.path] = f.data
			}
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	for p, data := range survivors {
		ino, err := v.Names().LookupPath(p, false)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		got := make([]byte, len(data))
		if n, err := v.Files().ReadAt(ino, got, 0); (err != nil && !errors.Is(err, errEOF)) || n != len(data) || !bytes.Equal(got, data) {
			t.Fatalf("%s: content differs (%d bytes, %v)", p, n, err)
		}
	}
	st := v.CacheStats()
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files survive; caches %+v", len(survivors), st)
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	for p, data := range survivors {
		got, err := os.ReadFile(filepath.Join(mnt, p))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("kernel reads %s: %v", p, err)
		}
	}
}
