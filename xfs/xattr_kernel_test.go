package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestXattrsReadByKernel sets attributes of every size class and namespace
// through the engine and requires the kernel to get each by name.
func TestXattrsReadByKernel(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "x.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string][]byte{}
	sizes := []int{0, 1, 100, 254, 255, 256, 300, 1000, 3000, 3100, 5000, 60000, 65536}
	for _, size := range sizes {
		for _, name := range []string{"user.kt", "user..kt", "trusted.x", "security.selinux"} {
			file := fmt.Sprintf("f%d-%s", size, name)
			ino, err := v.Names().Create(v.Root(), file, xfs.Attrs{Mode: 0o644})
			if err != nil {
				t.Fatal(err)
			}
			val := bytes.Repeat([]byte{'v'}, size)
			if err := v.Xattrs().Set(ino, name, val, 0); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			want[file] = map[string][]byte{name: val}
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	for file, attrs := range want {
		for name, val := range attrs {
			buf := make([]byte, 70000)
			n, err := syscall.Getxattr(filepath.Join(mnt, file), name, buf)
			if err != nil || !bytes.Equal(buf[:n], val) {
				t.Errorf("%s %s (%d bytes): kernel reads %d bytes, %v", file, name, len(val), n, err)
			}
		}
	}
}

// TestSymlinkAttrForkComesAndGoes is the case model seed 22 found: an
// attribute pushes an inline symlink target out to a block, and when the
// attribute goes the target must come back inline.
func TestSymlinkAttrForkComesAndGoes(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "s.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	target := string(bytes.Repeat([]byte("abcdefg/"), 41))[:322]
	ino, err := v.Names().Symlink(v.Root(), "link", target, xfs.Attrs{})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Xattrs().Set(ino, "trusted.big", bytes.Repeat([]byte{'x'}, 200), 0); err != nil {
		t.Fatal(err)
	}
	if st, _ := v.Stat(ino); st.DataFormat != "extents" {
		t.Fatalf("the attribute did not push the target out (data fork %s)", st.DataFormat)
	}
	if err := v.Xattrs().Remove(ino, "trusted.big"); err != nil {
		t.Fatal(err)
	}
	if st, _ := v.Stat(ino); st.DataFormat != "local" {
		t.Fatalf("target stayed in a block (data fork %s)", st.DataFormat)
	}
	if got, err := v.Files().Readlink(ino); err != nil || got != target {
		t.Fatalf("readlink: %v", err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// TestSetXattrsIsOneChange: a batch of attributes, from inline to remote
// values, lands whole; a batch that fails part-way (a user attribute on a
// symlink, refused after others were set) leaves nothing; the kernel reads
// the batch back. RenameSettingXattrs sets a batch with the rename, in
// one commit, or neither.
func TestSetXattrsIsOneChange(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "b.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ino, err := v.Names().Create(v.Root(), "obj", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	batch := []xfs.Xattr{
		{Namespace: "user", Name: "xfs3.etag", Value: []byte("0123456789abcdef")},
		{Namespace: "user", Name: "meta.big", Value: bytes.Repeat([]byte{'r'}, 9000)},
		{Namespace: "trusted", Name: "t", Value: nil},
		{Namespace: "user", Name: "xfs3.etag", Value: []byte("later wins")},
	}
	for i := 0; i < 30; i++ {
		batch = append(batch, xfs.Xattr{Namespace: "user", Name: fmt.Sprintf("meta.k%02d", i), Value: bytes.Repeat([]byte{byte('a' + i%26)}, 40)})
	}
	if err := v.Xattrs().SetMany(ino, batch); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for _, x := range batch {
		want[x.FullName()] = x.Value
	}
	list, err := v.Xattrs().List(ino)
	if err != nil || len(list) != len(want) {
		t.Fatalf("ListXattr: %d attributes (%v), want %d", len(list), err, len(want))
	}
	for _, x := range list {
		if !bytes.Equal(x.Value, want[x.FullName()]) {
			t.Errorf("%s = %q", x.FullName(), x.Value)
		}
	}

	link, err := v.Names().Symlink(v.Root(), "link", "obj", xfs.Attrs{})
	if err != nil {
		t.Fatal(err)
	}
	bad := []xfs.Xattr{{Namespace: "trusted", Name: "ok", Value: []byte("x")}, {Namespace: "user", Name: "no", Value: []byte("y")}}
	if err := v.Xattrs().SetMany(link, bad); err == nil {
		t.Error("a user attribute on a symlink was accepted")
	}
	if list, err := v.Xattrs().List(link); err != nil || len(list) != 0 {
		t.Errorf("a failed batch left %v (%v)", list, err)
	}

	// A rename that sets attributes is one commit; a refused one moves
	// nothing and sets nothing.
	tmp, err := v.Names().Mkdir(v.Root(), "tmp", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	staged, err := v.Names().Create(tmp, "staged", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	before := v.LogStats().Commits
	if err := v.Names().RenameSettingXattrs(tmp, "staged", v.Root(), "placed", batch); err != nil {
		t.Fatal(err)
	}
	if n := v.LogStats().Commits - before; n != 1 {
		t.Errorf("rename with attributes took %d commits", n)
	}
	if got, err := v.Names().Lookup(v.Root(), "placed"); err != nil || got != staged {
		t.Fatalf("placed: inode %d, %v; want %d", got, err, staged)
	}
	if list, err := v.Xattrs().List(staged); err != nil || len(list) != len(want) {
		t.Fatalf("placed has %d attributes (%v), want %d", len(list), err, len(want))
	}
	// Onto another link of the same inode nothing moves, but the
	// attributes are still set.
	if err := v.Names().Link(staged, v.Root(), "alias"); err != nil {
		t.Fatal(err)
	}
	extra := xfs.Xattr{Namespace: "user", Name: "extra", Value: []byte("set by a rename that moved nothing")}
	if err := v.Names().RenameSettingXattrs(v.Root(), "placed", v.Root(), "alias", []xfs.Xattr{extra}); err != nil {
		t.Fatal(err)
	}
	if got, err := v.Xattrs().Get(staged, extra.FullName()); err != nil || !bytes.Equal(got, extra.Value) {
		t.Errorf("rename onto a link of the same inode: %s = %q, %v", extra.FullName(), got, err)
	}
	if err := v.Names().Unlink(v.Root(), "alias"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Names().Symlink(tmp, "badlink", "obj", xfs.Attrs{}); err != nil {
		t.Fatal(err)
	}
	if err := v.Names().RenameSettingXattrs(tmp, "badlink", v.Root(), "moved", bad); !errors.Is(err, xfs.ErrInvalid) {
		t.Errorf("rename of a symlink with a user attribute: %v, want ErrInvalid", err)
	}
	if _, err := v.Names().Lookup(v.Root(), "moved"); !errors.Is(err, xfs.ErrNotFound) {
		t.Errorf("a refused rename made its target (%v)", err)
	}
	if _, err := v.Names().Lookup(tmp, "badlink"); err != nil {
		t.Errorf("a refused rename lost its source: %v", err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	buf := make([]byte, 100)
	if n, err := syscall.Getxattr(filepath.Join(mnt, "placed"), extra.FullName(), buf); err != nil || !bytes.Equal(buf[:n], extra.Value) {
		t.Errorf("placed %s: kernel reads %q, %v", extra.FullName(), buf[:max(n, 0)], err)
	}
	for _, file := range []string{"obj", "placed"} {
		for name, val := range want {
			buf := make([]byte, 70000)
			n, err := syscall.Getxattr(filepath.Join(mnt, file), name, buf)
			if err != nil || !bytes.Equal(buf[:n], val) {
				t.Errorf("%s %s: kernel reads %d bytes, %v", file, name, n, err)
			}
		}
	}
}

// TestGetXattrAbsent: an attribute that is not there answers ErrNoData,
// and only that, whatever form the attribute fork has (none, shortform,
// leaf, node); asking changes nothing, and a name in another namespace
// of the same text is absent too.
func TestGetXattrAbsent(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	img := filepath.Join(t.TempDir(), "x.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 2, 30, 400} { // none, shortform, leaf, node
		ino, err := v.Names().Create(v.Root(), fmt.Sprintf("f%d", n), xfs.Attrs{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := v.Xattrs().Set(ino, fmt.Sprintf("user.a%04d", i), bytes.Repeat([]byte{'v'}, 40), 0); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range []string{"user.absent", fmt.Sprintf("user.a%04d", n), "trusted.a0000"} {
			val, err := v.Xattrs().Get(ino, name)
			if !errors.Is(err, xfs.ErrNoData) || errors.Is(err, xfs.ErrNotFound) || val != nil {
				t.Fatalf("%d attributes, %s: %q, %v; want ErrNoData", n, name, val, err)
			}
		}
		if n > 0 {
			if val, err := v.Xattrs().Get(ino, "user.a0000"); err != nil || len(val) != 40 {
				t.Fatalf("%d attributes, user.a0000: %d bytes, %v", n, len(val), err)
			}
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}
