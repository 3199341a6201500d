package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

const lsattrUsage = `Usage: xfs3 vol lsattr [-d] [-a] VOLUME PATH...

Show the inode flags of each PATH in VOLUME as lsattr(1) shows them on an
XFS mount: one line per file, the flags then a space and the path. The
flags are lsattr's 22 columns, a letter for each flag set and "-" for
each one clear; XFS keeps these of them:
  S  synchronous updates        (di_flags sync)
  i  immutable                  (di_flags immutable)
  a  append only                (di_flags append)
  d  no dump                    (di_flags nodump)
  A  no atime updates           (di_flags noatime)
  x  direct access              (di_flags2 dax)
  P  project inheritance        (di_flags projinherit)
Only i is enforced by xfs3: an immutable file is neither changed, renamed
nor removed, and an immutable directory's names do not change ('xfs3 vol
chattr'). The others are shown as the kernel (or another tool) left them.

A directory PATH lists the directory's entries instead, in the order it
holds them, as "PATH/NAME"; names starting with "." are left out unless
-a is given. A final symlink is not followed: like lsattr, a symlink (or
any inode but a regular file or a directory) is an error. Errors are
reported on their own line and the others are still shown; the exit
status is then 1.

Flags:
  -d    show a directory PATH itself, not its entries
  -a    list every entry of a directory, "." and ".." included
  -h    show this help
`

const chattrUsage = `Usage: xfs3 vol chattr VOLUME +i|-i PATH...

Set (+i) or clear (-i) the immutable flag of each regular file PATH in
VOLUME, like 'chattr +i' and 'chattr -i' on a mount. An immutable file is
neither written, truncated, renamed, linked nor removed, and its extended
attributes do not change, by xfs3 or by the kernel, until the flag is
cleared; it still reads. Each change is one transaction that also updates
the file's ctime. The mode may also come before VOLUME, as chattr takes
it; after "--" a "-i" or "+i" is a PATH.

Only regular files take the flag here (and only the immutable flag:
lsattr shows the others); a final symlink is not followed, and a symlink
or a directory PATH is an error. Every PATH is tried in turn; each failure
is reported on its own line and the exit status is then 1.

Flags:
  -h    show this help
`

// lsattrLetters are lsattr's columns (e2fsprogs' print_flags, in order)
// and the XFS flag each shows, through the kernel's FS_IOC_GETFLAGS
// (fileattr_fill_xflags); the zero entries XFS never sets.
var lsattrLetters = []struct {
	letter byte
	flag   uint16 // di_flags bit
	flag2  uint64 // di_flags2 bit
}{
	{'s', 0, 0}, {'u', 0, 0}, {'S', format.DiflagSync, 0}, {'D', 0, 0},
	{'i', format.DiflagImmutable, 0}, {'a', format.DiflagAppend, 0},
	{'d', format.DiflagNodump, 0}, {'A', format.DiflagNoatime, 0},
	{'c', 0, 0}, {'E', 0, 0}, {'j', 0, 0}, {'I', 0, 0}, {'t', 0, 0},
	{'T', 0, 0}, {'e', 0, 0}, {'C', 0, 0}, {'x', 0, format.Diflag2Dax},
	{'F', 0, 0}, {'N', 0, 0}, {'P', format.DiflagProjInherit, 0},
	{'V', 0, 0}, {'m', 0, 0},
}

// lsattrFlags renders an inode's flags as lsattr does.
func lsattrFlags(st *xfs.Stat) string {
	b := make([]byte, len(lsattrLetters))
	for i, l := range lsattrLetters {
		b[i] = '-'
		if st.Flags&l.flag != 0 || st.Flags2&l.flag2 != 0 {
			b[i] = l.letter
		}
	}
	return string(b)
}

func volLsattr(args []string, e *env) error {
	fs := newFlags("vol lsattr")
	dirs := fs.Bool("d", false, "directories themselves")
	all := fs.Bool("a", false, "every entry")
	pos, err := parseFlags(fs, splitShortFlags(args, "da"))
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("want VOLUME PATH..., got %s", nargs(len(pos)))
	}
	vol := pos[0]
	v, err := openVolume(vol)
	if err != nil {
		return err
	}
	defer v.Close()
	failed := false
	show := func(path string, st *xfs.Stat) {
		if t := st.Mode & format.SIFMT; t != format.SIFREG && t != format.SIFDIR {
			report(e, "vol lsattr", fmt.Errorf("%s: %s: a %s has no flags to show (regular files and directories do)", vol, displayName(path), typeName(st.Mode)))
			failed = true
			return
		}
		fmt.Fprintf(e.stdout, "%s %s\n", lsattrFlags(st), displayName(path))
	}
	for _, path := range pos[1:] {
		ino, st, err := lookup(v, vol, path, false)
		if err != nil {
			report(e, "vol lsattr", err)
			failed = true
			continue
		}
		if !st.IsDir() || *dirs {
			show(path, &st)
			continue
		}
		if err := lsattrDir(v, vol, path, ino, *all, show); err != nil {
			report(e, "vol lsattr", err)
			failed = true
		}
	}
	if failed {
		return errReported
	}
	return nil
}

// lsattrDir shows the entries of directory ino (at path) in their order
// on disk, with "." and ".." first when all is set.
func lsattrDir(v *xfs.Volume, vol, path string, ino format.Ino, all bool, show func(string, *xfs.Stat)) error {
	entries, err := v.Names().ReadDir(ino)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", vol, displayName(path), err)
	}
	if all {
		parent, err := v.Names().Lookup(ino, "..")
		if err != nil {
			return fmt.Errorf("%s: %s: %w", vol, displayName(path), err)
		}
		entries = append([]xfs.DirEntry{{Name: ".", Ino: ino}, {Name: "..", Ino: parent}}, entries...)
	}
	prefix := path
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	for _, de := range entries {
		if !all && strings.HasPrefix(de.Name, ".") {
			continue
		}
		st, err := v.Stat(de.Ino)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", vol, displayName(prefix+de.Name), err)
		}
		show(prefix+de.Name, &st)
	}
	return nil
}

func volChattr(args []string, e *env) error {
	mode, rest := chattrMode(args)
	pos, err := parseFlags(newFlags("vol chattr"), rest)
	if err != nil {
		return err
	}
	switch {
	case mode == "":
		return usagef("want a mode, +i or -i")
	case mode != "+i" && mode != "-i":
		return usagef("mode %s is not supported: only +i and -i (the immutable flag)", displayName(mode))
	case len(pos) < 2:
		return usagef("want VOLUME +i|-i PATH..., got %s", nargs(len(pos)))
	}
	failed := false
	err = withWriter(pos[0], func(w *writer) error {
		for _, path := range pos[1:] {
			if err := w.chattr(path, mode == "+i"); err != nil {
				report(e, "vol chattr", err)
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

// chattrMode takes the mode out of args: the first argument before a
// "--" that is "-i" or starts with "+" or "=", as chattr's modes do.
func chattrMode(args []string) (mode string, rest []string) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == "-i" || len(a) > 1 && (a[0] == '+' || a[0] == '=') {
			rest = append(append(rest, args[:i]...), args[i+1:]...)
			return a, rest
		}
	}
	return "", args
}

// chattr sets or clears the immutable flag of the regular file at path.
func (w *writer) chattr(path string, on bool) error {
	ino, err := w.v.Names().LookupPath(path, false)
	if err != nil {
		return fmt.Errorf("%s: %w", w.vol, err)
	}
	if err := w.v.Files().SetImmutable(ino, on, nil, nil); err != nil {
		if errors.Is(err, xfs.ErrInvalid) {
			st, serr := w.v.Stat(ino)
			if serr == nil && st.Mode&format.SIFMT != format.SIFREG {
				return w.pathErr(path, fmt.Errorf("only regular files take the immutable flag here, not a %s", typeName(st.Mode)))
			}
		}
		return w.fail(path, err)
	}
	return nil
}
