package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

const putUsage = `Usage: xfs3 vol put [-v] VOLUME SRC PATH

Copy the host file or directory SRC into VOLUME as PATH, like cp -r. SRC
"-" is standard input. PATH is relative to the volume root; symlinks in it
are followed.

A regular file SRC (a symlink SRC is followed) becomes the regular file
PATH, or PATH/NAME when PATH is an existing directory (a symlink to one
counts), NAME being SRC's last name. Standard input needs a PATH that is
not a directory. Data is streamed in 1 MiB chunks, so memory use does not
grow with the file size; chunks that are all zeros are left as holes.

Files are never written in place: the new file is written under a
temporary name (".xfs3-tmp-" and 16 hex digits) in the destination
directory, then renamed over PATH in one transaction, so PATH never names
a partial file: it is what it was before or the complete new file. If the
copy fails the temporary file is removed and PATH stays as it was. Replacing makes a new inode: the file, symlink or other
non-directory PATH named before is unlinked (its other hard links keep the
old content), and its mode, owner and attributes are not carried over. A
directory is never replaced by a file.

A directory SRC is copied recursively to PATH, or to PATH/NAME when PATH
is an existing directory. A directory "." is copied into PATH itself.
Directories that already exist at the destination are merged into (their
mode and owner are kept), files and symlinks in them replaced one by one
as above; a non-directory is never replaced by a directory. Regular files,
directories and symlinks are copied, symlinks as symlinks (their targets
unchanged, never followed). Hard links are copied as separate files.
Fifos, sockets and device nodes are skipped with a message, and the
command then exits with status 1. The copy stops at the first error;
what was copied until then stays, every file in it complete.

Every new file, directory and symlink gets SRC's permission bits, setuid,
setgid and sticky included (0644 for standard input; no umask is applied),
and SRC's extended attributes in the user, trusted and security namespaces
(trusted ones are only visible to root; system.* attributes, such as ACLs,
are not copied). New inodes belong to the user and group running xfs3,
except that in a setgid directory they get its group, and new directories
its setgid bit, as on Linux. Their times are the time of the copy.

Nothing is printed on success unless -v is given.

Flags:
  -v    print the volume path of every file, directory and symlink written
  -h    show this help
`

// putChunk is the streaming unit of vol put.
const putChunk = 1 << 20

// putter is one run of vol put.
type putter struct {
	*writer
	e       *env
	verbose bool
	buf     []byte
	zero    []byte
	volFile os.FileInfo // the volume file, never copied into itself
	skipped int
}

func volPut(args []string, e *env) error {
	flags := newFlags("vol put")
	verbose := flags.Bool("v", false, "verbose")
	pos, err := parseFlags(flags, args)
	if err != nil {
		return err
	}
	if len(pos) != 3 {
		return usagef("want VOLUME SRC PATH, got %s", nargs(len(pos)))
	}
	vol, src, dst := pos[0], pos[1], pos[2]
	var fi os.FileInfo
	if src != "-" {
		if src == "" {
			return usagef("empty SRC path")
		}
		// A symlink SRC is followed: its target is what gets copied.
		if fi, err = os.Stat(src); err != nil {
			return err
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is a %s; only regular files and directories can be put", src, hostType(fi.Mode()))
		}
		if l, err := os.Lstat(src); err == nil && l.Mode()&fs.ModeSymlink != 0 {
			if src, err = filepath.EvalSymlinks(src); err != nil {
				return err
			}
		}
	}
	volFile, _ := os.Stat(vol)
	if fi != nil && volFile != nil && os.SameFile(fi, volFile) {
		return fmt.Errorf("%s is the volume itself", pos[1])
	}
	return withWriter(vol, func(w *writer) error {
		p := &putter{writer: w, e: e, verbose: *verbose, volFile: volFile,
			buf: make([]byte, putChunk), zero: make([]byte, putChunk)}
		if err := p.put(src, fi, dst); err != nil {
			return err
		}
		if p.skipped > 0 {
			return errReported
		}
		return nil
	})
}

// put copies src (fi nil: standard input) to the volume path dst.
func (p *putter) put(src string, fi os.FileInfo, dst string) error {
	isDir := fi != nil && fi.IsDir()
	var en *entry
	var err error
	if dirIno, ok := p.dirAt(dst); ok {
		if fi == nil {
			return p.pathErr(dst, fmt.Errorf("%w; standard input needs the name of a file as PATH", xfs.ErrIsDir))
		}
		base := filepath.Base(src)
		switch {
		case base == "." && isDir:
			if err := p.setXattrsFrom(src, dirIno, dst); err != nil {
				return err
			}
			return p.copyContents(src, dirIno, dst)
		case base == "." || base == ".." || base == "/" || base == string(filepath.Separator):
			return fmt.Errorf("%s: cannot name a copy of %s in directory %s after it; give the new name as PATH", p.vol, src, displayName(dst))
		}
		if en, err = p.entryIn(dirIno, base, joinPath(dst, base)); err != nil {
			return err
		}
	} else {
		if _, name := splitPath(dst); isDotName(name) {
			return p.pathErr(dst, fmt.Errorf("%w: not a place for a new file", xfs.ErrInvalid))
		}
		if strings.HasSuffix(dst, "/") && !isDir {
			// Like cp: a trailing slash promises a directory.
			if _, err := p.lookupEntry(dst); err != nil {
				return err
			}
			return p.pathErr(dst, xfs.ErrNotDir)
		}
		if en, err = p.lookupEntry(dst); err != nil {
			return err
		}
	}
	switch {
	case fi == nil:
		return p.writeFile(p.e.stdin, "standard input", 0o644, nil, en)
	case isDir:
		return p.putDir(src, fi, en)
	}
	return p.putFile(src, fi, en)
}

// putFile copies the regular host file src to en.
func (p *putter) putFile(src string, fi os.FileInfo, en *entry) error {
	xattrs, err := hostXattrs(src)
	if err != nil {
		return err
	}
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	return p.writeFile(f, src, unixMode(fi.Mode()), xattrs, en)
}

// writeFile stores everything r holds as the regular file en; srcName
// names r in messages.
func (p *putter) writeFile(r io.Reader, srcName string, mode uint32, xattrs []hostXattr, en *entry) error {
	a, err := p.attrs(en.dir, mode, false)
	if err != nil {
		return p.fail(dirOf(en.path), err)
	}
	err = p.replace(en,
		func(name string) (format.Ino, error) { return p.v.Names().Create(en.dir, name, a) },
		func(ino format.Ino) error {
			if err := p.copyData(r, srcName, ino, en.path); err != nil {
				return err
			}
			return p.setXattrs(ino, xattrs, en.path)
		})
	if err != nil {
		return err
	}
	p.written(en.path)
	return nil
}

// copyData streams r into the new regular file ino in putChunk pieces,
// leaving all-zero chunks as holes.
func (p *putter) copyData(r io.Reader, srcName string, ino format.Ino, path string) error {
	var off, end int64 // bytes read; end of the data written
	for {
		n, rerr := io.ReadFull(r, p.buf)
		if n > 0 {
			if chunk := p.buf[:n]; !bytes.Equal(chunk, p.zero[:n]) {
				if _, err := p.v.Files().WriteAt(ino, chunk, off); err != nil {
					return p.fail(path, err)
				}
				end = off + int64(n)
			}
			off += int64(n)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("read %s: %w", srcName, rerr)
		}
	}
	if off > end {
		if err := p.v.Files().Truncate(ino, off); err != nil {
			return p.fail(path, err)
		}
	}
	return nil
}

// putDir copies the host directory src to en, creating it or merging into
// the directory that is there.
func (p *putter) putDir(src string, fi os.FileInfo, en *entry) error {
	dirIno := en.ino
	switch {
	case en.exists() && !en.st.IsDir():
		return p.pathErr(en.path, fmt.Errorf("cannot overwrite a non-directory with a directory: %w", xfs.ErrExist))
	case !en.exists():
		a, err := p.attrs(en.dir, unixMode(fi.Mode()), true)
		if err != nil {
			return p.fail(dirOf(en.path), err)
		}
		if dirIno, err = p.v.Names().Mkdir(en.dir, en.name, a); err != nil {
			return p.fail(en.path, err)
		}
		p.written(en.path)
	}
	if err := p.setXattrsFrom(src, dirIno, en.path); err != nil {
		return err
	}
	return p.copyContents(src, dirIno, en.path)
}

// copyContents copies what the host directory src holds into the volume
// directory dirIno, whose path is path.
func (p *putter) copyContents(src string, dirIno format.Ino, path string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, d := range ents {
		hp := filepath.Join(src, d.Name())
		fi, err := os.Lstat(hp)
		if err != nil {
			return err
		}
		mode := fi.Mode()
		if !mode.IsDir() && !mode.IsRegular() && mode&fs.ModeSymlink == 0 {
			p.skipped++
			report(p.e, "vol put", fmt.Errorf("%s: skipping a %s: only regular files, directories and symlinks are copied", hp, hostType(mode)))
			continue
		}
		if p.volFile != nil && os.SameFile(fi, p.volFile) {
			p.skipped++
			report(p.e, "vol put", fmt.Errorf("%s: skipping the volume itself", hp))
			continue
		}
		en, err := p.entryIn(dirIno, d.Name(), joinPath(path, d.Name()))
		if err != nil {
			return err
		}
		switch {
		case mode.IsDir():
			err = p.putDir(hp, fi, en)
		case mode.IsRegular():
			err = p.putFile(hp, fi, en)
		default:
			err = p.putSymlink(hp, en)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// putSymlink copies the host symlink src to en as a symlink.
func (p *putter) putSymlink(src string, en *entry) error {
	target, err := os.Readlink(src)
	if err != nil {
		return err
	}
	xattrs, err := hostXattrs(src)
	if err != nil {
		return err
	}
	a, err := p.attrs(en.dir, 0o777, false)
	if err != nil {
		return p.fail(dirOf(en.path), err)
	}
	err = p.replace(en,
		func(name string) (format.Ino, error) { return p.v.Names().Symlink(en.dir, name, target, a) },
		func(ino format.Ino) error { return p.setXattrs(ino, xattrs, en.path) })
	if err != nil {
		return err
	}
	p.written(en.path)
	return nil
}

// setXattrsFrom copies the attributes of host path src to ino.
func (p *putter) setXattrsFrom(src string, ino format.Ino, path string) error {
	xattrs, err := hostXattrs(src)
	if err != nil {
		return err
	}
	return p.setXattrs(ino, xattrs, path)
}

func (p *putter) setXattrs(ino format.Ino, xattrs []hostXattr, path string) error {
	for _, x := range xattrs {
		if err := p.v.Xattrs().Set(ino, x.name, x.value, 0); err != nil {
			return p.pathErr(path, fmt.Errorf("attribute %s: %w", displayName(x.name), err))
		}
	}
	return nil
}

// written reports a path with -v.
func (p *putter) written(path string) {
	if p.verbose {
		p.e.stdout.WriteString(displayName(path))
		p.e.stdout.WriteByte('\n')
	}
}

// unixMode is the permission part of a host file's mode as Linux numbers
// it: rwx bits, setuid, setgid and sticky.
func unixMode(m fs.FileMode) uint32 {
	mode := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}

// hostType names the type of a host file in messages, with the names the
// read commands use.
func hostType(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "chardev"
	case m&fs.ModeDevice != 0:
		return "blockdev"
	}
	return "special file"
}
