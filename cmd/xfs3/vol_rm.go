package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

const rmUsage = `Usage: xfs3 vol rm [-r] [-f] VOLUME PATH...

Remove the files, symlinks and (with -r) directories PATH from VOLUME, like
rm(1). A final symlink is removed itself, never what it points to; symlinks
in the middle of a PATH are followed. A PATH ending in "/" must name a
directory. The root, and a PATH whose last part is "." or "..", are never
removed. Every PATH is tried in turn; each failure is reported on its own
line and the exit status is then 1.

A file's space is freed when its last link goes. Every unlink and rmdir is
its own transaction: if rm -r stops part-way on an error, what was removed
until then stays removed and the rest stays intact.

Flags:
  -r    remove directories and everything in them, depth first: files and
        symlinks are unlinked, then each emptied directory removed (-R is
        the same)
  -f    ignore PATHs that do not exist, or lead through a file ("f/x");
        with -f no PATH at all is fine
  -h    show this help

The flags may be combined: -rf is -r -f.
`

func volRm(args []string, e *env) error {
	flags := newFlags("vol rm")
	var recursive bool
	flags.BoolVar(&recursive, "r", false, "recursive")
	flags.BoolVar(&recursive, "R", false, "recursive")
	force := flags.Bool("f", false, "ignore missing paths")
	pos, err := parseFlags(flags, splitShortFlags(args, "rRf"))
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) < 2 && !*force {
		return usagef("want VOLUME PATH..., got %s", nargs(len(pos)))
	}
	failed := false
	err = withWriter(pos[0], func(w *writer) error {
		for _, path := range pos[1:] {
			err := w.rm(path, recursive, *force)
			if err != nil {
				report(e, "vol rm", err)
				failed = true
			}
		}
		return nil
	})
	if err == nil && failed {
		err = errReported
	}
	return err
}

// rm removes path, recursively if asked. With force a path that does not
// exist is no error, nor one below a file (like rm -f, which ignores
// ENOENT and ENOTDIR).
func (w *writer) rm(path string, recursive, force bool) error {
	if _, name := splitPath(path); isDotName(name) {
		if name == "" {
			return fmt.Errorf("%s: %s: refusing to remove the root directory", w.vol, displayName(path))
		}
		return fmt.Errorf("%s: %s: refusing to remove '.' or '..'", w.vol, displayName(path))
	}
	en, err := w.lookupEntry(path)
	if err != nil {
		if force && (errors.Is(err, xfs.ErrNotFound) || errors.Is(err, xfs.ErrNotDir)) {
			return nil
		}
		return err
	}
	if !en.exists() {
		if force {
			return nil
		}
		return w.pathErr(path, xfs.ErrNotFound)
	}
	if !en.st.IsDir() {
		if strings.HasSuffix(path, "/") {
			return w.pathErr(path, xfs.ErrNotDir)
		}
		if err := w.v.Names().Unlink(en.dir, en.name); err != nil {
			return w.fail(path, err)
		}
		return nil
	}
	if !recursive {
		return w.pathErr(path, fmt.Errorf("%w (use -r to remove directories)", xfs.ErrIsDir))
	}
	if err := w.emptyDir(en.ino, strings.TrimRight(path, "/"), map[format.Ino]bool{}); err != nil {
		return err
	}
	if err := w.v.Names().Rmdir(en.dir, en.name); err != nil {
		return w.fail(path, err)
	}
	return nil
}

// emptyDir removes everything in directory ino (path names it), depth
// first. seen holds the directories being emptied, a guard against
// directory loops in a corrupt volume.
func (w *writer) emptyDir(ino format.Ino, path string, seen map[format.Ino]bool) error {
	if seen[ino] {
		return w.pathErr(path, fmt.Errorf("directory loop at inode %d: %w", ino, xfs.ErrCorrupt))
	}
	seen[ino] = true
	defer delete(seen, ino)
	ents, err := w.v.Names().ReadDir(ino)
	if err != nil {
		return w.fail(path, err)
	}
	// Regular files leave together, sharing transactions.
	var files []string
	for _, d := range ents {
		if d.Type == format.FTReg {
			files = append(files, d.Name)
		}
	}
	for i, err := range w.v.Names().UnlinkFiles(ino, files) {
		if err != nil {
			return w.fail(joinPath(path, files[i]), err)
		}
	}
	for _, d := range ents {
		if d.Type == format.FTReg {
			continue
		}
		child := joinPath(path, d.Name)
		isDir := d.Type == format.FTDir
		if d.Type == format.FTUnknown {
			st, err := w.v.Stat(d.Ino)
			if err != nil {
				return w.fail(child, err)
			}
			isDir = st.IsDir()
		}
		if !isDir {
			if err := w.v.Names().Unlink(ino, d.Name); err != nil {
				return w.fail(child, err)
			}
			continue
		}
		if err := w.emptyDir(d.Ino, child, seen); err != nil {
			return err
		}
		if err := w.v.Names().Rmdir(ino, d.Name); err != nil {
			return w.fail(child, err)
		}
	}
	return nil
}

// splitShortFlags spells out combined one-letter flags such as "-rf" as
// "-r" "-f" when every letter is in letters; "--" ends the flags.
func splitShortFlags(args []string, letters string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.Trim(a[1:], letters) == "" {
			for _, c := range a[1:] {
				out = append(out, "-"+string(c))
			}
			continue
		}
		out = append(out, a)
	}
	return out
}
