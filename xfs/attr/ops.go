package attr

import (
	"encoding/binary"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// leafWhat names attribute leaves, and the attribute da-btree, in errors.
const leafWhat = "attr3 leaf"

// maxDepth is XFS_DA_NODE_MAXDEPTH: node levels plus the leaf level.
const maxDepth = 5

// blockOps holds the trans.Ops of the two block kinds of an attribute
// fork, bound to one filesystem and owner (the verifiers need both).
type blockOps struct {
	da  trans.Ops // leaves and da nodes (both may sit at block 0)
	rmt trans.Ops // remote value blocks
}

func newBlockOps(g *format.Geometry, owner format.Ino) *blockOps {
	o := &blockOps{}
	o.da = trans.Ops{
		Name: "attr da block",
		Verify: func(b []byte, daddr format.Daddr) error {
			if err := dabtree.VerifyBlkinfo(leafWhat, b, daddr, format.Attr3LeafMagic, dabtree.NodeMagic); err != nil {
				return err
			}
			if err := dabtree.CheckOwner(leafWhat, b, g.UUID, owner); err != nil {
				return err
			}
			if dabtree.Magic(b) == dabtree.NodeMagic {
				return dabtree.VerifyNode(b)
			}
			return verifyLeaf(b)
		},
		Finish: func(b []byte) { format.SetCRC(b, format.DaBlkinfoCRCOff) },
	}
	o.rmt = trans.Ops{
		Name: "attr remote block",
		Verify: func(b []byte, daddr format.Daddr) error {
			return verifyRmt(g, b, daddr, owner)
		},
		Finish: func(b []byte) { format.SetCRC(b, format.RmtCRCOff) },
	}
	return o
}

// verifyLeaf checks an attribute leaf the way xfs_attr3_leaf_verify does:
// firstused inside the block and above the entry table, every entry in
// hash order with its record inside the block, a named record, a value
// block for complete remote entries, and a sane freemap.
func verifyLeaf(b []byte) error {
	const what = "attr3 leaf block"
	bs := len(b)
	if binary.BigEndian.Uint16(b[60:]) == 0 && bs < 1<<16 {
		return format.Corrupt(what, "", "first used byte is 0")
	}
	h := leafHdrOf(b)
	if h.firstused > bs || h.firstused < leafHdrSize {
		return format.Corrupt(what, "", "first used byte %d outside the block", h.firstused)
	}
	if entOff(h.count) > h.firstused {
		return format.Corrupt(what, "", "%d entries run into the names at %d", h.count, h.firstused)
	}
	var last uint32
	for i := 0; i < h.count; i++ {
		e := leafEntOf(b, i)
		if e.hash < last {
			return format.Corrupt(what, "", "hash order broken at entry %d", i)
		}
		last = e.hash
		if e.flags&^format.AttrOnDiskMask != 0 || !oneNamespace(e.flags) {
			return format.Corrupt(what, "", "entry %d has flags %#x", i, e.flags)
		}
		if e.idx < h.firstused || e.idx >= bs {
			return format.Corrupt(what, "", "entry %d name index %d out of range", i, e.idx)
		}
		var end, nl int
		if e.flags&format.AttrLocal != 0 {
			if e.idx+3 > bs {
				return format.Corrupt(what, "", "entry %d record overruns the block", i)
			}
			nl = int(b[e.idx+2])
			end = e.idx + entsizeLocal(nl, int(binary.BigEndian.Uint16(b[e.idx:])))
		} else {
			if e.idx+9 > bs {
				return format.Corrupt(what, "", "entry %d record overruns the block", i)
			}
			nl = int(b[e.idx+8])
			end = e.idx + entsizeRemote(nl)
			if blk, vl := entRemote(b, i); e.flags&format.AttrIncomplete == 0 && (blk == 0 || vl > format.MaxAttrValueLen) {
				return format.Corrupt(what, "", "remote entry %d has value block %d, length %d", i, blk, vl)
			}
		}
		if nl == 0 {
			return format.Corrupt(what, "", "entry %d has an empty name", i)
		}
		if end > bs {
			return format.Corrupt(what, "", "entry %d record overruns the block", i)
		}
	}
	for i, r := range h.freemap {
		if r.base > bs || r.base&3 != 0 || r.size > bs || r.size&3 != 0 || r.base+r.size > bs {
			return format.Corrupt(what, "", "freemap %d (%d, %d) is not sane", i, r.base, r.size)
		}
	}
	return nil
}

// nodeHdrSize is the size of xfs_da3_node_hdr; entries (hashval, before)
// of 8 bytes follow.
const nodeHdrSize = format.Da3NodeHdrSize

// nodeEnts is geo->node_ents: entries a node block holds.
func nodeEnts(bs int) int { return (bs - nodeHdrSize) / 8 }

// verifyRmt checks one remote value block as xfs_attr3_rmt_verify does;
// the caller checks offset and length against the leaf entry.
func verifyRmt(g *format.Geometry, b []byte, daddr format.Daddr, owner format.Ino) error {
	const what = "attr remote block"
	be := binary.BigEndian
	if be.Uint32(b) != format.AttrRmtMagic {
		return format.Corrupt(what, "", "bad magic %#x", be.Uint32(b))
	}
	if !format.CRCOK(b, format.RmtCRCOff) {
		return format.Corrupt(what, "", "bad CRC")
	}
	var uuid [16]byte
	copy(uuid[:], b[16:32])
	off, n := be.Uint32(b[4:]), be.Uint32(b[8:])
	switch {
	case uuid != g.UUID:
		return format.Corrupt(what, "", "UUID does not match the superblock")
	case format.Daddr(be.Uint64(b[40:])) != daddr:
		return format.Corrupt(what, "", "block claims to live at daddr %d", be.Uint64(b[40:]))
	case int(n) > len(b)-format.RmtHdrSize:
		return format.Corrupt(what, "", "%d payload bytes do not fit", n)
	case uint64(off)+uint64(n) > format.MaxAttrValueLen:
		return format.Corrupt(what, "", "piece %d+%d beyond the largest value", off, n)
	case format.Ino(be.Uint64(b[32:])) != owner:
		return format.Corrupt(what, "", "owner %d, want %d", be.Uint64(b[32:]), owner)
	}
	return nil
}

// Node accessors (xfs_da3_node_hdr after the blkinfo: count be16 @56,
// level be16 @58; entries from 64).
func nodeCount(b []byte) int { return int(binary.BigEndian.Uint16(b[56:])) }
func nodeLevel(b []byte) int { return int(binary.BigEndian.Uint16(b[58:])) }
func setNodeCount(b []byte, n int) {
	binary.BigEndian.PutUint16(b[56:], uint16(n))
}

func nodeEnt(b []byte, i int) (hash, before uint32) {
	o := nodeHdrSize + 8*i
	return binary.BigEndian.Uint32(b[o:]), binary.BigEndian.Uint32(b[o+4:])
}

func putNodeEnt(b []byte, i int, hash, before uint32) {
	o := nodeHdrSize + 8*i
	binary.BigEndian.PutUint32(b[o:], hash)
	binary.BigEndian.PutUint32(b[o+4:], before)
}

func setNodeHash(b []byte, i int, hash uint32) {
	binary.BigEndian.PutUint32(b[nodeHdrSize+8*i:], hash)
}

func blkMagic(b []byte) uint16 { return binary.BigEndian.Uint16(b[leafMagicOff:]) }
func blkForw(b []byte) uint32  { return binary.BigEndian.Uint32(b) }
func blkBack(b []byte) uint32  { return binary.BigEndian.Uint32(b[4:]) }
func setBlkForw(b []byte, v uint32) {
	binary.BigEndian.PutUint32(b, v)
}
func setBlkBack(b []byte, v uint32) {
	binary.BigEndian.PutUint32(b[4:], v)
}

// initNode formats b as an empty da node of level (xfs_da3_node_create).
// Like the kernel it only clears the node header: when block 0 becomes a
// node again (leaf to node, root split) the bytes past the new entries
// keep what the block held before, and a new block is zero anyway.
func initNode(b []byte, g *format.Geometry, daddr format.Daddr, owner format.Ino, level int) {
	dabtree.InitNode(b, level, daddr, g.UUID, owner)
}
