package attr

import (
	"encoding/binary"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// leafWhat names attribute leaves, and the attribute da-btree, in errors.
const leafWhat = "attr3 leaf"

func blockWhere(no uint32) string { return fmt.Sprintf("attr block %d", no) }

// rmtOps verifies and finishes remote value blocks. The verifier knows
// no filesystem, so rmtBlock checks UUID and owner after each read (as
// dabtree.Tree.Read does for tree blocks).
var rmtOps = &trans.Ops{
	Name:   "attr remote block",
	Verify: verifyRmt,
	Finish: func(b []byte) { format.SetCRC(b, format.RmtCRCOff) },
}

// verifyLeaf checks an attribute leaf the way xfs_attr3_leaf_verify does:
// firstused inside the block and above the entry table, every entry in
// hash order with its record inside the block, a named record, a value
// block for complete remote entries, and a sane freemap.
func verifyLeaf(b []byte) error {
	const what = "attr3 leaf block"
	bs := len(b)
	if bs < leafHdrSize {
		return format.Corrupt(what, "", "%d bytes is too short", bs)
	}
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

const rmtWhat = "attr remote block"

// verifyRmt checks one remote value block as xfs_attr3_rmt_verify does,
// but for UUID and owner (checkRmtOwner); the caller checks offset and
// length against the leaf entry.
func verifyRmt(b []byte, daddr format.Daddr) error {
	_, err := format.VerifyRmtHdr(rmtWhat, format.AttrRmtMagic, b, daddr)
	return err
}

// checkRmtOwner checks the UUID and owner of a remote value block.
func checkRmtOwner(g *format.Geometry, b []byte, owner format.Ino) error {
	return format.CheckRmtOwner(rmtWhat, g, b, owner)
}
