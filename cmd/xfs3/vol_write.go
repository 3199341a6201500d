package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Shared machinery of the commands that change a volume: put, mkdir, rm,
// mv, ln, setfattr and rmfattr. Each opens the volume read-write (which
// takes the writer lock), makes its changes through the engine, where every
// step is one transaction, and closes the volume; an error from Close is the
// command's error.

// errReported is returned by a command that has already printed its errors
// (one line per failed operand, like rm(1) and mkdir(1)): exit status 1,
// nothing more to print.
var errReported = errors.New("errors were reported")

// writer is an open, writable volume and how to name things in messages.
type writer struct {
	v        *xfs.Volume
	vol      string // the VOLUME argument
	uid, gid uint32 // owner of new inodes
}

// openVolumeRW opens a volume file read-write. A volume file without any
// write permission bit is refused even for root, who could write it anyway:
// chmod a-w is how a volume is protected from changes.
func openVolumeRW(path string) (*xfs.Volume, error) {
	if path == "" {
		return nil, usagef("empty VOLUME path")
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o222 == 0 {
		return nil, fmt.Errorf("%s: %w: the volume file has no write permission (mode %04o); make it writable (chmod u+w) to change it", path, xfs.ErrReadOnly, fi.Mode().Perm())
	}
	return xfs.Open(path, xfs.Options{})
}

// withWriter opens vol read-write, runs fn, and closes the volume, making
// every change durable. The first error wins; a failed Close is an error
// even when fn succeeded.
func withWriter(vol string, fn func(w *writer) error) (err error) {
	v, err := openVolumeRW(vol)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := v.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("%s: close: %w", vol, cerr)
		}
	}()
	return fn(&writer{v: v, vol: vol, uid: uint32(os.Getuid()), gid: uint32(os.Getgid())})
}

// report prints one operand's error the way finish would, for commands
// that go on with their other operands.
func report(e *env, name string, err error) {
	fmt.Fprintf(e.stderr, "xfs3: %s: %v\n", name, err)
}

// plainKinds are error kinds whose message says everything: the engine's
// own detail (the name again, quoted) is dropped from messages about them.
var plainKinds = []error{xfs.ErrNotFound, xfs.ErrExist, xfs.ErrNotDir, xfs.ErrIsDir, xfs.ErrNotEmpty, xfs.ErrNoData, xfs.ErrImmutable}

// pathErr is an error about path in the volume: "VOLUME: PATH: what".
func (w *writer) pathErr(path string, err error) error {
	return fmt.Errorf("%s: %s: %w", w.vol, displayName(path), err)
}

// fail is pathErr for an error from the engine.
func (w *writer) fail(path string, err error) error {
	return w.pathErr(path, kindOnly(err))
}

// kindOnly reduces an engine error to its kind when that is one of
// plainKinds.
func kindOnly(err error) error {
	for _, k := range plainKinds {
		if errors.Is(err, k) {
			return k
		}
	}
	return err
}

// splitPath splits a volume path into the path of its parent and its final
// name, ignoring trailing slashes. The root ("", "/", "//") has the name "".
func splitPath(p string) (parent, name string) {
	trimmed := strings.TrimRight(p, "/")
	i := strings.LastIndexByte(trimmed, '/')
	return trimmed[:i+1], trimmed[i+1:]
}

// joinPath appends name to a volume path for messages.
func joinPath(dir, name string) string {
	if dir == "" || strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// isDotName reports whether a final name cannot be created or removed:
// the root's empty name, "." or "..".
func isDotName(name string) bool { return name == "" || name == "." || name == ".." }

// entry is one name in a directory of the volume, which may not exist.
type entry struct {
	path string     // as given, for messages
	dir  format.Ino // the directory holding the name
	name string
	ino  format.Ino // 0 when the name does not exist
	st   xfs.Stat   // of ino, a final symlink not followed
}

func (en *entry) exists() bool { return en.ino != 0 }

// parentDir resolves the directory part of path, following every symlink
// in it, and checks that it is a directory.
func (w *writer) parentDir(path string) (format.Ino, error) {
	parent, _ := splitPath(path)
	ino, err := w.v.Names().LookupPath(parent, true)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", w.vol, err)
	}
	st, err := w.v.Stat(ino)
	if err != nil {
		return 0, w.fail(parent, err)
	}
	if !st.IsDir() {
		return 0, w.pathErr(strings.TrimRight(parent, "/"), xfs.ErrNotDir)
	}
	return ino, nil
}

// lookupEntry finds path's parent directory and the name in it. The name
// need not exist; a final symlink is not followed. path must have a real
// final name (see isDotName).
func (w *writer) lookupEntry(path string) (*entry, error) {
	dirIno, err := w.parentDir(path)
	if err != nil {
		return nil, err
	}
	_, name := splitPath(path)
	return w.entryIn(dirIno, name, path)
}

// entryIn looks name up in directory dirIno; path names it in messages.
func (w *writer) entryIn(dirIno format.Ino, name, path string) (*entry, error) {
	en := &entry{path: path, dir: dirIno, name: name}
	if len(name) > format.MaxNameLen {
		return nil, w.pathErr(path, fmt.Errorf("%w: the last name has %d bytes, at most %d are allowed", xfs.ErrNameTooLong, len(name), format.MaxNameLen))
	}
	ino, err := w.v.Names().Lookup(dirIno, name)
	switch {
	case errors.Is(err, xfs.ErrNotFound):
		return en, nil
	case err != nil:
		return nil, w.fail(path, err)
	}
	st, err := w.v.Stat(ino)
	if err != nil {
		return nil, w.fail(path, err)
	}
	en.ino, en.st = ino, st
	return en, nil
}

// dirAt reports whether path names an existing directory, following
// symlinks all the way, and returns it. Any failure to resolve path means
// "no"; the caller's own lookup then reports what is wrong.
func (w *writer) dirAt(path string) (format.Ino, bool) {
	ino, err := w.v.Names().LookupPath(path, true)
	if err != nil {
		return 0, false
	}
	st, err := w.v.Stat(ino)
	if err != nil || !st.IsDir() {
		return 0, false
	}
	return ino, true
}

// attrs returns the owner and mode of a new inode in directory dirIno, as
// Linux chooses them: the caller's user and group, except that a setgid
// directory passes on its group, and to new directories its setgid bit.
func (w *writer) attrs(dirIno format.Ino, mode uint32, isDir bool) (xfs.Attrs, error) {
	a := xfs.Attrs{Mode: mode & 0o7777, UID: w.uid, GID: w.gid}
	st, err := w.v.Stat(dirIno)
	if err != nil {
		return a, err
	}
	if st.Mode&0o2000 != 0 {
		a.GID = st.GID
		if isDir {
			a.Mode |= 0o2000
		}
	}
	return a, nil
}

// tempPrefix starts the names of files being written by put; they are
// renamed over their final name once complete.
const tempPrefix = ".xfs3-tmp-"

// createTemp makes a new inode under a fresh temporary name in dirIno with
// create, retrying when the name is taken.
func (w *writer) createTemp(dirIno format.Ino, create func(name string) (format.Ino, error)) (format.Ino, string, error) {
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s%016x", tempPrefix, rand.Uint64())
		ino, err := create(name)
		if errors.Is(err, xfs.ErrExist) && i < 10 {
			continue
		}
		return ino, name, err
	}
}

// replace makes the entry en hold a new inode atomically: create makes it
// under a temporary name in en's directory, fill completes it, and a rename
// puts it in place of whatever en named (never a directory). On failure the
// temporary name is removed again.
func (w *writer) replace(en *entry, create func(name string) (format.Ino, error), fill func(ino format.Ino) error) error {
	if en.exists() && en.st.IsDir() {
		return w.pathErr(en.path, fmt.Errorf("cannot overwrite a directory with a non-directory: %w", xfs.ErrIsDir))
	}
	ino, tmp, err := w.createTemp(en.dir, create)
	if err != nil {
		return w.fail(en.path, err)
	}
	err = fill(ino)
	if err == nil {
		if err = w.v.Names().Rename(en.dir, tmp, en.dir, en.name); err != nil {
			err = w.fail(en.path, err)
		}
	}
	if err != nil {
		if uerr := w.v.Names().Unlink(en.dir, tmp); uerr != nil {
			err = fmt.Errorf("%w (and the partial file %s could not be removed: %v)", err, displayName(joinPath(dirOf(en.path), tmp)), uerr)
		}
		return err
	}
	return nil
}

// dirOf is the directory part of a volume path, for messages.
func dirOf(path string) string {
	parent, _ := splitPath(path)
	return parent
}
