package format

import (
	"encoding/binary"
	"testing"
)

// The fuzz targets feed arbitrary bytes to every decoder and verifier. They
// assert only that nothing panics and that accepted input is internally
// consistent; corrupt input must come back as an error.

func testGeometry() Geometry {
	sb := testSuperblock()
	return NewGeometry(sb)
}

func testSuperblock() *Superblock {
	return &Superblock{
		MagicNum: SbMagic, BlockSize: 4096, DBlocks: 262144, AgBlocks: 65536, AgCount: 4,
		VersionNum: 0xB4A5, SectSize: 512, InodeSize: 512, InoPBlock: 8, BlockLog: 12, SectLog: 9,
		InodeLog: 9, InoPBLog: 3, AgBlkLog: 16, IMaxPct: 25, LogStart: 131078, LogBlocks: 16384,
		RootIno: 128, Features2: 0x18A, BadFeatures2: 0x18A, FeaturesRo: RoCompatFinobt | RoCompatInobtCnt,
		FeaturesIncompat: IncompatFType | IncompatSpinodes | IncompatBigtime, InoAlignMt: 8, SpinoAlign: 4,
		UUID: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
	}
}

// resealed returns a copy of b with a valid CRC at crcOff, so that mutated
// input reaches the structural checks behind the checksum.
func resealed(b []byte, crcOff int) []byte {
	c := append([]byte(nil), b...)
	if len(c) >= crcOff+4 {
		SetCRC(c, crcOff)
	}
	return c
}

func sealed(size, crcOff int, fill func([]byte)) []byte {
	b := make([]byte, size)
	fill(b)
	SetCRC(b, crcOff)
	return b
}

func FuzzSuperblock(f *testing.F) {
	f.Add(sealed(512, SbCRCOff, func(b []byte) { testSuperblock().Encode(b) }))
	f.Fuzz(func(t *testing.T, b []byte) {
		b = resealed(b, SbCRCOff)
		sb, err := DecodeSuperblock(b)
		if err != nil {
			return
		}
		if sb.Verify(b) == nil {
			g := NewGeometry(sb)
			g.InoLocation(sb.RootIno)
			g.AgSize(AgNumber(g.AgCount - 1))
		}
	})
}

func FuzzAgHeaders(f *testing.F) {
	g := testGeometry()
	f.Add(sealed(512, AgfCRCOff, func(b []byte) {
		(&Agf{Magic: AgfMagic, Version: 1, Length: 65536, Roots: [3]AgBlock{1, 2, 0}, Levels: [3]uint32{1, 1, 0},
			FlFirst: 1, FlLast: 4, FlCount: 4, FreeBlks: 100, Longest: 50, UUID: g.UUID}).Encode(b)
	}))
	f.Add(sealed(512, AgiCRCOff, func(b []byte) {
		a := &Agi{Magic: AgiMagic, Version: 1, Length: 65536, Root: 3, Level: 1, FreeRoot: 4, FreeLevel: 1, UUID: g.UUID}
		for i := range a.Unlinked {
			a.Unlinked[i] = NullAgIno
		}
		a.Encode(b)
	}))
	f.Fuzz(func(t *testing.T, b []byte) {
		VerifyAgf(&g, 0, resealed(b, AgfCRCOff))
		VerifyAgi(&g, 0, resealed(b, AgiCRCOff))
		if a, err := VerifyAgfl(&g, 0, resealed(b, AgflCRCOff)); err == nil {
			_ = a.Bno
		}
	})
}

func FuzzBtreeBlock(f *testing.F) {
	g := testGeometry()
	f.Add(sealed(4096, ShortBlockCRCOff, func(b []byte) {
		(&BtreeBlock{Magic: BnobtMagic, NumRecs: 1, LeftSib: uint64(NullAgBlock), RightSib: uint64(NullAgBlock), Blkno: 8, UUID: g.UUID}).Encode(b)
		AllocRec{10, 6}.Encode(b[ShortBlockHdrSize:])
	}), false)
	f.Add(sealed(4096, LongBlockCRCOff, func(b []byte) {
		(&BtreeBlock{Long: true, Magic: BmbtMagic, NumRecs: 1, LeftSib: uint64(NullFsBlock), RightSib: uint64(NullFsBlock), Blkno: 8, UUID: g.UUID, Owner: 0}).Encode(b)
	}), true)
	shapes := []*BtreeShape{&BnobtShape, &CntbtShape, &InobtShape, &FinobtShape, &RefcountShape, &BmbtShape}
	f.Fuzz(func(t *testing.T, b []byte, long bool) {
		crcOff := ShortBlockCRCOff
		if long {
			crcOff = LongBlockCRCOff
		}
		b = resealed(b, crcOff)
		for _, s := range shapes {
			h, err := VerifyBtreeBlock(&g, s, b, 8, 0)
			if err != nil {
				continue
			}
			for i := 0; i < int(h.NumRecs); i++ {
				if h.Level == 0 {
					s.Rec(b, i)
				} else {
					s.Key(b, i)
					s.Ptr(b, i)
				}
			}
		}
	})
}

func FuzzInode(f *testing.F) {
	g := testGeometry()
	f.Add(sealed(512, InodeCRCOff, func(b []byte) {
		d := &Dinode{Magic: InodeMagic, Mode: SIFDIR | 0o755, Version: 3, Format: FmtLocal, Nlink: 2, Size: 6,
			Ino: 128, UUID: g.UUID, Flags2: Diflag2Bigtime, NextUnlinked: NullAgIno}
		d.Encode(b)
		binary.BigEndian.PutUint32(b[InodeCoreSize+2:], 128)
	}))
	f.Fuzz(func(t *testing.T, b []byte) {
		b = resealed(b, InodeCRCOff)
		d, err := VerifyInode(&g, 128, b)
		if err != nil || d.Mode == 0 {
			return
		}
		data, attr := d.Forks(b[:g.InodeSize])
		// Local forks belong to packages dir and attr, which fuzz them.
		switch d.Format {
		case FmtBtree:
			DecodeBmdrRoot(data)
		case FmtExtents:
			for i := 0; i < int(d.DataExtents()); i++ {
				DecodeExtent(data[i*16:])
			}
		}
		if attr != nil && d.AFormat == FmtBtree {
			DecodeBmdrRoot(attr)
		}
	})
}

func FuzzRemoteBlock(f *testing.F) {
	g := testGeometry()
	f.Add(sealed(4096, RmtCRCOff, func(b []byte) {
		(&RmtHdr{Magic: SymlinkMagic, Bytes: 5, UUID: g.UUID}).Encode(b)
		copy(b[RmtHdrSize:], "hello")
	}))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range []uint32{SymlinkMagic, AttrRmtMagic} {
			VerifyRmtBlock(&g, "remote", m, resealed(b, RmtCRCOff), 0, 0, 0)
		}
	})
}
