package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

const getUsage = `Usage: xfs3 vol get VOLUME PATH [DEST]

Copy the regular file PATH out of VOLUME to DEST, or to standard output when
DEST is absent or "-". DEST is created with mode 0644 or truncated; when DEST
is an existing directory the file is written inside it under PATH's last
name. Symlinks are followed, like cat(1); a directory or any other
non-regular file is an error. Holes read as zeros. Data is streamed in
1 MiB chunks, so memory use does not grow with the file size.

If an error happens part-way, a DEST this command created is removed; a DEST
that existed before is left truncated or partially written.

Flags:
  -h    show this help
`

// getChunk is the streaming unit of vol get.
const getChunk = 1 << 20

func volGet(args []string, e *env) error {
	fs := newFlags("vol get")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 || len(pos) > 3 {
		return usagef("want VOLUME PATH [DEST], got %s", nargs(len(pos)))
	}
	vol, path := pos[0], pos[1]
	v, ino, st, err := openAt(vol, path, true)
	if err != nil {
		return err
	}
	defer v.Close()
	switch {
	case st.IsDir():
		return fmt.Errorf("%s: %s: %w; only regular files can be copied out", vol, displayName(path), xfs.ErrIsDir)
	case st.Mode&format.SIFMT != format.SIFREG:
		return fmt.Errorf("%s: %s is a %s, not a regular file", vol, displayName(path), typeName(st.Mode))
	}
	if len(pos) == 2 || pos[2] == "-" {
		if err := copyOut(v, ino, st.Size, e.stdout); err != nil {
			return fmt.Errorf("%s: %s: %w", vol, displayName(path), err)
		}
		return nil
	}
	return getToFile(v, vol, path, ino, st.Size, pos[2])
}

// getToFile writes the file to dest (or inside dest when it is a directory).
func getToFile(v *xfs.Volume, vol, path string, ino format.Ino, size int64, dest string) error {
	err := writeDest(dest, path, func(w io.Writer) error { return copyOut(v, ino, size, w) })
	if err != nil {
		return fmt.Errorf("%s: %s: %w", vol, displayName(path), err)
	}
	return nil
}

// writeDest writes a file's content with write to dest, or when dest is
// a directory to the file in it named by name's last component. A file
// it created is removed again when the write fails.
func writeDest(dest, name string, write func(io.Writer) error) error {
	if fi, err := os.Stat(dest); err == nil && fi.IsDir() {
		trimmed := strings.TrimRight(name, "/")
		base := trimmed[strings.LastIndexByte(trimmed, '/')+1:]
		if base == "" || base == "." || base == ".." {
			return fmt.Errorf("cannot name a file in directory %s after it", dest)
		}
		dest = filepath.Join(dest, base)
	}
	created := true
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		created = false
		f, err = os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	}
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil && created {
		os.Remove(dest)
	}
	return err
}

// copyOut streams size bytes of inode ino to w in getChunk pieces.
func copyOut(v *xfs.Volume, ino format.Ino, size int64, w io.Writer) error {
	buf := make([]byte, getChunk)
	for off := int64(0); off < size; {
		n := int64(len(buf))
		if size-off < n {
			n = size - off
		}
		got, err := v.Files().ReadAt(ino, buf[:n], off)
		if err != nil && !(errors.Is(err, io.EOF) && int64(got) == n) {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("file ended at byte %d of %d: %w", off+int64(got), size, io.ErrUnexpectedEOF)
			}
			return err
		}
		if _, err := w.Write(buf[:got]); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		off += int64(got)
	}
	return nil
}
