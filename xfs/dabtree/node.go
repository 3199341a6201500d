package dabtree

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Layout of xfs_da3_blkinfo and xfs_da3_node_hdr.
const (
	offForw  = 0
	offBack  = 4
	offMagic = 8
	offCRC   = format.DaBlkinfoCRCOff // 12
	offBlkno = 16
	offLSN   = 24
	offUUID  = 32
	offOwner = 48
	// HdrSize is the size of a node header (and of dir3 leaf headers).
	HdrSize    = format.Da3NodeHdrSize // 64
	offCount   = 56
	offLevel   = 58
	entrySize  = 8
	NodeMagic  = format.Da3NodeMagic // 0x3EBE
	MaxDepth   = 5                   // XFS_DA_NODE_MAXDEPTH: blocks on a root-to-leaf path
	maxLevel   = MaxDepth - 1
	blkinfoLen = format.DaBlkinfoSize
)

var be = binary.BigEndian

// Magic returns the magic number of any da block.
func Magic(b []byte) uint16 { return be.Uint16(b[offMagic:]) }

// Forw and Back return the sibling links of a da block (0: none).
func Forw(b []byte) uint32 { return be.Uint32(b[offForw:]) }
func Back(b []byte) uint32 { return be.Uint32(b[offBack:]) }

// SetForw and SetBack change the sibling links of a da block.
func SetForw(b []byte, v uint32) { be.PutUint32(b[offForw:], v) }
func SetBack(b []byte, v uint32) { be.PutUint32(b[offBack:], v) }

// InitHeader writes a fresh xfs_da3_blkinfo (no siblings, LSN 0) for a
// block at daddr owned by owner, zeroing the first hdrLen bytes first.
func InitHeader(b []byte, hdrLen int, magic uint16, daddr format.Daddr, uuid [16]byte, owner format.Ino) {
	clear(b[:hdrLen])
	be.PutUint16(b[offMagic:], magic)
	be.PutUint64(b[offBlkno:], uint64(daddr))
	copy(b[offUUID:offUUID+16], uuid[:])
	be.PutUint64(b[offOwner:], uint64(owner))
}

// SetBlkno records a block's own disk address in its header (after the
// contents of another block were copied into it).
func SetBlkno(b []byte, daddr format.Daddr) { be.PutUint64(b[offBlkno:], uint64(daddr)) }

// NodeCount and NodeLevel read a node header.
func NodeCount(b []byte) int { return int(be.Uint16(b[offCount:])) }
func NodeLevel(b []byte) int { return int(be.Uint16(b[offLevel:])) }

func setNodeCount(b []byte, n int) { be.PutUint16(b[offCount:], uint16(n)) }

// NodeEntry returns entry i of a node: the largest hash below the child
// and the child's block number.
func NodeEntry(b []byte, i int) (hash, before uint32) {
	o := HdrSize + i*entrySize
	return be.Uint32(b[o:]), be.Uint32(b[o+4:])
}

func setNodeEntry(b []byte, i int, hash, before uint32) {
	o := HdrSize + i*entrySize
	be.PutUint32(b[o:], hash)
	be.PutUint32(b[o+4:], before)
}

func nodeHash(b []byte, i int) uint32 { return be.Uint32(b[HdrSize+i*entrySize:]) }

func setNodeHash(b []byte, i int, h uint32) { be.PutUint32(b[HdrSize+i*entrySize:], h) }

// NodeEnts is how many entries a node block of blkSize bytes holds.
func NodeEnts(blkSize int) int { return (blkSize - HdrSize) / entrySize }

// InitNode formats b as an empty node of the given level.
func InitNode(b []byte, level int, daddr format.Daddr, uuid [16]byte, owner format.Ino) {
	InitHeader(b, HdrSize, NodeMagic, daddr, uuid, owner)
	be.PutUint16(b[offLevel:], uint16(level))
}

// SetCRC stores the CRC of a block built on xfs_da3_blkinfo.
func SetCRC(b []byte) { format.SetCRC(b, offCRC) }

// Finish prepares a changed da block for writing, like the kernel's write
// verifiers: it stamps the LSN (0 until the metadata log exists, which is
// always safe for log recovery) and sets the CRC.
func Finish(b []byte) {
	clear(b[offLSN : offLSN+8])
	SetCRC(b)
}

// VerifyBlkinfo checks what a read verifier can check of any da block: the
// CRC, that the magic is one of magics and that the block records its own
// disk address.
func VerifyBlkinfo(what string, b []byte, daddr format.Daddr, magics ...uint16) error {
	if len(b) < HdrSize {
		return format.Corrupt(what, "", "%d bytes is too short", len(b))
	}
	m := Magic(b)
	ok := false
	for _, want := range magics {
		ok = ok || m == want
	}
	if !ok {
		return format.Corrupt(what, "", "bad magic %#x", m)
	}
	if !format.CRCOK(b, offCRC) {
		return format.Corrupt(what, "", "bad CRC (stored %#08x, computed %#08x)",
			binary.LittleEndian.Uint32(b[offCRC:]), format.ComputeCRC(b, offCRC))
	}
	if d := format.Daddr(be.Uint64(b[offBlkno:])); d != daddr {
		return format.Corrupt(what, "", "block claims to live at daddr %d, read from %d", d, daddr)
	}
	return nil
}

// CheckOwner checks the UUID and owner recorded in a da block header (the
// part of verification that needs to know the filesystem and the inode).
func CheckOwner(what string, b []byte, uuid [16]byte, owner format.Ino) error {
	if !bytes.Equal(b[offUUID:offUUID+16], uuid[:]) {
		return format.Corrupt(what, "", "UUID does not match the superblock")
	}
	if o := format.Ino(be.Uint64(b[offOwner:])); o != owner {
		return format.Corrupt(what, "", "owner %d, want %d", o, owner)
	}
	return nil
}

// VerifyNode checks the structure of a node block: level, count and hash
// order (xfs_da3_node_verify, plus the order that xfs_repair checks).
func VerifyNode(b []byte) error {
	const what = "da node"
	level, count := NodeLevel(b), NodeCount(b)
	if level < 1 || level > maxLevel {
		return format.Corrupt(what, "", "bad level %d", level)
	}
	if count < 1 || count > NodeEnts(len(b)) {
		return format.Corrupt(what, "", "%d entries, at most %d fit", count, NodeEnts(len(b)))
	}
	for i := 1; i < count; i++ {
		if nodeHash(b, i) < nodeHash(b, i-1) {
			return format.Corrupt(what, "", "hash order broken at entry %d", i)
		}
	}
	return nil
}

// NodeOps verifies and finishes interior node blocks.
var NodeOps = &trans.Ops{
	Name: "da node",
	Verify: func(b []byte, daddr format.Daddr) error {
		if err := VerifyBlkinfo("da node", b, daddr, NodeMagic); err != nil {
			return err
		}
		return VerifyNode(b)
	},
	Finish: Finish,
}

// TreeOps returns Ops for reading any block of a tree whose leaves have
// leafMagic: nodes are verified with VerifyNode, leaves with verifyLeaf.
func TreeOps(name string, leafMagic uint16, verifyLeaf func(b []byte) error) *trans.Ops {
	return &trans.Ops{
		Name: name,
		Verify: func(b []byte, daddr format.Daddr) error {
			if err := VerifyBlkinfo(name, b, daddr, NodeMagic, leafMagic); err != nil {
				return err
			}
			if Magic(b) == NodeMagic {
				return VerifyNode(b)
			}
			if verifyLeaf != nil {
				return verifyLeaf(b)
			}
			return nil
		},
		Finish: Finish,
	}
}

func blockWhere(blkno uint32) string { return fmt.Sprintf("da block %d", blkno) }
