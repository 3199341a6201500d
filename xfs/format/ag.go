package format

import (
	"bytes"
	"encoding/binary"
)

// AG header magics.
const (
	AgfMagic  = 0x58414746 // "XAGF"
	AgiMagic  = 0x58414749 // "XAGI"
	AgflMagic = 0x5841464C // "XAFL"

	AgfCRCOff   = 216
	AgiCRCOff   = 312
	AgflCRCOff  = 32
	AgflHdrSize = 36

	// AgiUnlinkedBuckets is the size of the AGI's unlinked-inode hash.
	AgiUnlinkedBuckets = 64
)

// Btree indices in AGF roots/levels.
const (
	BtBno = iota
	BtCnt
	BtRmap
)

// Agf is struct xfs_agf in disk order (free space header, sector 1 of an AG).
type Agf struct {
	Magic          uint32     // agf_magicnum
	Version        uint32     // agf_versionnum
	SeqNo          AgNumber   // agf_seqno
	Length         uint32     // agf_length
	Roots          [3]AgBlock // agf_bno_root, agf_cnt_root, agf_rmap_root
	Levels         [3]uint32  // agf_bno_level, agf_cnt_level, agf_rmap_level
	FlFirst        uint32     // agf_flfirst
	FlLast         uint32     // agf_fllast
	FlCount        uint32     // agf_flcount
	FreeBlks       uint32     // agf_freeblks
	Longest        uint32     // agf_longest
	BtreeBlks      uint32     // agf_btreeblks
	UUID           [16]byte   // agf_uuid
	RmapBlocks     uint32     // agf_rmap_blocks
	RefcountBlocks uint32     // agf_refcount_blocks
	RefcountRoot   AgBlock    // agf_refcount_root
	RefcountLevel  uint32     // agf_refcount_level
	Spare64        [112]byte  // agf_spare64[14]
	LSN            LSN        // agf_lsn
	CRC            uint32     // agf_crc
	Spare2         uint32     // agf_spare2
}

// decodeNew decodes b with into into a new value.
func decodeNew[T any](b []byte, into func([]byte, *T) error) (*T, error) {
	v := new(T)
	if err := into(b, v); err != nil {
		return nil, err
	}
	return v, nil
}

// AgfLen and AgiLen are the bytes of an AGF and an AGI header that
// DecodeAgf and DecodeAgi read: the rest of their sectors is zero.
const (
	AgfLen = 224
	AgiLen = 344
)

// DecodeAgf parses an AGF sector.
func DecodeAgf(b []byte) (*Agf, error) { return decodeNew(b, DecodeAgfInto) }

// DecodeAgfInto is DecodeAgf into a.
func DecodeAgfInto(b []byte, a *Agf) error {
	if len(b) < AgfLen {
		return Corrupt("AGF", "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	*a = Agf{Magic: be.Uint32(b[0:]), Version: be.Uint32(b[4:]), SeqNo: AgNumber(be.Uint32(b[8:])), Length: be.Uint32(b[12:])}
	for i := 0; i < 3; i++ {
		a.Roots[i] = AgBlock(be.Uint32(b[16+4*i:]))
		a.Levels[i] = be.Uint32(b[28+4*i:])
	}
	a.FlFirst, a.FlLast, a.FlCount = be.Uint32(b[40:]), be.Uint32(b[44:]), be.Uint32(b[48:])
	a.FreeBlks, a.Longest, a.BtreeBlks = be.Uint32(b[52:]), be.Uint32(b[56:]), be.Uint32(b[60:])
	copy(a.UUID[:], b[64:80])
	a.RmapBlocks, a.RefcountBlocks = be.Uint32(b[80:]), be.Uint32(b[84:])
	a.RefcountRoot, a.RefcountLevel = AgBlock(be.Uint32(b[88:])), be.Uint32(b[92:])
	copy(a.Spare64[:], b[96:208])
	a.LSN = LSN(be.Uint64(b[208:]))
	a.CRC = binary.LittleEndian.Uint32(b[216:])
	a.Spare2 = be.Uint32(b[220:])
	return nil
}

// Encode writes the AGF into b (at least 224 bytes); the CRC is set by SetCRC.
func (a *Agf) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b[0:], a.Magic)
	be.PutUint32(b[4:], a.Version)
	be.PutUint32(b[8:], uint32(a.SeqNo))
	be.PutUint32(b[12:], a.Length)
	for i := 0; i < 3; i++ {
		be.PutUint32(b[16+4*i:], uint32(a.Roots[i]))
		be.PutUint32(b[28+4*i:], a.Levels[i])
	}
	be.PutUint32(b[40:], a.FlFirst)
	be.PutUint32(b[44:], a.FlLast)
	be.PutUint32(b[48:], a.FlCount)
	be.PutUint32(b[52:], a.FreeBlks)
	be.PutUint32(b[56:], a.Longest)
	be.PutUint32(b[60:], a.BtreeBlks)
	copy(b[64:80], a.UUID[:])
	be.PutUint32(b[80:], a.RmapBlocks)
	be.PutUint32(b[84:], a.RefcountBlocks)
	be.PutUint32(b[88:], uint32(a.RefcountRoot))
	be.PutUint32(b[92:], a.RefcountLevel)
	copy(b[96:208], a.Spare64[:])
	be.PutUint64(b[208:], uint64(a.LSN))
	binary.LittleEndian.PutUint32(b[216:], a.CRC)
	be.PutUint32(b[220:], a.Spare2)
}

// agHeader is what the AGF and AGI headers share, beside the magic
// number their kind wants.
type agHeader struct {
	magic, wantMagic uint32
	version          uint32
	uuid             [16]byte
	seqNo            AgNumber
	length           uint32
}

// checkAgHeader checks the fields every AG header of AG ag has alike.
func checkAgHeader(what string, g *Geometry, ag AgNumber, h agHeader) error {
	switch {
	case h.magic != h.wantMagic:
		return Corrupt(what, "", "bad magic %#x", h.magic)
	case h.version != 1:
		return Corrupt(what, "", "bad version %d", h.version)
	case h.uuid != g.UUID:
		return Corrupt(what, "", "UUID does not match the superblock")
	case h.seqNo != ag:
		return Corrupt(what, "", "sequence number %d, want %d", h.seqNo, ag)
	case h.length != g.AgSize(ag):
		return Corrupt(what, "", "length %d, want %d", h.length, g.AgSize(ag))
	}
	return nil
}

// VerifyAgf checks an AGF sector the way the kernel's read verifier does.
func VerifyAgf(g *Geometry, ag AgNumber, sector []byte) (*Agf, error) {
	const what = "AGF"
	if err := checkCRC(what, sector, AgfCRCOff); err != nil {
		return nil, err
	}
	a, err := DecodeAgf(sector)
	if err != nil {
		return nil, err
	}
	if err := checkAgHeader(what, g, ag, agHeader{a.Magic, AgfMagic, a.Version, a.UUID, a.SeqNo, a.Length}); err != nil {
		return nil, err
	}
	switch {
	case a.FreeBlks > a.Length || a.Longest > a.FreeBlks || a.FlCount > uint32(AgflSize(g)) ||
		a.FlFirst >= uint32(AgflSize(g)) || a.FlLast >= uint32(AgflSize(g)):
		return nil, Corrupt(what, "", "free space counters out of range")
	}
	for i, lvl := range a.Levels {
		if i == BtRmap && !g.Rmapbt {
			continue
		}
		if lvl < 1 || lvl > MaxBtreeLevels || !g.ValidAgBlock(ag, a.Roots[i]) {
			return nil, Corrupt(what, "", "btree %d root %d level %d out of range", i, a.Roots[i], lvl)
		}
	}
	if g.Reflink && (a.RefcountLevel < 1 || a.RefcountLevel > MaxBtreeLevels || !g.ValidAgBlock(ag, a.RefcountRoot)) {
		return nil, Corrupt(what, "", "refcount root %d level %d out of range", a.RefcountRoot, a.RefcountLevel)
	}
	return a, nil
}

// Agi is struct xfs_agi in disk order (inode header, sector 2 of an AG).
type Agi struct {
	Magic     uint32                    // agi_magicnum
	Version   uint32                    // agi_versionnum
	SeqNo     AgNumber                  // agi_seqno
	Length    uint32                    // agi_length
	Count     uint32                    // agi_count
	Root      AgBlock                   // agi_root
	Level     uint32                    // agi_level
	FreeCount uint32                    // agi_freecount
	NewIno    AgIno                     // agi_newino
	DirIno    AgIno                     // agi_dirino (unused)
	Unlinked  [AgiUnlinkedBuckets]AgIno // agi_unlinked
	UUID      [16]byte                  // agi_uuid
	CRC       uint32                    // agi_crc
	Pad32     uint32                    // agi_pad32
	LSN       LSN                       // agi_lsn
	FreeRoot  AgBlock                   // agi_free_root
	FreeLevel uint32                    // agi_free_level
	IBlocks   uint32                    // agi_iblocks
	FBlocks   uint32                    // agi_fblocks
}

// DecodeAgi parses an AGI sector.
func DecodeAgi(b []byte) (*Agi, error) { return decodeNew(b, DecodeAgiInto) }

// DecodeAgiInto is DecodeAgi into a.
func DecodeAgiInto(b []byte, a *Agi) error {
	if len(b) < AgiLen {
		return Corrupt("AGI", "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	*a = Agi{Magic: be.Uint32(b[0:]), Version: be.Uint32(b[4:]), SeqNo: AgNumber(be.Uint32(b[8:])),
		Length: be.Uint32(b[12:]), Count: be.Uint32(b[16:]), Root: AgBlock(be.Uint32(b[20:])),
		Level: be.Uint32(b[24:]), FreeCount: be.Uint32(b[28:]), NewIno: AgIno(be.Uint32(b[32:])),
		DirIno: AgIno(be.Uint32(b[36:]))}
	for i := range a.Unlinked {
		a.Unlinked[i] = AgIno(be.Uint32(b[40+4*i:]))
	}
	copy(a.UUID[:], b[296:312])
	a.CRC = binary.LittleEndian.Uint32(b[312:])
	a.Pad32 = be.Uint32(b[316:])
	a.LSN = LSN(be.Uint64(b[320:]))
	a.FreeRoot, a.FreeLevel = AgBlock(be.Uint32(b[328:])), be.Uint32(b[332:])
	a.IBlocks, a.FBlocks = be.Uint32(b[336:]), be.Uint32(b[340:])
	return nil
}

// Encode writes the AGI into b (at least 344 bytes).
func (a *Agi) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b[0:], a.Magic)
	be.PutUint32(b[4:], a.Version)
	be.PutUint32(b[8:], uint32(a.SeqNo))
	be.PutUint32(b[12:], a.Length)
	be.PutUint32(b[16:], a.Count)
	be.PutUint32(b[20:], uint32(a.Root))
	be.PutUint32(b[24:], a.Level)
	be.PutUint32(b[28:], a.FreeCount)
	be.PutUint32(b[32:], uint32(a.NewIno))
	be.PutUint32(b[36:], uint32(a.DirIno))
	for i, v := range a.Unlinked {
		be.PutUint32(b[40+4*i:], uint32(v))
	}
	copy(b[296:312], a.UUID[:])
	binary.LittleEndian.PutUint32(b[312:], a.CRC)
	be.PutUint32(b[316:], a.Pad32)
	be.PutUint64(b[320:], uint64(a.LSN))
	be.PutUint32(b[328:], uint32(a.FreeRoot))
	be.PutUint32(b[332:], a.FreeLevel)
	be.PutUint32(b[336:], a.IBlocks)
	be.PutUint32(b[340:], a.FBlocks)
}

// VerifyAgi checks an AGI sector the way the kernel's read verifier does.
func VerifyAgi(g *Geometry, ag AgNumber, sector []byte) (*Agi, error) {
	const what = "AGI"
	if err := checkCRC(what, sector, AgiCRCOff); err != nil {
		return nil, err
	}
	a, err := DecodeAgi(sector)
	if err != nil {
		return nil, err
	}
	if err := checkAgHeader(what, g, ag, agHeader{a.Magic, AgiMagic, a.Version, a.UUID, a.SeqNo, a.Length}); err != nil {
		return nil, err
	}
	switch {
	case a.Level < 1 || a.Level > MaxBtreeLevels || !g.ValidAgBlock(ag, a.Root):
		return nil, Corrupt(what, "", "inobt root %d level %d out of range", a.Root, a.Level)
	case g.Finobt && (a.FreeLevel < 1 || a.FreeLevel > MaxBtreeLevels || !g.ValidAgBlock(ag, a.FreeRoot)):
		return nil, Corrupt(what, "", "finobt root %d level %d out of range", a.FreeRoot, a.FreeLevel)
	case a.FreeCount > a.Count:
		return nil, Corrupt(what, "", "%d free inodes of %d", a.FreeCount, a.Count)
	}
	for i, ino := range a.Unlinked {
		if ino == 0 {
			return nil, Corrupt(what, "", "unlinked bucket %d points at inode 0", i)
		}
	}
	return a, nil
}

// AgflSize is the number of block slots in an AGFL sector.
func AgflSize(g *Geometry) int { return (g.SectSize - AgflHdrSize) / 4 }

// Agfl is the AG free list header plus its slots.
type Agfl struct {
	Magic uint32   // agfl_magicnum
	SeqNo AgNumber // agfl_seqno
	UUID  [16]byte // agfl_uuid
	LSN   LSN      // agfl_lsn
	CRC   uint32   // agfl_crc
	Bno   []AgBlock
}

// DecodeAgfl parses an AGFL sector.
func DecodeAgfl(b []byte) (*Agfl, error) {
	if len(b) < AgflHdrSize {
		return nil, Corrupt("AGFL", "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	a := &Agfl{Magic: be.Uint32(b[0:]), SeqNo: AgNumber(be.Uint32(b[4:])), LSN: LSN(be.Uint64(b[24:])),
		CRC: binary.LittleEndian.Uint32(b[32:])}
	copy(a.UUID[:], b[8:24])
	n := (len(b) - AgflHdrSize) / 4
	a.Bno = make([]AgBlock, n)
	for i := range a.Bno {
		a.Bno[i] = AgBlock(be.Uint32(b[AgflHdrSize+4*i:]))
	}
	return a, nil
}

// Encode writes the AGFL into a whole sector b.
func (a *Agfl) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b[0:], a.Magic)
	be.PutUint32(b[4:], uint32(a.SeqNo))
	copy(b[8:24], a.UUID[:])
	be.PutUint64(b[24:], uint64(a.LSN))
	binary.LittleEndian.PutUint32(b[32:], a.CRC)
	for i, v := range a.Bno {
		be.PutUint32(b[AgflHdrSize+4*i:], uint32(v))
	}
}

// VerifyAgfl checks an AGFL sector.
func VerifyAgfl(g *Geometry, ag AgNumber, sector []byte) (*Agfl, error) {
	const what = "AGFL"
	if err := checkCRC(what, sector, AgflCRCOff); err != nil {
		return nil, err
	}
	a, err := DecodeAgfl(sector)
	if err != nil {
		return nil, err
	}
	switch {
	case a.Magic != AgflMagic:
		return nil, Corrupt(what, "", "bad magic %#x", a.Magic)
	case !bytes.Equal(a.UUID[:], g.UUID[:]):
		return nil, Corrupt(what, "", "UUID does not match the superblock")
	case a.SeqNo != ag:
		return nil, Corrupt(what, "", "sequence number %d, want %d", a.SeqNo, ag)
	}
	for _, b := range a.Bno {
		if b != NullAgBlock && !g.ValidAgBlock(ag, b) {
			return nil, Corrupt(what, "", "block %d outside the AG", b)
		}
	}
	return a, nil
}
