package format

import (
	"encoding/binary"
)

// Magics of blocks built on xfs_da3_blkinfo (directory leaves, da-btree
// nodes and attribute leaves), stored as be16 at offset 8.
const (
	Dir3Leaf1Magic = 0x3DF1
	Dir3LeafNMagic = 0x3DFF
	Da3NodeMagic   = 0x3EBE
	Attr3LeafMagic = 0x3BEE

	DaBlkinfoSize   = 56
	DaBlkinfoCRCOff = 12
	Da3NodeHdrSize  = 64
)

// DaBlkinfo is struct xfs_da3_blkinfo: the common header of da blocks.
type DaBlkinfo struct {
	Forw  uint32   // forw: next block in the same level (da block number)
	Back  uint32   // back
	Magic uint16   // magic
	Pad   uint16   // pad
	CRC   uint32   // crc
	Blkno Daddr    // blkno
	LSN   LSN      // lsn
	UUID  [16]byte // uuid
	Owner Ino      // owner
}

// DecodeDaBlkinfo parses the header shared by da blocks.
func DecodeDaBlkinfo(b []byte) (*DaBlkinfo, error) {
	if len(b) < DaBlkinfoSize {
		return nil, Corrupt("da block", "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	h := &DaBlkinfo{Forw: be.Uint32(b), Back: be.Uint32(b[4:]), Magic: be.Uint16(b[8:]), Pad: be.Uint16(b[10:]),
		CRC: binary.LittleEndian.Uint32(b[12:]), Blkno: Daddr(be.Uint64(b[16:])), LSN: LSN(be.Uint64(b[24:])),
		Owner: Ino(be.Uint64(b[48:]))}
	copy(h.UUID[:], b[32:48])
	return h, nil
}

// Encode writes the header into b.
func (h *DaBlkinfo) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b, h.Forw)
	be.PutUint32(b[4:], h.Back)
	be.PutUint16(b[8:], h.Magic)
	be.PutUint16(b[10:], h.Pad)
	binary.LittleEndian.PutUint32(b[12:], h.CRC)
	be.PutUint64(b[16:], uint64(h.Blkno))
	be.PutUint64(b[24:], uint64(h.LSN))
	copy(b[32:48], h.UUID[:])
	be.PutUint64(b[48:], uint64(h.Owner))
}

// VerifyDaBlock checks CRC, magic, UUID, self address and owner of a da
// block. magics lists the acceptable magic numbers.
func VerifyDaBlock(g *Geometry, what string, b []byte, blkno Daddr, owner Ino, magics ...uint16) (*DaBlkinfo, error) {
	h, err := DecodeDaBlkinfo(b)
	if err != nil {
		return nil, err
	}
	ok := false
	for _, m := range magics {
		ok = ok || h.Magic == m
	}
	if !ok {
		return nil, Corrupt(what, "", "bad magic %#x", h.Magic)
	}
	if err := checkCRC(what, b, DaBlkinfoCRCOff); err != nil {
		return nil, err
	}
	if err := checkSelf(what, g, h.UUID, h.Blkno, blkno, uint64(h.Owner), uint64(owner)); err != nil {
		return nil, err
	}
	return h, nil
}

// DaNodeEntry is one (hashval, before) pair of a da-btree node.
type DaNodeEntry struct {
	HashVal uint32 // hashval: the largest hash in the subtree
	Before  uint32 // before: da block number of the child
}

// DaNode is a decoded da-btree interior node.
type DaNode struct {
	Info    *DaBlkinfo
	Level   uint16
	Entries []DaNodeEntry
}

// DecodeDaNode parses a verified da node block (count at 56, level at 58).
func DecodeDaNode(b []byte, info *DaBlkinfo) (*DaNode, error) {
	if len(b) < Da3NodeHdrSize {
		return nil, Corrupt("da node", "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	count, level := int(be.Uint16(b[56:])), be.Uint16(b[58:])
	if count == 0 || Da3NodeHdrSize+count*8 > len(b) {
		return nil, Corrupt("da node", "", "%d entries do not fit", count)
	}
	if level == 0 || level > MaxBtreeLevels {
		return nil, Corrupt("da node", "", "bad level %d", level)
	}
	n := &DaNode{Info: info, Level: level, Entries: make([]DaNodeEntry, count)}
	for i := range n.Entries {
		off := Da3NodeHdrSize + 8*i
		n.Entries[i] = DaNodeEntry{be.Uint32(b[off:]), be.Uint32(b[off+4:])}
		if i > 0 && n.Entries[i].HashVal < n.Entries[i-1].HashVal {
			return nil, Corrupt("da node", "", "hash order broken at entry %d", i)
		}
	}
	return n, nil
}
