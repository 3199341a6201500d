package format

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestBlockLogInfo pins, for every logged block type, the buffer type and
// the LSN and CRC offsets against the encoders of the headers themselves.
func TestBlockLogInfo(t *testing.T) {
	const lsn = LSN(0x0102030405060708)
	for _, tc := range []struct {
		name   string
		blft   uint16
		crcOff int
		fill   func(b []byte)
	}{
		{"agf", BlftAgf, AgfCRCOff, func(b []byte) { (&Agf{Magic: AgfMagic, LSN: lsn}).Encode(b) }},
		{"agi", BlftAgi, AgiCRCOff, func(b []byte) { (&Agi{Magic: AgiMagic, LSN: lsn}).Encode(b) }},
		{"agfl", BlftAgfl, AgflCRCOff, func(b []byte) { (&Agfl{Magic: AgflMagic, LSN: lsn}).Encode(b) }},
		{"sb", BlftSb, SbCRCOff, func(b []byte) { s := testSuperblock(); s.LSN = lsn; s.Encode(b) }},
		{"bnobt", BlftBtree, ShortBlockCRCOff, func(b []byte) { (&BtreeBlock{Magic: BnobtMagic, LSN: lsn}).Encode(b) }},
		{"bmbt", BlftBtree, LongBlockCRCOff, func(b []byte) { (&BtreeBlock{Magic: BmbtMagic, LSN: lsn, Long: true}).Encode(b) }},
		{"dir3 data", BlftDir3Data, Dir3DataCRCOff, dir3Header(Dir3DataMagic, lsn)},
		{"dir3 block", BlftDir3Block, Dir3DataCRCOff, dir3Header(Dir3BlockMagic, lsn)},
		{"attr rmt", BlftAttrRmt, RmtCRCOff, func(b []byte) { (&RmtHdr{Magic: AttrRmtMagic, LSN: lsn}).Encode(b) }},
		{"symlink", BlftSymlink, RmtCRCOff, func(b []byte) { (&RmtHdr{Magic: SymlinkMagic, LSN: lsn}).Encode(b) }},
		{"leafn", BlftDir3LeafN, DaBlkinfoCRCOff, daHeader(Dir3LeafNMagic, lsn)},
		{"da node", BlftDa3Node, DaBlkinfoCRCOff, daHeader(Da3NodeMagic, lsn)},
		{"attr leaf", BlftAttrLeaf, DaBlkinfoCRCOff, daHeader(Attr3LeafMagic, lsn)},
	} {
		b := make([]byte, 4096)
		tc.fill(b)
		blft, lsnOff, crcOff := BlockLogInfo(b)
		if blft != tc.blft || crcOff != tc.crcOff || lsnOff < 0 || LSN(binary.BigEndian.Uint64(b[lsnOff:])) != lsn {
			t.Errorf("%s: type %d, LSN at %d, CRC at %d", tc.name, blft, lsnOff, crcOff)
		}
	}
	in := make([]byte, 512)
	binary.BigEndian.PutUint16(in, InodeMagic)
	if blft, lsnOff, _ := BlockLogInfo(in); blft != BlftDinode || lsnOff != -1 {
		t.Errorf("inode block: type %d, LSN at %d", blft, lsnOff)
	}
}

// dir3Header writes the magic (be32 at 0) and LSN (at 16) of a
// directory data, block or free header.
func dir3Header(magic uint32, lsn LSN) func(b []byte) {
	return func(b []byte) {
		binary.BigEndian.PutUint32(b, magic)
		binary.BigEndian.PutUint64(b[16:], uint64(lsn))
	}
}

// daHeader writes the magic (be16 at 8) and LSN (at 24) of a block built
// on xfs_da3_blkinfo.
func daHeader(magic uint16, lsn LSN) func(b []byte) {
	return func(b []byte) {
		binary.BigEndian.PutUint16(b[8:], magic)
		binary.BigEndian.PutUint64(b[24:], uint64(lsn))
	}
}

func TestBufLogFormatRoundTrip(t *testing.T) {
	f := NewBufLogFormat(1234, 4096, BlftAgf, [][2]int{{0, 2}, {5, 6}, {31, 32}})
	b := make([]byte, f.EncodedLen())
	f.Encode(b)
	if len(b) != BlfHeaderSize+4 {
		t.Fatalf("format of %d bytes for one map word", len(b))
	}
	g, err := DecodeBufLogFormat(b)
	if err != nil {
		t.Fatal(err)
	}
	if g.Blkno != 1234 || g.Len != 8 || g.Size != 4 || g.Blft() != BlftAgf {
		t.Fatalf("decoded %+v", g)
	}
	runs := g.Runs()
	if len(runs) != 3 || runs[0] != [2]int{0, 2} || runs[1] != [2]int{5, 6} || runs[2] != [2]int{31, 32} {
		t.Fatalf("runs %v", runs)
	}
	th := LogTransHeader{Magic: LogTransMagic, Type: LogTransCheckpoint, Tid: 9, NumItems: 3}
	var hb [LogTransHeaderSize]byte
	th.Encode(hb[:])
	if got, err := DecodeLogTransHeader(hb[:]); err != nil || got != th {
		t.Fatalf("trans header %+v, %v", got, err)
	}
}

// FuzzLogItems feeds arbitrary bytes to the log item decoders.
func FuzzLogItems(f *testing.F) {
	fm := NewBufLogFormat(16, 4096, BlftBtree, [][2]int{{0, 32}})
	b := make([]byte, fm.EncodedLen())
	fm.Encode(b)
	f.Add(b)
	var hb [LogTransHeaderSize]byte
	(&LogTransHeader{Magic: LogTransMagic, Type: LogTransCheckpoint, Tid: 1, NumItems: 1}).Encode(hb[:])
	f.Add(hb[:])
	var dq [DqLogFormatSize]byte
	(&DqLogFormat{ID: 7, Blkno: 96, Len: 1, Boffset: 7 * DqblkSize}).Encode(dq[:])
	f.Add(dq[:])
	f.Fuzz(func(t *testing.T, b []byte) {
		if fm, err := DecodeBufLogFormat(b); err == nil {
			for _, r := range fm.Runs() {
				if r[0] >= r[1] || r[1] > 32*int(fm.MapSize) {
					t.Fatalf("run %v with a map of %d words", r, fm.MapSize)
				}
			}
		}
		_, _ = DecodeLogTransHeader(b)
		_ = DecodeUnmountFormat(b)
		_, _, _ = BlockLogInfo(b)
		if f, err := DecodeInodeLogFormat(b); err == nil && (f.Size < 2 || int(f.BOffset)+InodeCoreSize > int(f.Len)*BBSize) {
			t.Fatalf("accepted inode item %+v", f)
		}
		_, _ = DecodeICreateLog(b)
		if f, err := DecodeDqLogFormat(b); err == nil {
			var out [DqLogFormatSize]byte
			f.Encode(out[:])
			if g, err := DecodeDqLogFormat(out[:]); err != nil || *g != *f || !bytes.Equal(out[4:], b[4:DqLogFormatSize]) {
				t.Fatalf("dquot format %+v does not round-trip: %+v, %v", f, g, err)
			}
		}
		_, _ = DecodeIntentID(b)
		dst := make([]byte, 512)
		_ = LogDinodeToDisk(b, dst, 1)
		_ = BmbtToBmdr(b, dst[InodeCoreSize:])
	})
}
