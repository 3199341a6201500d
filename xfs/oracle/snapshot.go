package oracle

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
)

// Entry types.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeOther   = "other" // fifos, sockets, device nodes
)

// Entry describes one path of a directory tree as the kernel shows it.
type Entry struct {
	// Path is relative to the snapshot root, with "/" separators; the
	// root itself is ".".
	Path string `json:"path"`
	// Type is one of TypeFile, TypeDir, TypeSymlink or TypeOther.
	Type string `json:"type"`
	// Mode holds the permission bits including setuid, setgid and
	// sticky (mode & 07777), without the file type bits.
	Mode  uint32 `json:"mode"`
	Size  int64  `json:"size"`
	Nlink uint32 `json:"nlink"`
	Ino   uint64 `json:"ino"`
	UID   uint32 `json:"uid"`
	GID   uint32 `json:"gid"`
	// SHA256 is the hex digest of the content of regular files.
	SHA256 string `json:"sha256,omitempty"`
	// Target is the target of symlinks.
	Target string `json:"target,omitempty"`
	// Xattrs maps full attribute names ("user.x", "trusted.x",
	// "security.x"; system.* is left out) to their raw values.
	Xattrs map[string]string `json:"xattrs,omitempty"`
}

// Snapshot is a directory tree sorted by Entry.Path.
type Snapshot []Entry

// SnapshotDir walks root (without following symlinks) and describes every
// path under it, reading file contents, symlink targets and the xattrs
// visible to the caller (root also sees trusted.*).
func SnapshotDir(root string) (Snapshot, error) {
	var snap Snapshot
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		e, err := describe(path)
		if err != nil {
			return err
		}
		e.Path = filepath.ToSlash(rel)
		snap = append(snap, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", root, err)
	}
	snap.sort()
	return snap, nil
}

// describe builds the Entry of one path (Path left empty).
func describe(path string) (Entry, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return Entry{}, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	e := Entry{
		Mode:  st.Mode & 0o7777,
		Size:  st.Size,
		Nlink: uint32(st.Nlink),
		Ino:   st.Ino,
		UID:   st.Uid,
		GID:   st.Gid,
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		e.Type = TypeFile
		sum, err := hashFile(path)
		if err != nil {
			return Entry{}, err
		}
		e.SHA256 = sum
	case syscall.S_IFDIR:
		e.Type = TypeDir
	case syscall.S_IFLNK:
		e.Type = TypeSymlink
		target, err := os.Readlink(path)
		if err != nil {
			return Entry{}, err
		}
		e.Target = target
	default:
		e.Type = TypeOther
	}
	x, err := readXattrs(path)
	if err != nil {
		return Entry{}, fmt.Errorf("xattrs of %s: %w", path, err)
	}
	e.Xattrs = x
	return e, nil
}

// hashFile returns the SHA-256 of a file's content. Holes reported by
// SEEK_HOLE are hashed as zeros without being read.
func hashFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if err := hashSparse(h, f, st.Size()); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

const (
	seekData = 3 // SEEK_DATA
	seekHole = 4 // SEEK_HOLE
)

var (
	zeros   = make([]byte, 1<<16)
	bufPool = sync.Pool{New: func() any { return new([1 << 18]byte) }}
)

// hashSparse feeds the first size bytes of f to h, data regions read from
// the file and holes as zeros.
func hashSparse(h io.Writer, f *os.File, size int64) error {
	buf := bufPool.Get().(*[1 << 18]byte)
	defer bufPool.Put(buf)
	var off int64
	for off < size {
		data, err := f.Seek(off, seekData)
		if errors.Is(err, syscall.ENXIO) {
			data = size // only a hole is left
		} else if err != nil {
			data = off // no SEEK_DATA support: read everything
		}
		data = min(data, size)
		for ; off < data; off += int64(min(int64(len(zeros)), data-off)) {
			h.Write(zeros[:min(int64(len(zeros)), data-off)])
		}
		if off >= size {
			break
		}
		hole, err := f.Seek(off, seekHole)
		if err != nil {
			hole = size
		}
		hole = min(hole, size)
		if _, err := io.CopyBuffer(h, io.NewSectionReader(f, off, hole-off), buf[:]); err != nil {
			return err
		}
		off = hole
	}
	return nil
}

func (s Snapshot) sort() {
	sort.Slice(s, func(i, j int) bool { return s[i].Path < s[j].Path })
}

// Lookup returns the entry for path ("." for the root).
func (s Snapshot) Lookup(path string) (Entry, bool) {
	i := sort.Search(len(s), func(i int) bool { return s[i].Path >= path })
	if i < len(s) && s[i].Path == path {
		return s[i], true
	}
	return Entry{}, false
}

// WriteFile stores the snapshot as indented JSON.
func (s Snapshot) WriteFile(name string) error {
	b, err := json.MarshalIndent(s, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(name, append(b, '\n'), 0o644)
}

// ReadSnapshot loads a snapshot written by WriteFile (or any JSON array of
// entries) and sorts it by path.
func ReadSnapshot(name string) (Snapshot, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.sort()
	return s, nil
}
