package main

import (
	"fmt"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

const lnUsage = `Usage: xfs3 vol ln -s TARGET VOLUME PATH
       xfs3 vol ln VOLUME EXISTING NEWPATH

Make links in VOLUME, like ln(1).

With -s, make PATH a symbolic link holding TARGET, 1 to 1023 bytes, stored
as given: it is not checked and need not exist (a relative TARGET is
resolved from PATH's directory when the link is followed, an absolute one
from the volume root). When PATH is an existing directory (a symlink to
one counts), the link goes inside it under TARGET's last name.

Without -s, make NEWPATH a hard link to the file EXISTING: one more name
for the same inode. A final symlink EXISTING is linked itself, not what it
points to. Directories cannot be hard linked. When NEWPATH is an existing
directory (a symlink to one counts), the link goes inside it under
EXISTING's last name.

An existing PATH or NEWPATH is never replaced: that is an error. Symlinks
in the middle of every path are followed. New symlinks belong to the user
and group running xfs3 (in a setgid directory, to its group).

Flags:
  -s TARGET  make a symbolic link to TARGET
  -h         show this help
`

// optString is a string flag that remembers whether it was given.
type optString struct {
	s   string
	set bool
}

func (o *optString) String() string     { return o.s }
func (o *optString) Set(v string) error { o.s, o.set = v, true; return nil }

func volLn(args []string, e *env) error {
	flags := newFlags("vol ln")
	var target optString
	flags.Var(&target, "s", "symlink target")
	pos, err := parseFlags(flags, args)
	if err != nil {
		return err
	}
	if target.set {
		if len(pos) != 2 {
			return usagef("want -s TARGET VOLUME PATH, got %s after -s TARGET", nargs(len(pos)))
		}
		if target.s == "" {
			return usagef("empty symlink TARGET")
		}
		return withWriter(pos[0], func(w *writer) error { return w.symlink(target.s, pos[1]) })
	}
	if len(pos) != 3 {
		return usagef("want VOLUME EXISTING NEWPATH (or -s TARGET VOLUME PATH), got %s", nargs(len(pos)))
	}
	return withWriter(pos[0], func(w *writer) error { return w.hardlink(pos[1], pos[2]) })
}

// lastName is the last component of a path, trailing slashes ignored.
func lastName(p string) string {
	_, name := splitPath(p)
	return name
}

// newLinkEntry finds where a new link named by path goes: inside path when
// it is an existing directory, under the last name of from, else path
// itself, which must not exist.
func (w *writer) newLinkEntry(path, from string) (*entry, error) {
	var en *entry
	var err error
	if dirIno, ok := w.dirAt(path); ok {
		name := lastName(from)
		if isDotName(name) {
			return nil, fmt.Errorf("%s: cannot name a link in directory %s after %s; give the new name as the path", w.vol, displayName(path), displayName(from))
		}
		en, err = w.entryIn(dirIno, name, joinPath(path, name))
	} else {
		if isDotName(lastName(path)) {
			return nil, w.pathErr(path, fmt.Errorf("%w: not a name for a link", xfs.ErrInvalid))
		}
		en, err = w.lookupEntry(path)
	}
	if err != nil {
		return nil, err
	}
	if en.exists() {
		return nil, w.pathErr(en.path, xfs.ErrExist)
	}
	if strings.HasSuffix(path, "/") && en.path == path {
		return nil, w.pathErr(path, xfs.ErrNotDir)
	}
	return en, nil
}

func (w *writer) symlink(target, path string) error {
	en, err := w.newLinkEntry(path, target)
	if err != nil {
		return err
	}
	a, err := w.attrs(en.dir, 0o777, false)
	if err != nil {
		return w.fail(dirOf(en.path), err)
	}
	if _, err := w.v.Names().Symlink(en.dir, en.name, target, a); err != nil {
		return w.fail(en.path, err)
	}
	return nil
}

func (w *writer) hardlink(existing, newPath string) error {
	ino, err := w.v.Names().LookupPath(existing, false)
	if err != nil {
		return fmt.Errorf("%s: %w", w.vol, err)
	}
	st, err := w.v.Stat(ino)
	if err != nil {
		return w.fail(existing, err)
	}
	if st.Mode&format.SIFMT == format.SIFDIR {
		return w.pathErr(existing, fmt.Errorf("%w: directories cannot be hard linked", xfs.ErrIsDir))
	}
	en, err := w.newLinkEntry(newPath, existing)
	if err != nil {
		return err
	}
	if err := w.v.Names().Link(ino, en.dir, en.name); err != nil {
		return w.fail(en.path, err)
	}
	return nil
}
