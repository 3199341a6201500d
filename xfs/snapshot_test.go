package xfs_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// engineSnapshot describes the tree under the root the way
// oracle.SnapshotDir describes a kernel mount, so the two can be diffed.
func engineSnapshot(t testing.TB, v *xfs.Volume) oracle.Snapshot {
	t.Helper()
	var snap oracle.Snapshot
	var walk func(ino format.Ino, p string)
	walk = func(ino format.Ino, p string) {
		e, err := describe(v, ino)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		e.Path = p
		snap = append(snap, e)
		if e.Type != oracle.TypeDir {
			return
		}
		ents, err := v.Names().ReadDir(ino)
		if err != nil {
			t.Fatalf("readdir %s: %v", p, err)
		}
		for _, de := range ents {
			// Every name must also be found by hash lookup.
			got, err := v.Names().Lookup(ino, de.Name)
			if err != nil || got != de.Ino {
				t.Fatalf("lookup %q in %s: got %d, %v; readdir says %d", de.Name, p, got, err, de.Ino)
			}
			child := de.Name
			if p != "." {
				child = path.Join(p, de.Name)
			}
			walk(de.Ino, child)
		}
	}
	walk(v.Root(), ".")
	sort.Slice(snap, func(i, j int) bool { return snap[i].Path < snap[j].Path })
	return snap
}

func describe(v *xfs.Volume, ino format.Ino) (oracle.Entry, error) {
	st, err := v.Stat(ino)
	if err != nil {
		return oracle.Entry{}, err
	}
	e := oracle.Entry{Mode: st.Mode & 0o7777, Size: st.Size, Nlink: st.Nlink, Ino: uint64(ino), UID: st.UID, GID: st.GID}
	switch st.Mode & format.SIFMT {
	case format.SIFREG:
		e.Type = oracle.TypeFile
		sum, err := hashFile(v, ino, st.Size)
		if err != nil {
			return e, err
		}
		e.SHA256 = sum
	case format.SIFDIR:
		e.Type = oracle.TypeDir
	case format.SIFLNK:
		e.Type = oracle.TypeSymlink
		if e.Target, err = v.Files().Readlink(ino); err != nil {
			return e, err
		}
	default:
		e.Type = oracle.TypeOther
	}
	xs, err := v.Xattrs().List(ino)
	if err != nil {
		return e, err
	}
	for _, x := range xs {
		if e.Xattrs == nil {
			e.Xattrs = map[string]string{}
		}
		e.Xattrs[x.FullName()] = string(x.Value)
		// Every listed name must also be found by hash lookup.
		got, err := v.Xattrs().Get(ino, x.FullName())
		if err != nil || string(got) != string(x.Value) {
			return e, fmt.Errorf("getxattr %s of inode %d: %d bytes, %v (listed with %d bytes)", x.FullName(), ino, len(got), err, len(x.Value))
		}
	}
	return e, nil
}

// hashFile reads the file in pieces of up to 1 MiB: a buffer sized to
// small files, since a fixture has tens of thousands of them.
func hashFile(v *xfs.Volume, ino format.Ino, size int64) (string, error) {
	h := sha256.New()
	buf := make([]byte, min(max(size, 1), 1<<20))
	for off := int64(0); ; {
		n, err := v.Files().ReadAt(ino, buf, off)
		h.Write(buf[:n])
		off += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func openRO(t testing.TB, img string) *xfs.Volume {
	t.Helper()
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open %s: %v", img, err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

func requireSame(t *testing.T, kernel, ours oracle.Snapshot) {
	t.Helper()
	if d := kernel.Diff(ours); len(d) > 0 {
		for _, line := range d {
			t.Error(line)
		}
	}
}

var errEOF = io.EOF
