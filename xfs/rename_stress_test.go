package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestConcurrentCrossDirRenames moves files between directories that are
// each other's ancestors, in both directions at once (which take the two
// directory locks as a pair, without renameMu), while one goroutine moves
// a directory back and forth between parents (which holds renameMu) and
// another keeps trying to remove non-empty directories (which locks a
// parent, then its child). No combination may deadlock: a watchdog fails
// the test with every goroutine's stack. Afterwards every file is where
// its worker last put it, with its content, and xfs_repair is clean.
func TestConcurrentCrossDirRenames(t *testing.T) {
	const workers = 8
	moves := envInt("XFS3_CONCURRENT_OPS", 300)
	img := filepath.Join(t.TempDir(), "renames.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mkdir := func(parent format.Ino, name string) format.Ino {
		ino, err := v.Names().Mkdir(parent, name, xfs.Attrs{Mode: 0o755})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Names().Create(ino, "keep", xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		return ino
	}
	// a ⊃ b ⊃ c, d apart; m moves between a, c and d.
	a := mkdir(v.Root(), "a")
	b := mkdir(a, "b")
	c := mkdir(b, "c")
	d := mkdir(v.Root(), "d")
	m := mkdir(a, "m")
	dirs := []format.Ino{a, b, c, d, m}
	mParents := []format.Ino{a, c, d}

	type place struct {
		dir  format.Ino
		name string
	}
	final := make([][]place, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers+2)
	stop := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			var mine []place
			for i := range 4 {
				p := place{dirs[rng.Intn(len(dirs))], fmt.Sprintf("w%d-f%d", w, i)}
				if err := putFile(v, p.dir, p.name); err != nil {
					errs <- err
					return
				}
				mine = append(mine, p)
			}
			for op := range moves {
				i := rng.Intn(len(mine))
				from := mine[i]
				to := place{dirs[rng.Intn(len(dirs))], fmt.Sprintf("w%d-f%d-%d", w, i, op)}
				if err := v.Names().Rename(from.dir, from.name, to.dir, to.name); err != nil {
					errs <- fmt.Errorf("worker %d: rename %v to %v: %w", w, from, to, err)
					return
				}
				mine[i] = to
			}
			final[w] = mine
		}()
	}
	var side sync.WaitGroup
	side.Add(2)
	go func() { // moves directory m between parents: a directory move, serialised
		defer side.Done()
		at := a
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			next := mParents[(i+1)%len(mParents)]
			if err := v.Names().Rename(at, "m", next, "m"); err != nil {
				errs <- fmt.Errorf("move m: %w", err)
				return
			}
			at = next
		}
	}()
	go func() { // parent-then-child locks against the pair locks
		defer side.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, pc := range [][2]any{{a, "b"}, {b, "c"}} {
				if err := v.Names().Rmdir(pc[0].(format.Ino), pc[1].(string)); !errors.Is(err, xfs.ErrNotEmpty) {
					errs <- fmt.Errorf("rmdir of a non-empty directory: %v", err)
					return
				}
			}
		}
	}()
	waitOrDump(t, "renames", 3*time.Minute, func() { wg.Wait(); close(stop); side.Wait() })
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	want := map[format.Ino][]string{}
	for _, dir := range dirs {
		want[dir] = []string{"keep"}
	}
	want[a] = append(want[a], "b")
	want[b] = append(want[b], "c")
	for _, mine := range final {
		for _, p := range mine {
			want[p.dir] = append(want[p.dir], p.name)
			if err := checkFile(v, p.dir, p.name); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, dir := range dirs {
		ents, err := v.Names().ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			if e.Name != "." && e.Name != ".." && !(e.Name == "m" && dir != m) {
				got = append(got, e.Name)
			}
		}
		slices.Sort(got)
		slices.Sort(want[dir])
		if !slices.Equal(got, want[dir]) {
			t.Fatalf("directory %d holds %v, want %v", dir, got, want[dir])
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, img)
}

// putFile creates dir/name holding its own name.
func putFile(v *xfs.Volume, dir format.Ino, name string) error {
	ino, err := v.Names().Create(dir, name, xfs.Attrs{Mode: 0o644})
	if err == nil {
		_, err = v.Files().WriteAt(ino, []byte(name), 0)
	}
	return err
}

// checkFile reads dir/name back: it holds the name it was created with,
// which is the new name up to its last "-".
func checkFile(v *xfs.Volume, dir format.Ino, name string) error {
	ino, err := v.Names().Lookup(dir, name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	buf := make([]byte, 64)
	n, err := v.Files().ReadAt(ino, buf, 0)
	if err != nil && !errors.Is(err, errEOF) {
		return fmt.Errorf("%s: %w", name, err)
	}
	if created := string(buf[:n]); !bytes.HasPrefix([]byte(name), []byte(created)) {
		return fmt.Errorf("%s holds %q", name, created)
	}
	return nil
}

// TestConcurrentDirectoryShrink empties directories whose blocks lie in
// several AGs from many goroutines at once. Removing an entry can free a
// data block and then a leaf block of another AG in one change; a change
// that needs an AGF below one it holds must not wait for it (two such
// changes with opposite AG orders deadlocked), so it starts again taking
// it in order. A watchdog fails the test on a deadlock; afterwards the
// directories are empty and xfs_repair is clean.
func TestConcurrentDirectoryShrink(t *testing.T) {
	const dirs, workers = 12, 8
	files := envInt("XFS3_SHRINK_FILES", 400)
	img := filepath.Join(t.TempDir(), "shrink.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20, AgCount: 4}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{LazyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	inos := make([]format.Ino, dirs)
	for d := range inos {
		if inos[d], err = v.Names().Mkdir(v.Root(), fmt.Sprintf("d%02d", d), xfs.Attrs{Mode: 0o755}); err != nil {
			t.Fatal(err)
		}
	}
	// Grow the directories side by side, with file data between, so
	// that each one's blocks come from wherever free space is then.
	long := string(bytes.Repeat([]byte("n"), 180))
	rng := rand.New(rand.NewSource(7))
	for f := range files {
		for d := range inos {
			ino, err := v.Names().Create(inos[d], fmt.Sprintf("%s-%05d", long, f), xfs.Attrs{Mode: 0o644})
			if err != nil {
				t.Fatal(err)
			}
			if rng.Intn(8) == 0 {
				if _, err := v.Files().WriteAt(ino, make([]byte, 4096*(1+rng.Intn(4))), 0); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each worker empties every directory's share of names, in
			// its own order of directories.
			order := rand.New(rand.NewSource(int64(w))).Perm(dirs)
			for f := w; f < files; f += workers {
				for _, d := range order {
					if err := v.Names().Unlink(inos[d], fmt.Sprintf("%s-%05d", long, f)); err != nil {
						errs <- fmt.Errorf("worker %d: unlink %d/%d: %w", w, d, f, err)
						return
					}
				}
			}
		}()
	}
	waitOrDump(t, "directory shrink", 5*time.Minute, wg.Wait)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for d, ino := range inos {
		if empty, err := v.Names().IsEmptyDir(ino); err != nil || !empty {
			t.Fatalf("directory %d: empty %v, %v", d, empty, err)
		}
	}
	t.Logf("%d changes ran again to take an AGF in order", xfs.LockOrderRetries(v))
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, img)
}

// waitOrDump runs wait and fails the test with every goroutine's stack
// if it has not returned within limit: a deadlock watchdog.
func waitOrDump(t *testing.T, what string, limit time.Duration, wait func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		var stacks bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Fatalf("%s deadlocked:\n%s", what, stacks.String())
	}
}
