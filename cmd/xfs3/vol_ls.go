package main

import (
	"fmt"
	"sort"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

const lsUsage = `Usage: xfs3 vol ls [-l] [-R] VOLUME [PATH]

List the directory PATH (default: the root) of VOLUME, one name per line,
sorted byte-wise; "." and ".." are not listed. When PATH is not a directory
it is printed itself, as given. Without -l a symlink PATH that points to a
directory lists that directory, like ls(1).

Flags:
  -l    long format, one entry per line:
            MODE TYPE SIZE INODE NAME
        MODE is ls-style ("drwxr-xr-x"), TYPE one of file, dir, symlink,
        chardev, blockdev, fifo, socket; SIZE is in bytes. The first four
        columns are padded to fixed minimum widths (10, 8, 12 and 12),
        separated by one space; NAME is everything after the space that
        follows INODE. Symlinks end in " -> TARGET".
  -R    recursive: list the whole tree below PATH, depth-first, each
        directory followed at once by its contents, siblings sorted
        byte-wise. Names are printed as paths relative to PATH ("a",
        "a/b", ...). Symlinks are not followed.
  -h    show this help

Names are printed as raw bytes. A name (with -R, a path) that contains a
control character (0x00-0x1f, 0x7f, e.g. a newline) or starts with a double
quote is printed Go-quoted instead ("a\nb"), so every entry is exactly one
line.
`

func volLs(args []string, e *env) error {
	fs := newFlags("vol ls")
	long := fs.Bool("l", false, "long format")
	recursive := fs.Bool("R", false, "recursive")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usagef("want VOLUME [PATH], got %s", nargs(len(pos)))
	}
	path := ""
	if len(pos) == 2 {
		path = pos[1]
	}
	v, err := openVolume(pos[0])
	if err != nil {
		return err
	}
	defer v.Close()
	l := &lister{v: v, out: e, vol: pos[0], long: *long, recursive: *recursive, seen: map[format.Ino]bool{}}
	return l.list(path)
}

type lister struct {
	v         *xfs.Volume
	out       *env
	vol       string
	long      bool
	recursive bool
	seen      map[format.Ino]bool // directories on the current path (loop guard)
}

func (l *lister) list(path string) error {
	ino, st, err := lookup(l.v, l.vol, path, false)
	if err != nil {
		return err
	}
	if st.Mode&format.SIFMT == format.SIFLNK && !l.long {
		if tino, tst, err := lookup(l.v, l.vol, path, true); err == nil && tst.IsDir() {
			ino, st = tino, tst
		}
	}
	if !st.IsDir() {
		return l.entry(path, ino, &st)
	}
	return l.dir(ino, "")
}

// dir lists directory ino, whose path relative to the listed PATH is prefix
// ("" for PATH itself).
func (l *lister) dir(ino format.Ino, prefix string) error {
	if l.seen[ino] {
		return fmt.Errorf("%s: %s: directory loop at inode %d: %w", l.vol, displayName(prefix), ino, xfs.ErrCorrupt)
	}
	l.seen[ino] = true
	defer delete(l.seen, ino)
	ents, err := l.v.Names().ReadDir(ino)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", l.vol, displayName(prefix), err)
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name < ents[j].Name })
	for _, d := range ents {
		name := d.Name
		if prefix != "" {
			name = prefix + "/" + d.Name
		}
		isDir := d.Type == format.FTDir
		var st *xfs.Stat
		if l.long || d.Type == format.FTUnknown {
			s, err := l.v.Stat(d.Ino)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", l.vol, displayName(name), err)
			}
			st = &s
			isDir = s.IsDir()
		}
		if err := l.entry(name, d.Ino, st); err != nil {
			return err
		}
		if l.recursive && isDir {
			if err := l.dir(d.Ino, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// entry prints one line. st may be nil when not listing long.
func (l *lister) entry(name string, ino format.Ino, st *xfs.Stat) error {
	w := l.out.stdout
	if !l.long {
		w.WriteString(displayName(name))
		return w.WriteByte('\n')
	}
	fmt.Fprintf(w, "%-10s %-8s %12d %12d %s", modeString(st.Mode), typeName(st.Mode), st.Size, ino, displayName(name))
	if st.Mode&format.SIFMT == format.SIFLNK {
		target, err := l.v.Files().Readlink(ino)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", l.vol, displayName(name), err)
		}
		w.WriteString(" -> ")
		w.WriteString(displayName(target))
	}
	return w.WriteByte('\n')
}
