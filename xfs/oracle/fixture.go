package oracle

import (
	"path/filepath"
	"testing"
)

// Variant is one mkfs.xfs geometry used for fixtures.
type Variant struct {
	Name     string
	MkfsOpts []string
}

// Variants are the geometries fixtures and golden images are built for:
// the mkfs defaults (4 KiB blocks, 512-byte inodes, 4 KiB directory
// blocks), 1 KiB blocks, 1 KiB inodes and 16 KiB directory blocks.
var Variants = []Variant{
	{Name: "default"},
	{Name: "b1k", MkfsOpts: []string{"-b", "size=1024"}},
	{Name: "i1k", MkfsOpts: []string{"-i", "size=1024"}},
	{Name: "n16k", MkfsOpts: []string{"-n", "size=16384"}},
}

// VariantN64K uses 64 KiB directory blocks. It is not in Variants.
var VariantN64K = Variant{Name: "n64k", MkfsOpts: []string{"-n", "size=65536"}}

// FixtureSpec scales the content written by Populate. Small and Full are
// the presets; see Populate for the layout.
type FixtureSpec struct {
	Name      string // for messages
	Seed      int64  // seed of the math/rand source for names and contents
	ImageSize int64  // size of the sparse image file

	// DirSizes lists the entry counts of the directories dirs/n<count>.
	DirSizes []int
	// MaxFileSize bounds the random content of the files in those
	// directories.
	MaxFileSize int
	// BtreeExtents is the number of separate extents of files/btree.
	BtreeExtents int
	// RandomFileSize is the size of files/random (random bytes).
	RandomFileSize int
	// LeafXattrs and NodeXattrs are the attribute counts of xattr/leaf
	// and xattr/node.
	LeafXattrs, NodeXattrs int
	// RemoteXattrSizes are the value sizes of the user.remote-<size>
	// attributes of xattr/remote.
	RemoteXattrSizes []int
}

// Small is meant for golden images: every kind of object, kept tiny. With
// 4 KiB blocks its directories are short-form (n3), block (n60) and leaf
// (n400); files/btree has a B+tree data fork; xattr/node is in node form.
var Small = FixtureSpec{
	Name:             "small",
	Seed:             1,
	ImageSize:        64 << 20,
	DirSizes:         []int{3, 60, 400},
	MaxFileSize:      64,
	BtreeExtents:     600,
	RandomFileSize:   16 << 10,
	LeafXattrs:       40,
	NodeXattrs:       200,
	RemoteXattrSizes: []int{10000},
}

// Full is meant for oracle tests: large directories (node form in every
// variant), a two-level data fork B+tree, a 5 MiB random file and remote
// attribute values up to the 64 KiB maximum.
var Full = FixtureSpec{
	Name:             "full",
	Seed:             2,
	ImageSize:        1 << 30,
	DirSizes:         []int{3, 60, 400, 1000, 30000},
	MaxFileSize:      200,
	BtreeExtents:     6000,
	RandomFileSize:   5 << 20,
	LeafXattrs:       40,
	NodeXattrs:       600,
	RemoteXattrSizes: []int{60000, 65536},
}

// BuildFixture makes dir/<variant>.img with mkfs.xfs and the variant's
// options, mounts it, lets the kernel write the content of spec (see
// Populate), discards free space so it reads as zeros, unmounts, and
// remounts read-only to take the Snapshot of what is on disk. It then
// checks the image with xfs_repair -n and checks that files/btree really
// has a B+tree data fork. The image is left unmounted.
func BuildFixture(t testing.TB, dir string, v Variant, spec FixtureSpec) (img string, snap Snapshot) {
	t.Helper()
	Require(t, ToolMkfs, ToolRepair, ToolDB, ToolMount)
	img = filepath.Join(dir, v.Name+".img")
	Mkfs(t, img, spec.ImageSize, v.MkfsOpts...)

	mnt := Mount(t, img, false)
	if err := Populate(mnt, spec); err != nil {
		t.Fatalf("populate %s fixture (%s): %v", spec.Name, v.Name, err)
	}
	trim(mnt)
	Unmount(t, mnt)

	mnt = Mount(t, img, true)
	snap, err := SnapshotDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	Unmount(t, mnt)

	Repair(t, img)
	if e, ok := snap.Lookup(FixtureBtreeFile); !ok {
		t.Fatalf("fixture has no %s", FixtureBtreeFile)
	} else if f := DataForkFormat(t, img, e.Ino); f != "btree" {
		t.Fatalf("%s (inode %d) has data fork format %q, want btree", FixtureBtreeFile, e.Ino, f)
	}
	return img, snap
}

// trim discards the free space of a mounted loop filesystem, which punches
// holes in the image file so that stale data of freed blocks is gone.
// It is best effort: without fstrim nothing happens.
func trim(mnt string) {
	if _, err := lookTool("fstrim"); err != nil {
		return
	}
	_, _ = run("fstrim", nil, mnt)
}
