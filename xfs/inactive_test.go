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
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// holdQueue keeps the inodes released to it until the test frees them.
type holdQueue struct {
	mu   sync.Mutex
	inos []uint64
}

func (q *holdQueue) Queue(ino uint64) error {
	q.mu.Lock()
	q.inos = append(q.inos, ino)
	q.mu.Unlock()
	return nil
}

func (q *holdQueue) Flush() {}

func (q *holdQueue) take() []uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.inos
	q.inos = nil
	return out
}

// newHeldVolume formats and opens a 256 MiB volume whose released inodes
// wait in a holdQueue for the test to free them.
func newHeldVolume(t *testing.T) (*xfs.Volume, string, *holdQueue) {
	t.Helper()
	img := filepath.Join(t.TempDir(), "held.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{LazyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	q := &holdQueue{}
	v.Space().SetInactiveQueue(q)
	return v, img, q
}

func freeBlocks(t *testing.T, v *xfs.Volume) uint64 {
	t.Helper()
	st, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	return st.FreeBlocks
}

// spaceCheck is a volume's free blocks plus those its allocated inode
// chunks take (which stay allocated when their inodes are freed): it
// comes back to its first value once every file made since is freed.
func spaceCheck(t *testing.T, v *xfs.Volume) uint64 {
	t.Helper()
	st, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	g := v.Geometry()
	return st.FreeBlocks + st.Inodes*uint64(g.InodeSize)/uint64(g.BlockSize)
}

// checkLeft checks what a test left on v: inodes more inodes in use than
// st0 counted, and blocks fewer free blocks than base, spaceCheck's value
// when st0 was taken.
func checkLeft(t *testing.T, v *xfs.Volume, st0 xfs.Statfs, base, inodes, blocks uint64) {
	t.Helper()
	st, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	if used, want := st.Inodes-st.FreeInodes, st0.Inodes-st0.FreeInodes+inodes; used != want {
		t.Errorf("%d inodes in use, want %d", used, want)
	}
	if got := spaceCheck(t, v); got != base-blocks {
		t.Errorf("%d free blocks and inode chunk blocks, want %d", got, base-blocks)
	}
}

// writeFile creates name in dir with n bytes written in chunks of chunk,
// interleaved with another file's so the data lands in several extents.
func writeFile(t *testing.T, v *xfs.Volume, dir format.Ino, name string, n, chunk int, seed byte) format.Ino {
	t.Helper()
	ino, err := v.Names().Create(dir, name, xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	buf := bytes.Repeat([]byte{seed}, chunk)
	for off := 0; off < n; off += chunk {
		if _, err := v.Files().WriteAt(ino, buf[:min(chunk, n-off)], int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Xattrs().Set(ino, "user.k", []byte(name), 0); err != nil {
		t.Fatal(err)
	}
	return ino
}

// TestHandleKeepsUnlinkedInode: an open handle keeps an unlinked file
// readable and its space in use; the last Close frees both.
func TestHandleKeepsUnlinkedInode(t *testing.T) {
	img := filepath.Join(t.TempDir(), "h.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := freeBlocks(t, v)
	ino := writeFile(t, v, v.Root(), "f", 1<<20, 1<<20, 'x')
	h1, err := v.Files().Open(ino)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := v.Files().Open(ino)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Names().Unlink(v.Root(), "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Files().Open(ino); err == nil {
		t.Error("Open of an inode without links succeeded")
	}
	for _, h := range []*xfs.Handle{h1, h2} {
		got := make([]byte, 1<<20)
		if _, err := v.Files().ReadAt(ino, got, 0); err != nil || !bytes.Equal(got, bytes.Repeat([]byte{'x'}, 1<<20)) {
			t.Fatalf("unlinked file unreadable through its handle: %v", err)
		}
		if v.Space().Unlinked() != 1 || freeBlocks(t, v) >= base {
			t.Fatalf("freed while a handle is open: %d unlinked", v.Space().Unlinked())
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if v.Space().Unlinked() != 0 || freeBlocks(t, v) != base {
		t.Errorf("after the last Close: %d unlinked, %d free blocks, want 0 and %d", v.Space().Unlinked(), freeBlocks(t, v), base)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// TestUnlinkedListsAnyOrder: hundreds of inodes wait on the same AG's
// unlinked lists at once and are freed in random order by concurrent
// inactivations while more files are unlinked; afterwards every block is
// free again, xfs_repair is clean and the kernel sees what is left. A
// Close with inodes still listed (and a handle never closed) frees them.
func TestUnlinkedListsAnyOrder(t *testing.T) {
	for _, seed := range []int64{1, 2} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { unlinkedAnyOrder(t, seed) })
	}
}

func unlinkedAnyOrder(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	v, img, q := newHeldVolume(t)
	base := spaceCheck(t, v)
	d, err := v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	const files = 300
	for i := range files {
		size := []int{0, 100, 4096, 70000, 300000}[rng.Intn(5)]
		writeFile(t, v, d, fmt.Sprintf("f%03d", i), size, 4096*(1+rng.Intn(3)), byte(i))
	}
	for _, i := range rng.Perm(files) {
		if err := v.Names().Unlink(d, fmt.Sprintf("f%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if v.Space().Unlinked() != files {
		t.Fatalf("%d inodes unlinked, want %d", v.Space().Unlinked(), files)
	}
	// Free them in random order from four goroutines, two one at a time
	// and two in batches of random sizes (shared transactions whose
	// members' list neighbours are members, other workers' inodes, or
	// inodes being pushed), while a fifth keeps creating and unlinking in
	// the same directory (pushes on the same lists).
	inos := q.take()
	rng.Shuffle(len(inos), func(i, j int) { inos[i], inos[j] = inos[j], inos[i] })
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		var mine []format.Ino
		for i := w; i < len(inos); i += 4 {
			mine = append(mine, format.Ino(inos[i]))
		}
		sizes := rand.New(rand.NewSource(seed*10 + int64(w)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for len(mine) > 0 {
				n := 1
				if w%2 == 1 {
					n = min(len(mine), 1+sizes.Intn(40))
				}
				for _, err := range inactivateSome(v, mine[:n]) {
					if err != nil {
						errs <- err
						return
					}
				}
				mine = mine[n:]
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 100 {
			name := fmt.Sprintf("g%03d", i)
			ino, err := v.Names().Create(d, name, xfs.Attrs{Mode: 0o644})
			if err == nil {
				_, err = v.Files().WriteAt(ino, []byte("short lived"), 0)
			}
			if err == nil {
				err = v.Names().Unlink(d, name)
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The directory goes too, so every block it took comes back.
	if err := v.Names().Rmdir(v.Root(), "d"); err != nil {
		t.Fatal(err)
	}
	for _, ino := range q.take() {
		if _, err := v.Space().Inactivate(format.Ino(ino)); err != nil {
			t.Fatal(err)
		}
	}
	if n := v.Space().Unlinked(); n != 0 {
		t.Fatalf("%d inodes still unlinked", n)
	}
	if got := spaceCheck(t, v); got != base {
		t.Errorf("%d free blocks and inode chunk blocks, want %d as before the files", got, base)
	}
	// Leave some on the lists, one of them open, for Close to free.
	keep := writeFile(t, v, v.Root(), "kept", 5000, 4096, 'k')
	writeFile(t, v, v.Root(), "gone", 9000, 4096, 'g')
	if _, err := v.Files().Open(keep); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"kept", "gone"} {
		if err := v.Names().Unlink(v.Root(), n); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	v, err = xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := spaceCheck(t, v); got != base {
		t.Errorf("after Close: %d free blocks and inode chunk blocks, want %d", got, base)
	}
	v.Close()
}

// inactivateSome inactivates inos, one alone or several through
// InactivateBatch, and returns the errors.
func inactivateSome(v *xfs.Volume, inos []format.Ino) []error {
	if len(inos) == 1 {
		_, err := v.Space().Inactivate(inos[0])
		return []error{err}
	}
	_, errs := v.Space().InactivateBatch(inos)
	return errs
}

// TestCrashWithUnlinkedLists: a power cut while many unlinked inodes wait
// for inactivation, some half freed, leaves them on the lists; our
// recovery and the kernel's each free them all, with xfs_repair clean.
func TestCrashWithUnlinkedLists(t *testing.T) {
	base := filepath.Join(t.TempDir(), "c.img")
	if _, err := mkfs.Format(base, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	f, closeBase, err := dev.OpenFault(base)
	if err != nil {
		t.Fatal(err)
	}
	defer closeBase()
	v, err := xfs.OpenDevice(f, xfs.Options{LazyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	free0 := freeBlocks(t, v)
	q := &holdQueue{}
	v.Space().SetInactiveQueue(q)
	const files = 60
	for i := range files {
		// Big enough for several inactivation transactions each (the
		// writes of 60 files interleave, so extents stay short).
		writeFile(t, v, v.Root(), fmt.Sprintf("f%03d", i), 600*4096, 4096, byte(i))
	}
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	for i := range files {
		if err := v.Names().Unlink(v.Root(), fmt.Sprintf("f%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	inos := q.take()
	for _, ino := range inos[:files/3] {
		if _, err := v.Space().Inactivate(format.Ino(ino)); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Force(); err != nil {
		t.Fatal(err)
	}
	// Cut in the middle of inactivating the next files: the log holds
	// part of their truncation.
	writes, _ := f.Stats()
	f.CutAt(writes + 3)
	for _, ino := range inos[files/3 : files/3+3] {
		v.Space().Inactivate(format.Ino(ino))
		v.Force()
	}
	f.Cut()
	xfs.Abandon(v)
	img := filepath.Join(t.TempDir(), "crash.img")
	oracle.CopySparse(t, base, img)
	if err := f.Image(img, dev.Crash{}); err != nil {
		t.Fatal(err)
	}
	kernelImg := filepath.Join(t.TempDir(), "k.img")
	oracle.CopySparse(t, img, kernelImg)

	v, err = xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Of the three being inactivated at the cut, how many finished
	// depends on how many device writes a force takes.
	st, _ := v.Recovery()
	if st.Unlinked < files-files/3-3 || v.Space().Unlinked() != 0 {
		t.Errorf("recovery freed %d unlinked inodes (%d left), want at least %d", st.Unlinked, v.Space().Unlinked(), files-files/3-3)
	}
	if got := freeBlocks(t, v); got != free0 {
		t.Errorf("after recovery %d free blocks, want %d", got, free0)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)

	oracle.Require(t, oracle.ToolMount)
	if snap := kernelReplay(t, kernelImg); len(snap) != 1 {
		t.Errorf("the kernel sees %d entries after replay, want only the root", len(snap))
	}
	kv, err := xfs.Open(kernelImg, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if got := freeBlocks(t, kv); got != free0 {
		t.Errorf("after the kernel's recovery %d free blocks, want %d", got, free0)
	}
}

// TestCleanLogWithUnlinkedInodes: a volume closed cleanly with inodes
// still on its unlinked lists (which this engine never leaves, but
// another writer might) has them freed by the next writable open.
func TestCleanLogWithUnlinkedInodes(t *testing.T) {
	img := filepath.Join(t.TempDir(), "clean.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	free0 := freeBlocks(t, v)
	v.Space().SetInactiveQueue(&holdQueue{})
	for i := range 10 {
		writeFile(t, v, v.Root(), fmt.Sprintf("f%d", i), 50000, 4096, 'c')
		if err := v.Names().Unlink(v.Root(), fmt.Sprintf("f%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := xfs.CloseKeepingUnlinked(v); err != nil {
		t.Fatal(err)
	}
	v, err = xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := v.Space().Unlinked(); n != 0 || freeBlocks(t, v) != free0 {
		t.Errorf("after a writable open: %d unlinked, %d free blocks (want 0, %d)", n, freeBlocks(t, v), free0)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// TestOpenAt: OpenAt holds what a name names, refuses names that are not
// one entry, and a directory held by it stays readable but takes no new
// names once removed; the last Close frees it.
func TestOpenAt(t *testing.T) {
	img := filepath.Join(t.TempDir(), "o.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	f := writeFile(t, v, d, "f", 4096, 4096, 'f')
	h, err := v.Files().OpenAt(d, "f")
	if err != nil || h.Ino() != f {
		t.Fatalf("OpenAt(d, f) = %v, %v; want inode %d", h, err, f)
	}
	for name, want := range map[string]error{
		"missing": xfs.ErrNotFound, "": xfs.ErrInvalid, ".": xfs.ErrInvalid, "..": xfs.ErrInvalid,
		"f/g": xfs.ErrNotFound, string(bytes.Repeat([]byte{'n'}, 256)): xfs.ErrNameTooLong,
	} {
		if _, err := v.Files().OpenAt(d, name); !errors.Is(err, want) {
			t.Errorf("OpenAt(d, %.10q): %v, want %v", name, err, want)
		}
	}
	if err := v.Names().Unlink(d, "f"); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4096)
	if _, err := v.Files().ReadAt(f, got, 0); err != nil || !bytes.Equal(got, bytes.Repeat([]byte{'f'}, 4096)) {
		t.Fatalf("unlinked file unreadable through OpenAt's handle: %v", err)
	}
	hd, err := v.Files().OpenAt(v.Root(), "d")
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Names().Rmdir(v.Root(), "d"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Names().Mkdir(d, "late", xfs.Attrs{Mode: 0o755}); !errors.Is(err, xfs.ErrNotFound) {
		t.Errorf("Mkdir in a removed, held directory: %v, want ErrNotFound", err)
	}
	if _, err := v.Names().ReadDir(d); err != nil {
		t.Errorf("ReadDir of a removed, held directory: %v", err)
	}
	for _, hh := range []*xfs.Handle{h, hd} {
		if err := hh.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := v.Space().Unlinked(); n != 0 {
		t.Errorf("%d inodes still unlinked after the last Close", n)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// TestSmallInodeFreedInOneTransaction: an unlinked inode with a short
// extent list is truncated and freed in a single transaction (a 4 KiB
// DELETE costs an unlink and one more commit); one with more extents than
// that path takes is truncated in bounded steps first. Either way every
// block comes back and xfs_repair is clean.
func TestSmallInodeFreedInOneTransaction(t *testing.T) {
	img := filepath.Join(t.TempDir(), "small.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := &holdQueue{}
	v.Space().SetInactiveQueue(q)
	free0 := freeBlocks(t, v)
	small := writeFile(t, v, v.Root(), "small", 3*4096, 4096, 1)
	// Two files written a block at a time in turn: each gets an extent
	// per block.
	var big [2]format.Ino
	for i := range big {
		if big[i], err = v.Names().Create(v.Root(), fmt.Sprintf("big%d", i), xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	block := bytes.Repeat([]byte{7}, 4096)
	for off := int64(0); off < 300*4096; off += 4096 {
		for _, ino := range big {
			if _, err := v.Files().WriteAt(ino, block, off); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, name := range []string{"small", "big0", "big1"} {
		if err := v.Names().Unlink(v.Root(), name); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Force(); err != nil {
		t.Fatal(err)
	}
	inos := map[format.Ino]bool{}
	for _, ino := range q.take() {
		inos[format.Ino(ino)] = true
	}
	if !inos[small] || !inos[big[0]] || !inos[big[1]] {
		t.Fatalf("queued %v, want %d, %d and %d", inos, small, big[0], big[1])
	}
	commits := func(ino format.Ino) (extents uint64, n int64) {
		before := v.LogStats().Commits
		extents, err := v.Space().Inactivate(ino)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Force(); err != nil {
			t.Fatal(err)
		}
		return extents, v.LogStats().Commits - before
	}
	if extents, n := commits(small); extents != 1 || n != 1 {
		t.Errorf("small inode: %d extents freed in %d commits, want 1 in 1", extents, n)
	}
	for _, ino := range big[:] {
		if extents, n := commits(ino); extents < 200 || n < 2 {
			t.Errorf("fragmented inode %d: %d extents freed in %d commits, want 200+ in 2 or more", ino, extents, n)
		}
	}
	if got := freeBlocks(t, v); got != free0 {
		t.Errorf("%d free blocks after freeing everything, want %d", got, free0)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, img)
}

// TestInactivateBatchSharesCommits: inodes unlinked in random order (so
// many share AGI buckets, and list neighbours fall in and out of a
// batch) and freed through InactivateBatch take far fewer commits than
// inodes; an inode already freed in a batch is left alone; afterwards
// every block and inode is free again, xfs_repair is clean, and the
// kernel sees only the files kept.
func TestInactivateBatchSharesCommits(t *testing.T) {
	oracle.Require(t, oracle.ToolMount)
	rng := rand.New(rand.NewSource(7))
	v, img, q := newHeldVolume(t)
	st0, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	base := spaceCheck(t, v)
	// Directories in different AGs, so that a batch spans AGs.
	var dirs []format.Ino
	for i := range 4 {
		d, err := v.Names().Mkdir(v.Root(), fmt.Sprintf("d%d", i), xfs.Attrs{Mode: 0o755})
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	const files = 160
	for i := range files {
		size := []int{0, 100, 5000, 20000}[rng.Intn(4)]
		writeFile(t, v, dirs[i%4], fmt.Sprintf("f%03d", i), size, 4096, byte(i))
	}
	keep := writeFile(t, v, v.Root(), "kept", 7000, 4096, 'k')
	for _, i := range rng.Perm(files) {
		if err := v.Names().Unlink(dirs[i%4], fmt.Sprintf("f%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var inos []format.Ino
	ags := map[format.AgNumber]bool{}
	g := v.Geometry()
	for _, ino := range q.take() {
		inos = append(inos, format.Ino(ino))
		ag, _ := g.InoToAg(format.Ino(ino))
		ags[ag] = true
	}
	if len(inos) != files || len(ags) < 2 {
		t.Fatalf("%d inodes queued in %d AGs, want %d in 2 or more", len(inos), len(ags), files)
	}
	if err := v.Force(); err != nil {
		t.Fatal(err)
	}
	before := v.LogStats().Commits
	for start := 0; start < len(inos); start += 32 {
		chunk := inos[start:min(start+32, len(inos))]
		if start > 0 {
			// The last inode of the chunk before, freed already.
			chunk = append([]format.Ino{inos[start-1]}, chunk...)
		}
		extents, errs := v.Space().InactivateBatch(chunk)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("inode %d: %v", chunk[i], err)
			}
		}
		t.Logf("batch of %d: %d extents", len(chunk), extents)
	}
	if err := v.Force(); err != nil {
		t.Fatal(err)
	}
	commits := v.LogStats().Commits - before
	t.Logf("%d inodes freed in %d commits", files, commits)
	if commits*4 > files {
		t.Errorf("%d inodes freed in %d commits, want fewer than a quarter as many", files, commits)
	}
	if n := v.Space().Unlinked(); n != 0 {
		t.Fatalf("%d inodes still unlinked", n)
	}
	for i := range dirs {
		if err := v.Names().Rmdir(v.Root(), fmt.Sprintf("d%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, ino := range q.take() {
		if _, err := v.Space().Inactivate(format.Ino(ino)); err != nil {
			t.Fatal(err)
		}
	}
	// Only "kept" is left of what the test made: one inode and two blocks.
	checkLeft(t, v, st0, base, 1, 2)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	defer oracle.Unmount(t, mnt)
	entries, err := os.ReadDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "kept" {
		t.Errorf("kernel sees %v, want [kept]", names)
	}
	data, err := os.ReadFile(filepath.Join(mnt, "kept"))
	if err != nil || !bytes.Equal(data, bytes.Repeat([]byte{'k'}, 7000)) {
		t.Errorf("kernel reads kept (inode %d): %d bytes, %v", keep, len(data), err)
	}
}
