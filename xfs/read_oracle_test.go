package xfs_test

import (
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// readVariants adds the remaining geometries the read path must handle to
// the default fixture variants: 64 KiB directory blocks, 2 KiB inodes and
// 64 KiB filesystem blocks.
var readVariants = append(append([]oracle.Variant(nil), oracle.Variants...),
	oracle.VariantN64K,
	oracle.Variant{Name: "i2k", MkfsOpts: []string{"-i", "size=2048"}},
	oracle.Variant{Name: "b64k", MkfsOpts: []string{"-b", "size=65536"}},
)

// TestReadKernelFixtures has the kernel populate images made by mkfs.xfs
// (every directory and xattr format, btree forks, sparse and preallocated
// files, symlinks, hard links) and requires our engine to read back exactly
// what the kernel showed.
func TestReadKernelFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds large kernel fixtures; run without -short")
	}
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolDB, oracle.ToolMount)
	for _, variant := range readVariants {
		t.Run(variant.Name, func(t *testing.T) {
			spec := oracle.Full
			if variant.Name == "b64k" {
				spec.ImageSize = 8 << 30 // 30,000 small files take a 64 KiB block each
			}
			img, kernel := oracle.BuildFixture(t, t.TempDir(), variant, spec)
			v := openRO(t, img)
			requireSame(t, kernel, engineSnapshot(t, v))
			// Node directories (30,000 entries) have free-index blocks.
			if n := xfs.CheckDirFreeBlocks(t, v, kernel); n == 0 {
				t.Error("no free-index blocks found in the node directories")
			}
		})
	}
}

// TestReadGolden runs the same comparison on the committed golden images,
// so machines that cannot mount still check the read path.
func TestReadGolden(t *testing.T) {
	for _, variant := range oracle.Variants {
		t.Run(variant.Name, func(t *testing.T) {
			img, kernel := oracle.LoadGolden(t, variant.Name)
			v := openRO(t, img)
			requireSame(t, kernel, engineSnapshot(t, v))
		})
	}
}
