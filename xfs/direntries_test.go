package xfs_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// newEntriesVolume formats and opens a small volume with a directory "d".
func newEntriesVolume(t *testing.T) (v *xfs.Volume, img string, d format.Ino) {
	t.Helper()
	img = filepath.Join(t.TempDir(), "e.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{LazyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err = v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	return v, img, d
}

// entryFile is what the model expects behind a name: the xattr user.k
// holds the name and a serial, and the file is serial bytes long, so an
// inode read for the wrong name or in a stale state shows.
type entryFile struct{ serial int }

// makeEntryFile creates (or, through a rename over it, replaces) name in
// dir with the content of serial.
func makeEntryFile(v *xfs.Volume, dir format.Ino, name string, serial int, replace bool) error {
	tmp := name
	if replace {
		tmp = "tmp." + name
	}
	ino, err := v.Names().Create(dir, tmp, xfs.Attrs{Mode: 0o644})
	if err != nil {
		return err
	}
	if err := v.Xattrs().Set(ino, "user.k", fmt.Appendf(nil, "%s#%d", name, serial), 0); err != nil {
		return err
	}
	if serial > 0 {
		if _, err := v.Files().WriteAt(ino, make([]byte, serial), 0); err != nil {
			return err
		}
	}
	if replace {
		return v.Names().Rename(dir, tmp, dir, name)
	}
	return nil
}

// readEntryFile decodes what ReadEntryInodes gave: the name and serial
// its xattr holds, and its size and link count.
func readEntryFile(e *xfs.EntryInode) (label string, st xfs.Stat, err error) {
	err = e.Xattrs(func(ns string, name, value []byte) error {
		if ns == "user" && string(name) == "k" {
			label = string(value)
		}
		return nil
	})
	return label, e.Stat(), err
}

// TestReadEntryInodesModel: random changes between reading a directory
// and reading the inodes of its entries by number. With no change to the
// directory every inode is the one its name holds, as it is now (a file
// changed meanwhile shows the change); after any change to the directory
// (create, unlink, replace, its own xattr) nothing is read. Inodes are
// freed at once (numbers come back for new files) or held on a queue.
func TestReadEntryInodesModel(t *testing.T) {
	for _, seed := range []int64{1, 2, 3, 4} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { readEntryInodesModel(t, seed) })
	}
}

func readEntryInodesModel(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	v, img, d := newEntriesVolume(t)
	q := &holdQueue{}
	if seed%2 == 0 {
		v.Space().SetInactiveQueue(q) // unlinked inodes wait, queued, unfreed
	}
	model := map[string]entryFile{}
	serial := 0
	names := func() []string { return slices.Sorted(maps.Keys(model)) }
	for i := range 40 {
		serial++
		name := fmt.Sprintf("f%02d", i)
		if err := makeEntryFile(v, d, name, serial, false); err != nil {
			t.Fatal(err)
		}
		model[name] = entryFile{serial}
	}
	stale, fresh := 0, 0
	for round := range 400 {
		ents, at, err := v.Names().ReadDirVersion(d)
		if err != nil {
			t.Fatal(err)
		}
		dirChanged := false
		for range rng.Intn(3) {
			serial++
			all := names()
			pick := all[rng.Intn(len(all))]
			var err error
			switch op := rng.Intn(5); {
			case op == 0 || len(all) < 10:
				name := fmt.Sprintf("n%04d", serial)
				err = makeEntryFile(v, d, name, serial, false)
				model[name] = entryFile{serial}
				dirChanged = true
			case op == 1:
				err = v.Names().Unlink(d, pick)
				delete(model, pick)
				dirChanged = true
			case op == 2:
				err = makeEntryFile(v, d, pick, serial, true)
				model[pick] = entryFile{serial}
				dirChanged = true
			case op == 3:
				err = v.Xattrs().Set(d, "user.touch", fmt.Append(nil, serial), 0)
				dirChanged = true
			default:
				// A change to a file, not to the directory: read as it
				// is now.
				ino, lerr := v.Names().Lookup(d, pick)
				if lerr != nil {
					t.Fatal(lerr)
				}
				if err = v.Xattrs().Set(ino, "user.k", fmt.Appendf(nil, "%s#%d", pick, serial), 0); err == nil {
					_, err = v.Files().WriteAt(ino, make([]byte, serial), 0)
				}
				model[pick] = entryFile{serial}
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		// Some queued inodes are freed (their numbers come back), the
		// others stay on their unlinked lists until Close.
		for _, ino := range q.take() {
			if rng.Intn(2) == 0 {
				if _, err := v.Space().Inactivate(format.Ino(ino)); err != nil {
					t.Fatal(err)
				}
			}
		}
		// A random subset of the entries, in random order.
		rng.Shuffle(len(ents), func(i, j int) { ents[i], ents[j] = ents[j], ents[i] })
		ents = ents[:rng.Intn(len(ents)+1)]
		inos := make([]format.Ino, len(ents))
		for i, e := range ents {
			inos[i] = e.Ino
		}
		seen := 0
		current, err := v.Names().ReadEntryInodes(d, at, inos, func(i int, e *xfs.EntryInode) error {
			if dirChanged {
				return fmt.Errorf("entry %q read although the directory changed", ents[i].Name)
			}
			if i != seen {
				return fmt.Errorf("entry %d read after %d", i, seen)
			}
			seen++
			label, st, err := readEntryFile(e)
			if err != nil {
				return err
			}
			want := model[ents[i].Name]
			if e.Ino() != inos[i] || label != fmt.Sprintf("%s#%d", ents[i].Name, want.serial) || st.Size != int64(want.serial) || st.Nlink != 1 {
				return fmt.Errorf("entry %q: inode %d (%d), label %q, size %d, %d links; want serial %d", ents[i].Name, e.Ino(), inos[i], label, st.Size, st.Nlink, want.serial)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if current == dirChanged || (current && seen != len(inos)) {
			t.Fatalf("round %d: current %v after a directory change %v, %d of %d read", round, current, dirChanged, seen, len(inos))
		}
		if current {
			fresh++
		} else {
			stale++
		}
	}
	if stale == 0 || fresh == 0 {
		t.Fatalf("%d stale and %d current rounds: the test did not exercise both", stale, fresh)
	}
	checkEntryRefusals(t, v, d)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// checkEntryRefusals: numbers a directory cannot name at its version are
// refused or skipped, never read: an unlinked inode still held by a
// handle (on its unlinked list), an unlinked one queued for
// inactivation, the directory itself, numbers outside the volume; and
// the directory must be one.
func checkEntryRefusals(t *testing.T, v *xfs.Volume, d format.Ino) {
	t.Helper()
	if err := makeEntryFile(v, d, "held", 1, false); err != nil {
		t.Fatal(err)
	}
	held, err := v.Files().OpenAt(d, "held")
	if err != nil {
		t.Fatal(err)
	}
	q := &holdQueue{}
	v.Space().SetInactiveQueue(q)
	if err := makeEntryFile(v, d, "queued", 1, false); err != nil {
		t.Fatal(err)
	}
	queued, err := v.Names().Lookup(d, "queued")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"held", "queued"} {
		if err := v.Names().Unlink(d, name); err != nil {
			t.Fatal(err)
		}
	}
	st, err := v.Stat(d)
	if err != nil {
		t.Fatal(err)
	}
	never := func(i int, e *xfs.EntryInode) error {
		return fmt.Errorf("inode %d without a link was read", e.Ino())
	}
	if current, err := v.Names().ReadEntryInodes(d, st.Version(), []format.Ino{held.Ino(), queued}, never); !current || err != nil {
		t.Errorf("unlinked inodes: current %v, %v; want them skipped", current, err)
	}
	for _, ino := range []format.Ino{d, 0, 1 << 60} {
		_, err := v.Names().ReadEntryInodes(d, st.Version(), []format.Ino{ino}, never)
		if ce := (*format.CorruptError)(nil); !errors.As(err, &ce) {
			t.Errorf("inode %d as an entry: %v, want a corruption error", ino, err)
		}
	}
	if _, err := v.Names().ReadEntryInodes(held.Ino(), st.Version(), nil, never); !errors.Is(err, xfs.ErrNotDir) {
		t.Errorf("a file as the directory: %v, want ErrNotDir", err)
	}
	held.Close()
	v.Space().SetInactiveQueue(nil)
	for _, ino := range q.take() {
		if _, err := v.Space().Inactivate(format.Ino(ino)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadEntryInodesUnderChurn: writers replace, create and unlink names
// of one directory while readers read it and then its entries' inodes by
// number, for the -race detector too. Every inode read is the one its
// name held: its label names the entry, and it has its link.
func TestReadEntryInodesUnderChurn(t *testing.T) {
	v, img, d := newEntriesVolume(t)
	const writers, names = 3, 24
	for i := range names {
		if err := makeEntryFile(v, d, fmt.Sprintf("k%02d", i), 0, false); err != nil {
			t.Fatal(err)
		}
	}
	var (
		stop             atomic.Bool
		writing, reading sync.WaitGroup
		current, read    atomic.Int64
		errs             = make(chan error, writers+2)
	)
	for w := range writers {
		writing.Add(1)
		go func() {
			defer writing.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 1; !stop.Load(); i++ {
				// Names of writer w: k<n> with n%writers == w, so no two
				// writers race on one name.
				name := fmt.Sprintf("k%02d", w+writers*rng.Intn(names/writers))
				// A name appears only by a rename of a labelled file
				// (replace=true, whether or not the name exists): a plain
				// Create would show it unlabelled until its SetXattr.
				var err error
				if rng.Intn(4) == 0 {
					if err = v.Names().Unlink(d, name); errors.Is(err, xfs.ErrNotFound) {
						err = nil
					}
				} else {
					err = makeEntryFile(v, d, name, i, true)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for r := range 2 {
		reading.Add(1)
		go func() {
			defer reading.Done()
			for range 300 {
				if err := readEntriesOnce(v, d, 4+r, &read, &current); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	reading.Wait()
	stop.Store(true)
	writing.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d inodes read in %d current batches", read.Load(), current.Load())
	if read.Load() == 0 {
		t.Fatal("no batch was current: the test read nothing")
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// readEntriesOnce reads directory d, then the inodes of its "k" entries by
// number in batches of batch, until one finds d changed; each inode read
// must be labelled with its entry's name and be linked.
func readEntriesOnce(v *xfs.Volume, d format.Ino, batch int, read, current *atomic.Int64) error {
	ents, at, err := v.Names().ReadDirVersion(d)
	if err != nil {
		return err
	}
	var inos []format.Ino
	var keep []xfs.DirEntry
	for _, e := range ents {
		if e.Name[0] == 'k' {
			inos, keep = append(inos, e.Ino), append(keep, e)
		}
	}
	for start := 0; start < len(inos); start += batch {
		end := min(start+batch, len(inos))
		ok, err := v.Names().ReadEntryInodes(d, at, inos[start:end], func(i int, e *xfs.EntryInode) error {
			label, st, err := readEntryFile(e)
			name := keep[start+i].Name
			if err == nil && (len(label) <= len(name) || label[:len(name)+1] != name+"#" || st.Nlink != 1) {
				err = fmt.Errorf("entry %q read inode %d labelled %q with %d links", name, e.Ino(), label, st.Nlink)
			}
			read.Add(1)
			return err
		})
		if err != nil || !ok {
			return err
		}
		current.Add(1)
	}
	return nil
}

// TestUnlinkFile: UnlinkFile removes regular files only; a directory, a
// symlink and a missing name each give their error and change nothing.
func TestUnlinkFile(t *testing.T) {
	v, img, d := newEntriesVolume(t)
	for _, name := range []string{"f", "g"} {
		if _, err := v.Names().Create(d, name, xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.Names().Mkdir(d, "sub", xfs.Attrs{Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Names().Symlink(d, "link", "f", xfs.Attrs{Mode: 0o777}); err != nil {
		t.Fatal(err)
	}
	if err := v.Names().UnlinkFile(d, "f"); err != nil {
		t.Fatalf("UnlinkFile of a file: %v", err)
	}
	for name, want := range map[string]error{"f": xfs.ErrNotFound, "sub": xfs.ErrIsDir, "link": xfs.ErrInvalid} {
		if err := v.Names().UnlinkFile(d, name); !errors.Is(err, want) {
			t.Errorf("UnlinkFile(%q) = %v, want %v", name, err, want)
		}
	}
	for name, present := range map[string]bool{"f": false, "g": true, "sub": true, "link": true} {
		if _, err := v.Names().Lookup(d, name); (err == nil) != present {
			t.Errorf("after UnlinkFile: %q present=%v (%v)", name, err == nil, err)
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}
