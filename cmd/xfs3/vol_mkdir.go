package main

import (
	"strconv"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

const mkdirUsage = `Usage: xfs3 vol mkdir [-p] [-m MODE] VOLUME PATH...

Create the directories PATH in VOLUME, like mkdir(1). Symlinks in the
middle of a PATH are followed. Every PATH is tried in turn; each failure
is reported on its own line and the exit status is then 1.

New directories belong to the user and group running xfs3; in a setgid
directory they get its group and its setgid bit, as on Linux.

Flags:
  -p       make missing parent directories too, and succeed when a PATH
           already is a directory (or a symlink to one)
  -m MODE  permission bits of each PATH, in octal, 0 to 7777 (default
           0755; no umask is applied); parents made by -p get 0755
  -h       show this help
`

// defaultDirMode is the mode of new directories: mkdir(1)'s 0777 under
// the usual umask 022.
const defaultDirMode = 0o755

func volMkdir(args []string, e *env) error {
	flags := newFlags("vol mkdir")
	parents := flags.Bool("p", false, "make parents")
	modeArg := flags.String("m", "", "mode")
	pos, err := parseFlags(flags, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("want VOLUME PATH..., got %s", nargs(len(pos)))
	}
	mode := uint32(defaultDirMode)
	if *modeArg != "" {
		if mode, err = parseMode(*modeArg); err != nil {
			return err
		}
	}
	failed := false
	err = withWriter(pos[0], func(w *writer) error {
		for _, path := range pos[1:] {
			var err error
			if *parents {
				err = w.mkdirAll(path, mode)
			} else {
				err = w.mkdir(path, mode)
			}
			if err != nil {
				report(e, "vol mkdir", err)
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

// parseMode parses an octal permission mode.
func parseMode(s string) (uint32, error) {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || m > 0o7777 {
		return 0, usagef("invalid mode %q (want octal digits, 0 to 7777)", s)
	}
	return uint32(m), nil
}

// mkdir makes the directory path, whose parent must exist.
func (w *writer) mkdir(path string, mode uint32) error {
	if _, name := splitPath(path); isDotName(name) {
		if _, ok := w.dirAt(path); ok {
			return w.pathErr(path, xfs.ErrExist)
		}
		_, err := w.lookupEntry(path)
		if err == nil {
			err = w.pathErr(path, xfs.ErrNotFound)
		}
		return err
	}
	en, err := w.lookupEntry(path)
	if err != nil {
		return err
	}
	if en.exists() {
		return w.pathErr(path, xfs.ErrExist)
	}
	a, err := w.attrs(en.dir, mode, true)
	if err != nil {
		return w.fail(dirOf(path), err)
	}
	if _, err := w.v.Names().Mkdir(en.dir, en.name, a); err != nil {
		return w.fail(path, err)
	}
	return nil
}

// mkdirAll makes path and every missing directory above it.
func (w *writer) mkdirAll(path string, mode uint32) error {
	parts := strings.Split(path, "/")
	last := len(parts) - 1
	for last > 0 && (parts[last] == "" || parts[last] == ".") {
		last--
	}
	for i := 0; i <= last; i++ {
		if parts[i] == "" || parts[i] == "." || parts[i] == ".." {
			continue
		}
		prefix := strings.Join(parts[:i+1], "/")
		if _, ok := w.dirAt(prefix); ok {
			continue
		}
		if i == last {
			return w.mkdir(prefix, mode)
		}
		en, err := w.lookupEntry(prefix)
		if err != nil {
			return err
		}
		if en.exists() && en.st.Mode&format.SIFMT != format.SIFLNK {
			// Like mkdir -p: a file in the way is "not a directory", a
			// symlink that leads nowhere (or to a file) "file exists".
			return w.pathErr(prefix, xfs.ErrNotDir)
		}
		if err := w.mkdir(prefix, defaultDirMode); err != nil {
			return err
		}
	}
	return nil
}
