package mkfs

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestReflinkVolumeKernel: the kernel mounts a volume made with the
// default options read-write and shares extents on it (cp
// --reflink=always, then a copy-on-write into the clone); xfs_repair finds
// nothing before or after, the refcount btrees hold the shared extents,
// and our engine reads both files back.
func TestReflinkVolumeKernel(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolDB, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "reflink.img")
	res, err := Format(img, Options{Size: 512 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Reflink {
		t.Fatalf("the default options made a volume without reflink: %s", res)
	}
	if sb := oracle.DBSuperblock(t, img); sb["features_ro_compat"] != "0xd" {
		t.Errorf("features_ro_compat = %s, want 0xd (finobt, reflink, inobtcount)", sb["features_ro_compat"])
	}
	oracle.Repair(t, img)

	orig := make([]byte, 2<<20+777)
	rand.Read(orig)
	mnt := oracle.Mount(t, img, false)
	src, dst := filepath.Join(mnt, "original"), filepath.Join(mnt, "clone")
	if err := os.WriteFile(src, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "--reflink=always", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp --reflink=always: %v\n%s", err, out)
	}
	// Overwrite a block in the middle of the clone: the kernel copies it
	// on write, the original keeps its bytes.
	patch := bytes.Repeat([]byte{0xA5}, 4096)
	f, err := os.OpenFile(dst, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(patch, 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Unmount(t, mnt)
	oracle.Repair(t, img)

	var shared int
	for ag := uint32(0); ag < res.AgCount; ag++ {
		n := strconv.Itoa(int(ag))
		fields := oracle.ParseFields(oracle.DB(t, img, "agf "+n, "addr refcntroot", "print numrecs"))
		recs, err := strconv.Atoi(fields["numrecs"])
		if err != nil {
			t.Fatalf("AG %d refcount root numrecs %q", ag, fields["numrecs"])
		}
		shared += recs
	}
	if shared == 0 {
		t.Error("no refcount record after cp --reflink=always: nothing was shared")
	}

	clone := append([]byte(nil), orig...)
	copy(clone[1<<20:], patch)
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("engine open: %v", err)
	}
	defer v.Close()
	for name, want := range map[string][]byte{"original": orig, "clone": clone} {
		ino, err := v.Names().LookupPath(name, false)
		if err != nil {
			t.Fatalf("engine lookup %s: %v", name, err)
		}
		got := make([]byte, len(want))
		if n, err := v.Files().ReadAt(ino, got, 0); n != len(want) || (err != nil && err != io.EOF) || !bytes.Equal(got, want) {
			t.Errorf("engine read of %s: %d bytes, %v, equal %v", name, n, err, bytes.Equal(got, want))
		}
	}
}

// TestReflinkVolumeEngine: our engine opens a volume made with the default
// options read-write, creates, writes, truncates and deletes files over
// several AGs, and closes it; xfs_repair finds nothing and the kernel
// reads what the engine wrote.
func TestReflinkVolumeEngine(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "reflink.img")
	if _, err := Format(img, Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatalf("engine open: %v", err)
	}
	if g := v.Geometry(); !g.Reflink {
		t.Fatalf("the engine does not see the reflink feature: %+v", g)
	}
	want := map[string][]byte{}
	var dirs []format.Ino
	for d := 0; d < 4; d++ {
		dir, err := v.Names().Mkdir(v.Root(), fmt.Sprintf("dir%d", d), xfs.Attrs{Mode: 0o755})
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	for i := 0; i < 40; i++ {
		data := make([]byte, (i%7)*200<<10+i*37)
		rand.Read(data)
		d := i % len(dirs)
		name := fmt.Sprintf("file%02d", i)
		ino, err := v.Names().Create(dirs[d], name, xfs.Attrs{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := v.Files().WriteAt(ino, data, 0); err != nil || n != len(data) {
			t.Fatalf("write %s: %d, %v", name, n, err)
		}
		switch i % 5 {
		case 3:
			if err := v.Files().Truncate(ino, int64(len(data)/3)); err != nil {
				t.Fatal(err)
			}
			data = data[:len(data)/3]
		case 4:
			if err := v.Names().Unlink(dirs[d], name); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want[fmt.Sprintf("dir%d/%s", d, name)] = data
	}
	if err := v.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	oracle.Repair(t, img)

	mnt := oracle.Mount(t, img, true)
	for name, data := range want {
		got, err := os.ReadFile(filepath.Join(mnt, name))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("kernel read of %s: %d bytes (want %d), %v", name, len(got), len(data), err)
		}
	}
}
