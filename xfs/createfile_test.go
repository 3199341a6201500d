package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// createdFile is what the test expects of a file CreateFile made.
type createdFile struct {
	ino    format.Ino
	data   []byte
	xattrs map[string][]byte
}

// TestCreateFileIsOneChange: CreateFile makes a file with its data and
// attributes in one commit, for random sizes (empty, block edges, up to
// MaxCreateData) and attribute sets (inline and remote values) in
// directories of every form; a refused one (existing name, bad attribute,
// too much data, a full volume) makes nothing and leaks no inode or
// block. Afterwards xfs_repair is clean and the kernel reads every file's
// bytes and attributes.
func TestCreateFileIsOneChange(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "c.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	dirs := map[string]format.Ino{"": v.Root()}
	for _, name := range []string{"a", "b"} {
		if dirs[name], err = v.Names().Mkdir(v.Root(), name, xfs.Attrs{Mode: 0o755}); err != nil {
			t.Fatal(err)
		}
	}
	// b grows into a node-form directory.
	for i := range 2000 {
		if _, err := v.Names().Create(dirs["b"], fmt.Sprintf("filler-%04d-%s", i, bytes.Repeat([]byte{'f'}, 40)), xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	sizes := []int{0, 1, 511, 4095, 4096, 4097, 65536, xfs.MaxCreateData}
	files := map[string]createdFile{}
	for i := range 120 {
		size := sizes[rng.Intn(len(sizes))]
		if rng.Intn(2) == 0 {
			size = rng.Intn(70000)
		}
		data := make([]byte, size)
		rng.Read(data)
		want := map[string][]byte{"user.xfs3.etag": fmt.Appendf(nil, "%032x", rng.Int63())}
		for j := range rng.Intn(4) {
			want[fmt.Sprintf("user.meta.k%d", j)] = bytes.Repeat([]byte{byte('a' + j)}, 1+rng.Intn(60))
		}
		if rng.Intn(8) == 0 {
			want["user.meta.big"] = bytes.Repeat([]byte{'r'}, 9000) // remote value
		}
		var xattrs []xfs.Xattr
		for name, val := range want {
			xattrs = append(xattrs, xfs.Xattr{Namespace: "user", Name: name[len("user."):], Value: val})
		}
		dirName := []string{"", "a", "b"}[rng.Intn(3)]
		name := fmt.Sprintf("obj-%03d", i)
		before := v.LogStats().Commits
		ino, err := v.Names().CreateFile(dirs[dirName], name, xfs.Attrs{Mode: 0o640}, data, xattrs)
		if err != nil {
			t.Fatalf("%s/%s (%d bytes): %v", dirName, name, size, err)
		}
		if n := v.LogStats().Commits - before; n != 1 {
			t.Fatalf("%s/%s: %d commits, want 1", dirName, name, n)
		}
		files[filepath.Join(dirName, name)] = createdFile{ino, data, want}
	}
	for path, f := range files {
		checkCreatedFile(t, v, path, f)
	}

	// Refusals make nothing.
	before := usage(t, v)
	taken := firstName(files, "a")
	refusals := []struct {
		what   string
		name   string
		data   []byte
		xattrs []xfs.Xattr
		want   error
	}{
		{"an existing name", taken, []byte("new"), nil, xfs.ErrExist},
		{"too much data", "big", make([]byte, xfs.MaxCreateData+1), nil, xfs.ErrInvalid},
		{"a bad attribute name", "badattr", []byte("x"), []xfs.Xattr{{Namespace: "nosuch", Name: "n", Value: []byte("v")}}, xfs.ErrInvalid},
		{"an attribute value too large", "bigattr", []byte("x"), []xfs.Xattr{{Namespace: "user", Name: "n", Value: make([]byte, 70000)}}, xfs.ErrInvalid},
	}
	for _, r := range refusals {
		if _, err := v.Names().CreateFile(dirs["a"], r.name, xfs.Attrs{Mode: 0o644}, r.data, r.xattrs); !errors.Is(err, r.want) {
			t.Errorf("CreateFile with %s: %v, want %v", r.what, err, r.want)
		}
	}
	checkCreatedFile(t, v, filepath.Join("a", taken), files[filepath.Join("a", taken)])
	for _, name := range []string{"big", "badattr", "bigattr"} {
		if _, err := v.Names().Lookup(dirs["a"], name); !errors.Is(err, xfs.ErrNotFound) {
			t.Errorf("a refused CreateFile left %q (%v)", name, err)
		}
	}
	if after := usage(t, v); after != before {
		t.Errorf("refused creates changed the usage from %+v to %+v", before, after)
	}

	// A full volume: the data does not fit, and nothing is made.
	hog, err := v.Names().Create(v.Root(), "hog", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	st, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Files().Preallocate(hog, int64(st.FreeBlocks-st.ReservedBlocks-64)*int64(st.BlockSize)); err != nil {
		t.Fatal(err)
	}
	before = usage(t, v)
	if _, err := v.Names().CreateFile(v.Root(), "nospace", xfs.Attrs{Mode: 0o644}, make([]byte, xfs.MaxCreateData), nil); !errors.Is(err, xfs.ErrNoSpace) {
		t.Errorf("CreateFile on a full volume: %v, want ErrNoSpace", err)
	}
	if _, err := v.Names().Lookup(v.Root(), "nospace"); !errors.Is(err, xfs.ErrNotFound) {
		t.Errorf("a CreateFile refused for space left its name (%v)", err)
	}
	if after := usage(t, v); after != before {
		t.Errorf("a CreateFile refused for space changed the usage from %+v to %+v", before, after)
	}
	if err := v.Names().Unlink(v.Root(), "hog"); err != nil {
		t.Fatal(err)
	}

	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	for path, f := range files {
		got, err := os.ReadFile(filepath.Join(mnt, path))
		if err != nil || !bytes.Equal(got, f.data) {
			t.Errorf("%s: the kernel reads %d bytes (%v), want %d", path, len(got), err, len(f.data))
		}
		fi, err := os.Stat(filepath.Join(mnt, path))
		if err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: kernel stat %v, %v", path, fi, err)
		}
		for name, val := range f.xattrs {
			buf := make([]byte, 10000)
			n, err := syscall.Getxattr(filepath.Join(mnt, path), name, buf)
			if err != nil || !bytes.Equal(buf[:n], val) {
				t.Errorf("%s %s: the kernel reads %d bytes, %v", path, name, n, err)
			}
		}
	}
}

// checkCreatedFile reads f back through the engine, by path and inode.
func checkCreatedFile(t *testing.T, v *xfs.Volume, path string, f createdFile) {
	t.Helper()
	ino, err := v.Names().LookupPath(path, false)
	if err != nil || ino != f.ino {
		t.Fatalf("%s: inode %d (%v), want %d", path, ino, err, f.ino)
	}
	st, err := v.Stat(ino)
	if err != nil || st.Size != int64(len(f.data)) || st.Nlink != 1 || st.Mode&format.SIFMT != format.SIFREG {
		t.Fatalf("%s: %+v (%v), want a file of %d bytes", path, st, err, len(f.data))
	}
	got := make([]byte, len(f.data)+1)
	n, err := v.Files().ReadAt(ino, got, 0)
	if n != len(f.data) || !bytes.Equal(got[:n], f.data) {
		t.Fatalf("%s: read %d bytes (%v), want %d", path, n, err, len(f.data))
	}
	list, err := v.Xattrs().List(ino)
	if err != nil || len(list) != len(f.xattrs) {
		t.Fatalf("%s: %d attributes (%v), want %d", path, len(list), err, len(f.xattrs))
	}
	for _, x := range list {
		if !bytes.Equal(x.Value, f.xattrs[x.FullName()]) {
			t.Fatalf("%s: %s = %q", path, x.FullName(), x.Value)
		}
	}
}

// firstName is the name of one file made in dir.
func firstName(files map[string]createdFile, dir string) string {
	for path := range files {
		if filepath.Dir(path) == dir {
			return filepath.Base(path)
		}
	}
	return ""
}

// volumeUsage is what a refused change must leave as it was.
type volumeUsage struct{ freeBlocks, inodes, freeInodes uint64 }

func usage(t *testing.T, v *xfs.Volume) volumeUsage {
	t.Helper()
	st, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	return volumeUsage{st.FreeBlocks, st.Inodes, st.FreeInodes}
}
