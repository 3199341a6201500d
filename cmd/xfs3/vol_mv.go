package main

import (
	"fmt"
	"strings"

	"github.com/xfs3/xfs3/xfs"
)

const mvUsage = `Usage: xfs3 vol mv VOLUME SRC DST

Rename SRC to DST within VOLUME, like mv(1), in one transaction: the name
leaves SRC and appears at DST (replacing what DST named) at once.

When DST is an existing directory (a symlink to one counts), SRC moves into
it under its own last name. Otherwise DST is the new name, and whatever DST
named before is replaced: a file or symlink (its space is freed unless
other hard links remain) by a non-directory, an empty directory by a
directory. A directory moves with everything in it, but never into itself
or below itself. A final symlink SRC is moved itself, not what it points
to; symlinks in the middle of SRC and DST are followed. The root, and a
SRC whose last part is "." or "..", cannot be moved.

Flags:
  -h    show this help
`

func volMv(args []string, e *env) error {
	flags := newFlags("vol mv")
	pos, err := parseFlags(flags, args)
	if err != nil {
		return err
	}
	if len(pos) != 3 {
		return usagef("want VOLUME SRC DST, got %s", nargs(len(pos)))
	}
	return withWriter(pos[0], func(w *writer) error { return w.mv(pos[1], pos[2]) })
}

func (w *writer) mv(src, dst string) error {
	if _, name := splitPath(src); isDotName(name) {
		if name == "" {
			return fmt.Errorf("%s: %s: cannot move the root directory", w.vol, displayName(src))
		}
		return fmt.Errorf("%s: %s: cannot move '.' or '..'", w.vol, displayName(src))
	}
	from, err := w.lookupEntry(src)
	if err != nil {
		return err
	}
	if !from.exists() {
		return w.pathErr(src, xfs.ErrNotFound)
	}
	if strings.HasSuffix(src, "/") && !from.st.IsDir() {
		return w.pathErr(src, xfs.ErrNotDir)
	}
	var to *entry
	if dirIno, ok := w.dirAt(dst); ok {
		to, err = w.entryIn(dirIno, from.name, joinPath(dst, from.name))
	} else {
		if _, name := splitPath(dst); isDotName(name) {
			return w.pathErr(dst, fmt.Errorf("%w: not a name to move to", xfs.ErrInvalid))
		}
		to, err = w.lookupEntry(dst)
	}
	if err != nil {
		return err
	}
	if err := w.v.Names().Rename(from.dir, from.name, to.dir, to.name); err != nil {
		return fmt.Errorf("%s: cannot move %s to %s: %w", w.vol, displayName(src), displayName(to.path), kindOnly(err))
	}
	return nil
}
