package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestUnlinkFiles: one call removes a directory's files in shared
// transactions (far fewer commits than names) and reports, name by name,
// what UnlinkFile would: a directory ErrIsDir, a symlink ErrInvalid, a
// missing or repeated name ErrNotFound, "." and ".." ErrInvalid. Both
// names of a hard-linked file go, a file held open stays readable until
// its Close, and once the released inodes are freed every block is back;
// xfs_repair is clean and the kernel sees exactly what the engine does.
func TestUnlinkFiles(t *testing.T) {
	oracle.Require(t, oracle.ToolMount)
	rng := rand.New(rand.NewSource(11))
	v, img, q := newHeldVolume(t)
	base := spaceCheck(t, v)
	st0, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	d, err := v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	const files = 300 // more than one hold of the directory's lock (unlinkChunk)
	var names []string
	for i := range files {
		name := fmt.Sprintf("f%03d", i)
		writeFile(t, v, d, name, []int{0, 100, 5000, 20000}[rng.Intn(4)], 4096, byte(i))
		names = append(names, name)
	}
	if _, err := v.Names().Mkdir(d, "sub", xfs.Attrs{Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Names().Symlink(d, "ln", "f000", xfs.Attrs{Mode: 0o777}); err != nil {
		t.Fatal(err)
	}
	f7, err := v.Names().Lookup(d, "f007")
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Names().Link(f7, d, "f007-link"); err != nil {
		t.Fatal(err)
	}
	f9, err := v.Names().Lookup(d, "f009")
	if err != nil {
		t.Fatal(err)
	}
	st9, err := v.Stat(f9)
	if err != nil {
		t.Fatal(err)
	}
	want9 := make([]byte, st9.Size)
	if _, err := v.Files().ReadAt(f9, want9, 0); err != nil {
		t.Fatal(err)
	}
	open9, err := v.Files().Open(f9)
	if err != nil {
		t.Fatal(err)
	}
	kept := writeFile(t, v, d, "kept", 7000, 4096, 'k')

	batch := append(slices.Clone(names), "f007-link", "sub", "ln", "missing", "f005", ".", "..")
	rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
	if err := v.Force(); err != nil {
		t.Fatal(err)
	}
	before := v.LogStats().Commits
	errs := v.Names().UnlinkFiles(d, batch)
	if err := v.Force(); err != nil {
		t.Fatal(err)
	}
	commits := v.LogStats().Commits - before
	seen := map[string]bool{}
	for i, name := range batch {
		var want error
		switch {
		case name == "sub":
			want = xfs.ErrIsDir
		case name == "ln" || name == "." || name == "..":
			want = xfs.ErrInvalid
		case name == "missing" || seen[name]:
			want = xfs.ErrNotFound
		}
		seen[name] = true
		if want == nil && errs[i] != nil || want != nil && !errors.Is(errs[i], want) {
			t.Errorf("%q: %v, want %v", name, errs[i], want)
		}
	}
	t.Logf("%d names removed in %d commits", files+1, commits)
	if commits*8 > files {
		t.Errorf("%d names removed in %d commits, want fewer than an eighth as many", files+1, commits)
	}
	left, err := v.Names().ReadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	var leftNames []string
	for _, e := range left {
		leftNames = append(leftNames, e.Name)
	}
	slices.Sort(leftNames)
	if want := []string{"kept", "ln", "sub"}; !slices.Equal(leftNames, want) {
		t.Errorf("directory holds %v, want %v", leftNames, want)
	}
	if _, err := v.Files().Open(f9); err == nil {
		t.Error("Open of an unlinked inode succeeded")
	}
	got9 := make([]byte, len(want9))
	if _, err := v.Files().ReadAt(f9, got9, 0); err != nil || !bytes.Equal(got9, want9) {
		t.Errorf("open file unreadable after UnlinkFiles: %v", err)
	}
	if err := open9.Close(); err != nil {
		t.Fatal(err)
	}
	released := q.take()
	if len(released) != files {
		t.Fatalf("%d inodes released, want %d", len(released), files)
	}
	for _, ino := range released {
		if _, err := v.Space().Inactivate(format.Ino(ino)); err != nil {
			t.Fatal(err)
		}
	}
	if n := v.Space().Unlinked(); n != 0 {
		t.Fatalf("%d inodes still unlinked", n)
	}
	if n := xfs.HeldInodes(v); n != 0 {
		t.Errorf("%d inode handles still held", n)
	}
	// Left of what the test made: d, sub, ln and kept (7000 bytes, two
	// blocks; sub and the symlink live in their inodes, and d keeps the
	// blocks a directory that held 300 names does not give back).
	std, err := v.Stat(d)
	if err != nil {
		t.Fatal(err)
	}
	checkLeft(t, v, st0, base, 4, 2+std.Blocks)
	engine := engineSnapshot(t, v)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	if diff := kernelSnapshot(t, img).Diff(engine); len(diff) > 0 {
		t.Errorf("kernel and engine differ (kept is inode %d):\n%v", kept, diff)
	}
}

// TestUnlinkFilesConcurrent: bulk removals race single unlinks, creates
// of the same names and open handles in one directory; every name is
// removed exactly once (one caller gets nil, any other ErrNotFound), and
// afterwards xfs_repair is clean and the kernel sees what the engine does.
func TestUnlinkFilesConcurrent(t *testing.T) {
	oracle.Require(t, oracle.ToolMount)
	v, img, q := newHeldVolume(t)
	d, err := v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	const rounds, files = 20, 64
	var wg sync.WaitGroup
	var mu sync.Mutex
	removed := map[string]int{}
	note := func(name string, err error) {
		if err != nil && !errors.Is(err, xfs.ErrNotFound) {
			t.Errorf("%s: %v", name, err)
			return
		}
		if err == nil {
			mu.Lock()
			removed[name]++
			mu.Unlock()
		}
	}
	for r := range rounds {
		var names []string
		for i := range files {
			name := fmt.Sprintf("r%02d-%03d", r, i)
			if _, err := v.Names().Create(d, name, xfs.Attrs{Mode: 0o644}); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
		h, err := v.Files().Open(mustLookup(t, v, d, names[0]))
		if err != nil {
			t.Fatal(err)
		}
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewSource(int64(r*10 + w)))
				order := slices.Clone(names)
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				if w == 2 {
					for _, name := range order[:files/4] {
						note(name, v.Names().Unlink(d, name))
					}
					return
				}
				for i, err := range v.Names().UnlinkFiles(d, order) {
					note(order[i], err)
				}
			}()
		}
		wg.Wait()
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		for _, ino := range q.take() {
			if _, err := v.Space().Inactivate(format.Ino(ino)); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range names {
			if removed[name] != 1 {
				t.Fatalf("%s removed %d times", name, removed[name])
			}
		}
	}
	closeDrained(t, v, img)
}

// closeDrained requires that no inode waits on an unlinked list and no
// handle is held, closes v, and checks it with the oracles: xfs_repair
// is clean and the kernel sees what the engine saw.
func closeDrained(t *testing.T, v *xfs.Volume, img string) {
	t.Helper()
	if n := v.Space().Unlinked(); n != 0 {
		t.Fatalf("%d inodes still unlinked", n)
	}
	if n := xfs.HeldInodes(v); n != 0 {
		t.Errorf("%d inode handles still held", n)
	}
	engine := engineSnapshot(t, v)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	if diff := kernelSnapshot(t, img).Diff(engine); len(diff) > 0 {
		t.Errorf("kernel and engine differ:\n%v", diff)
	}
}

func mustLookup(t *testing.T, v *xfs.Volume, dir format.Ino, name string) format.Ino {
	t.Helper()
	ino, err := v.Names().Lookup(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return ino
}
