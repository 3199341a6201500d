package dir

import (
	"bytes"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Block kinds, each with a read verifier (CRC, magic, own address, then
// structure, like the kernel's verify_read) and Finish (LSN 0, CRC). The
// UUID and owner are checked after each read, where the filesystem and
// inode are known.
var (
	// DataOps covers data blocks ("XDD3") and single-block directories
	// ("XDB3"): CRC at offset 4.
	DataOps = &trans.Ops{Name: "dir3 data", Verify: verifyDataBlock, Finish: finishCRC4}
	// Leaf1Ops covers the single leaf block of a leaf directory: CRC at 12.
	Leaf1Ops = &trans.Ops{Name: "dir3 leaf1", Verify: leafVerifier(format.Dir3Leaf1Magic), Finish: dabtree.Finish}
	// LeafNOps covers the leaves of a node directory's da-btree.
	LeafNOps = &trans.Ops{Name: "dir3 leafn", Verify: leafVerifier(format.Dir3LeafNMagic), Finish: dabtree.Finish}
	// NodeOps covers da-btree interior nodes (shared with attributes).
	NodeOps = dabtree.NodeOps
	// TreeOps reads any block of the leaf space: leaf1, leafn or node.
	TreeOps = &trans.Ops{Name: "dir3 leaf", Verify: verifyLeafSpace, Finish: dabtree.Finish}
	// FreeOps covers free-index blocks ("XDF3"): CRC at offset 4.
	FreeOps = &trans.Ops{Name: "dir3 free", Verify: verifyFree, Finish: finishCRC4}
)

// finishCRC4 stamps LSN 0 (until the metadata log exists; always safe for
// recovery) and the CRC of a block with xfs_dir3_blk_hdr.
func finishCRC4(b []byte) {
	clear(b[16:24])
	format.SetCRC(b, format.Dir3DataCRCOff)
}

// verifyHdr4 checks CRC, magic and self address of a block with the
// 48-byte xfs_dir3_blk_hdr.
func verifyHdr4(what string, b []byte, daddr format.Daddr, magics ...uint32) error {
	if len(b) < dataHdrSize {
		return format.Corrupt(what, "", "%d bytes is too short", len(b))
	}
	m := be.Uint32(b)
	ok := false
	for _, want := range magics {
		ok = ok || m == want
	}
	if !ok {
		return format.Corrupt(what, "", "bad magic %#x", m)
	}
	if !format.CRCOK(b, format.Dir3DataCRCOff) {
		return format.Corrupt(what, "", "bad CRC")
	}
	if d := format.Daddr(be.Uint64(b[8:])); d != daddr {
		return format.Corrupt(what, "", "block claims to live at daddr %d, read from %d", d, daddr)
	}
	return nil
}

func verifyDataBlock(b []byte, daddr format.Daddr) error {
	if err := verifyHdr4("dir3 data block", b, daddr, format.Dir3BlockMagic, format.Dir3DataMagic); err != nil {
		return err
	}
	return checkData(dblock(b))
}

func verifyFree(b []byte, daddr format.Daddr) error {
	if err := verifyHdr4("dir3 free block", b, daddr, format.Dir3FreeMagic); err != nil {
		return err
	}
	f := fblock(b)
	if f.nvalid() > format.DirFreeMaxBests(len(b)) || f.nused() > f.nvalid() {
		return format.Corrupt("dir3 free block", "", "nvalid %d nused %d out of range", f.nvalid(), f.nused())
	}
	return nil
}

// checkOwner4 checks UUID and owner of a block with xfs_dir3_blk_hdr.
func checkOwner4(what string, b []byte, uuid [16]byte, owner format.Ino) error {
	if !bytes.Equal(b[24:40], uuid[:]) {
		return format.Corrupt(what, "", "UUID does not match the superblock")
	}
	if o := format.Ino(be.Uint64(b[40:])); o != owner {
		return format.Corrupt(what, "", "owner %d, want %d", o, owner)
	}
	return nil
}

func leafVerifier(magic uint16) func([]byte, format.Daddr) error {
	return func(b []byte, daddr format.Daddr) error {
		if err := dabtree.VerifyBlkinfo("dir3 leaf", b, daddr, magic); err != nil {
			return err
		}
		return checkLeaf(lblock(b))
	}
}

func verifyLeafSpace(b []byte, daddr format.Daddr) error {
	if err := dabtree.VerifyBlkinfo("dir3 leaf", b, daddr, format.Dir3Leaf1Magic, format.Dir3LeafNMagic, dabtree.NodeMagic); err != nil {
		return err
	}
	if dabtree.Magic(b) == dabtree.NodeMagic {
		return dabtree.VerifyNode(b)
	}
	return checkLeaf(lblock(b))
}

// checkLeaf verifies a leaf1 or leafn block's structure
// (xfs_dir3_leaf_check_int): the entries fit (below the bests table in a
// leaf1 block), hashes are ordered, the stale count is right and in a
// leaf1 block every address falls inside the bests table.
func checkLeaf(l lblock) error {
	const what = "dir3 leaf block"
	count := l.count()
	if count > (len(l)-leafHdrSize)/8 {
		return format.Corrupt(what, "", "%d entries do not fit", count)
	}
	leaf1 := l.magic() == format.Dir3Leaf1Magic
	var bestCount int
	if leaf1 {
		bestCount = l.bestCount()
		if leafHdrSize+8*count > l.bestsStart() || l.bestsStart() < leafHdrSize {
			return format.Corrupt(what, "", "%d entries and %d bests overlap", count, bestCount)
		}
	}
	stale := 0
	blkLog := log2(len(l))
	for i := 0; i < count; i++ {
		h, a := l.ent(i)
		if i > 0 {
			if p, _ := l.ent(i - 1); h < p {
				return format.Corrupt(what, "", "hash order broken at entry %d", i)
			}
		}
		if a == format.NullDataptr {
			stale++
		}
		if leaf1 && int(uint64(a)<<3>>blkLog) >= bestCount {
			return format.Corrupt(what, "", "entry %d points past the %d data blocks", i, bestCount)
		}
	}
	if stale != l.stale() {
		return format.Corrupt(what, "", "%d stale entries, header says %d", stale, l.stale())
	}
	return nil
}

func log2(n int) uint {
	var l uint
	for 1<<l < n {
		l++
	}
	return l
}
