package format

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// fieldAt pins one field: encoding a structure with the field set to a
// marker must put the marker's big-endian bytes at off.
type fieldAt struct {
	name string
	off  int
	size int
	set  func(v uint64)
}

func checkLayout(t *testing.T, what string, size int, encode func([]byte), fields []fieldAt) {
	t.Helper()
	for i, f := range fields {
		marker := uint64(0x0102030405060708) + uint64(i)<<8
		marker &= 1<<(8*f.size) - 1
		if f.size == 8 {
			marker = 0x0102030405060708 + uint64(i)<<8
		}
		f.set(marker)
		b := make([]byte, size)
		encode(b)
		got := make([]byte, f.size)
		copy(got, b[f.off:f.off+f.size])
		want := make([]byte, 8)
		binary.BigEndian.PutUint64(want, marker)
		if !bytes.Equal(got, want[8-f.size:]) {
			t.Errorf("%s.%s at %d: got % x, want % x", what, f.name, f.off, got, want[8-f.size:])
		}
		f.set(0)
	}
}

func TestSuperblockLayout(t *testing.T) {
	var s Superblock
	checkLayout(t, "sb", SbSize, s.Encode, []fieldAt{
		{"magicnum", 0, 4, func(v uint64) { s.MagicNum = uint32(v) }},
		{"blocksize", 4, 4, func(v uint64) { s.BlockSize = uint32(v) }},
		{"dblocks", 8, 8, func(v uint64) { s.DBlocks = v }},
		{"logstart", 48, 8, func(v uint64) { s.LogStart = FsBlock(v) }},
		{"rootino", 56, 8, func(v uint64) { s.RootIno = Ino(v) }},
		{"agblocks", 84, 4, func(v uint64) { s.AgBlocks = uint32(v) }},
		{"agcount", 88, 4, func(v uint64) { s.AgCount = uint32(v) }},
		{"logblocks", 96, 4, func(v uint64) { s.LogBlocks = uint32(v) }},
		{"versionnum", 100, 2, func(v uint64) { s.VersionNum = uint16(v) }},
		{"inodesize", 104, 2, func(v uint64) { s.InodeSize = uint16(v) }},
		{"icount", 128, 8, func(v uint64) { s.ICount = v }},
		{"fdblocks", 144, 8, func(v uint64) { s.FDBlocks = v }},
		{"qflags", 176, 2, func(v uint64) { s.QFlags = uint16(v) }},
		{"inoalignmt", 180, 4, func(v uint64) { s.InoAlignMt = uint32(v) }},
		{"logsunit", 196, 4, func(v uint64) { s.LogSUnit = uint32(v) }},
		{"features2", 200, 4, func(v uint64) { s.Features2 = uint32(v) }},
		{"ro_compat", 212, 4, func(v uint64) { s.FeaturesRo = uint32(v) }},
		{"incompat", 216, 4, func(v uint64) { s.FeaturesIncompat = uint32(v) }},
		{"spino_align", 228, 4, func(v uint64) { s.SpinoAlign = uint32(v) }},
		{"pquotino", 232, 8, func(v uint64) { s.PQuotIno = Ino(v) }},
		{"lsn", 240, 8, func(v uint64) { s.LSN = LSN(v) }},
	})
}

func TestAgHeaderLayout(t *testing.T) {
	var f Agf
	checkLayout(t, "agf", 224, f.Encode, []fieldAt{
		{"seqno", 8, 4, func(v uint64) { f.SeqNo = AgNumber(v) }},
		{"cnt_root", 20, 4, func(v uint64) { f.Roots[BtCnt] = AgBlock(v) }},
		{"cnt_level", 32, 4, func(v uint64) { f.Levels[BtCnt] = uint32(v) }},
		{"flcount", 48, 4, func(v uint64) { f.FlCount = uint32(v) }},
		{"btreeblks", 60, 4, func(v uint64) { f.BtreeBlks = uint32(v) }},
		{"refcount_blocks", 84, 4, func(v uint64) { f.RefcountBlocks = uint32(v) }},
		{"lsn", 208, 8, func(v uint64) { f.LSN = LSN(v) }},
	})
	var i Agi
	checkLayout(t, "agi", 344, i.Encode, []fieldAt{
		{"count", 16, 4, func(v uint64) { i.Count = uint32(v) }},
		{"newino", 32, 4, func(v uint64) { i.NewIno = AgIno(v) }},
		{"unlinked[63]", 40 + 63*4, 4, func(v uint64) { i.Unlinked[63] = AgIno(v) }},
		{"lsn", 320, 8, func(v uint64) { i.LSN = LSN(v) }},
		{"free_root", 328, 4, func(v uint64) { i.FreeRoot = AgBlock(v) }},
		{"iblocks", 336, 4, func(v uint64) { i.IBlocks = uint32(v) }},
		{"fblocks", 340, 4, func(v uint64) { i.FBlocks = uint32(v) }},
	})
}

func TestRefcountRecLayout(t *testing.T) {
	var r RefcountRec
	checkLayout(t, "refcount rec", RefcountShape.RecLen, func(b []byte) { r.Encode(b) }, []fieldAt{
		{"rc_startblock", 0, 4, func(v uint64) { r.StartBlock = uint32(v) }},
		{"rc_blockcount", 4, 4, func(v uint64) { r.BlockCount = uint32(v) }},
		{"rc_refcount", 8, 4, func(v uint64) { r.Refcount = uint32(v) }},
	})
}

func TestDinodeLayout(t *testing.T) {
	var d Dinode
	checkLayout(t, "dinode", InodeCoreSize, d.Encode, []fieldAt{
		{"mode", 2, 2, func(v uint64) { d.Mode = uint16(v) }},
		{"nlink", 16, 4, func(v uint64) { d.Nlink = uint32(v) }},
		{"projid_hi", 22, 2, func(v uint64) { d.ProjIDHi = uint16(v) }},
		{"size", 56, 8, func(v uint64) { d.Size = int64(v) }},
		{"nblocks", 64, 8, func(v uint64) { d.NBlocks = v }},
		{"nextents", 76, 4, func(v uint64) { d.Nextents32 = uint32(v) }},
		{"anextents", 80, 2, func(v uint64) { d.Anextents16 = uint16(v) }},
		{"flags", 90, 2, func(v uint64) { d.Flags = uint16(v) }},
		{"next_unlinked", 96, 4, func(v uint64) { d.NextUnlinked = AgIno(v) }},
		{"changecount", 104, 8, func(v uint64) { d.ChangeCount = v }},
		{"flags2", 120, 8, func(v uint64) { d.Flags2 = v }},
		{"ino", 152, 8, func(v uint64) { d.Ino = Ino(v) }},
	})
}

func TestRoundTrips(t *testing.T) {
	b := make([]byte, 512)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	sb, _ := DecodeSuperblock(b)
	out := make([]byte, 512)
	copy(out, b)
	clear(out[:SbSize])
	sb.Encode(out)
	if !bytes.Equal(out[:SbSize], b[:SbSize]) {
		t.Error("superblock decode/encode changed bytes")
	}
	agf, _ := DecodeAgf(b)
	clear(out)
	agf.Encode(out)
	if !bytes.Equal(out[:224], b[:224]) {
		t.Error("AGF decode/encode changed bytes")
	}
	agi, _ := DecodeAgi(b)
	clear(out)
	agi.Encode(out)
	if !bytes.Equal(out[:344], b[:344]) {
		t.Error("AGI decode/encode changed bytes")
	}
	for _, bt := range []bool{false, true} {
		in := append([]byte(nil), b...)
		in[127] &^= Diflag2Bigtime
		if bt {
			in[127] |= Diflag2Bigtime
		}
		d, _ := DecodeDinode(in)
		clear(out)
		d.Encode(out)
		d2, _ := DecodeDinode(out)
		if *d2 != *d {
			t.Errorf("dinode (bigtime %v) round trip differs", bt)
		}
	}
	rc := DecodeRefcountRec(b)
	clear(out)
	rc.Encode(out)
	if !bytes.Equal(out[:RefcountShape.RecLen], b[:RefcountShape.RecLen]) {
		t.Error("refcount record decode/encode changed bytes")
	}
	e := Extent{StartOff: 1<<54 - 1, StartBlock: 1<<52 - 1, BlockCount: MaxExtentLen, Unwritten: true}
	e.Encode(out)
	if got := DecodeExtent(out); got != e {
		t.Errorf("extent round trip: %+v != %+v", got, e)
	}
}

func TestDaHashName(t *testing.T) {
	// Values checked against xfs_db's "hash" command.
	for name, want := range map[string]uint32{".": 0x2e, "..": 0x172e, "huge": 0x0d1d73e5, "obj000000000001": 0x20cad415} {
		if got := DaHashName([]byte(name)); got != want {
			t.Errorf("hash(%q) = %#x, want %#x", name, got, want)
		}
	}
}

func TestTimestamps(t *testing.T) {
	b := make([]byte, 8)
	for _, ts := range []Timestamp{{0, 0}, {-1, 999999999}, {1<<31 - 1, 5}, {1 << 33, 7}} {
		ts.Encode(b, true)
		if got := DecodeTimestamp(b, true); got != ts {
			t.Errorf("bigtime %+v -> %+v", ts, got)
		}
	}
	// The Unix epoch in bigtime encoding is 2^31 seconds in nanoseconds.
	Timestamp{}.Encode(b, true)
	if v := binary.BigEndian.Uint64(b); v != 0x1DCD650000000000 {
		t.Errorf("epoch encodes as %#x", v)
	}
}
