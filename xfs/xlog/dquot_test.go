package xlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// dqRecord returns a finished 136-byte project dquot for id with the
// given block count and LSN.
func dqRecord(id uint32, bcount uint64, lsn format.LSN) []byte {
	b := make([]byte, format.DqblkSize)
	be := binary.BigEndian
	be.PutUint16(b, format.DquotMagic)
	b[2], b[3] = 1, 2
	be.PutUint32(b[4:], id)
	be.PutUint64(b[40:], bcount)
	be.PutUint64(b[format.DqblkLSNOff:], uint64(lsn))
	format.SetCRC(b, format.DqblkCRCOff)
	return b
}

// TestReplayDquotItems: seeded runs of dquot items over the records of a
// block replay to the last logged core of each record, with a fresh CRC
// and the record's own LSN; a record whose LSN is newer than an item
// (and whose CRC is good) keeps its content, as in the kernel.
func TestReplayDquotItems(t *testing.T) {
	g := format.Geometry{InodeSize: 512, BlockSize: 4096, BlockLog: 12, AgBlocks: 16, AgBlkLog: 4, AgCount: 8, DBlocks: 128}
	const daddr = 16
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		d := &memDev{b: make([]byte, 64<<10)}
		blk := d.b[daddr*format.BBSize : daddr*format.BBSize+g.BlockSize]
		newer := map[uint32]bool{}
		for slot := uint32(0); slot < 30; slot++ {
			lsn := format.LSN(0)
			if rng.Intn(5) == 0 {
				lsn, newer[slot] = format.MakeLSN(9, 0), true
			}
			copy(blk[slot*format.DqblkSize:], dqRecord(slot, 1000+uint64(slot), lsn))
		}
		before := append([]byte(nil), blk...)
		last := map[uint32]uint64{}
		var trans []*Trans
		for i := 0; i < 1+rng.Intn(40); i++ {
			slot := uint32(rng.Intn(30))
			count := uint64(rng.Intn(1 << 20))
			f := format.DqLogFormat{ID: slot, Blkno: daddr, Len: 1, Boffset: slot * format.DqblkSize}
			trans = append(trans, &Trans{Tid: uint32(i + 1), LSN: format.MakeLSN(1, uint32(2+i)),
				Items: []Item{DquotItem(&f, dqRecord(slot, count, 0))}})
			last[slot] = count
		}
		if _, err := Replay(d, &g, trans); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for slot := uint32(0); slot < 30; slot++ {
			rec := blk[slot*format.DqblkSize : (slot+1)*format.DqblkSize]
			old := before[slot*format.DqblkSize : (slot+1)*format.DqblkSize]
			count, logged := last[slot]
			switch {
			case !logged || newer[slot]:
				if !bytes.Equal(rec, old) {
					t.Errorf("seed %d: record %d changed (logged %v, newer LSN %v)", seed, slot, logged, newer[slot])
				}
			default:
				if got := binary.BigEndian.Uint64(rec[40:]); got != count {
					t.Errorf("seed %d: record %d has count %d, last logged %d", seed, slot, got, count)
				}
				if !crcOK(rec, format.DqblkCRCOff) {
					t.Errorf("seed %d: record %d has a bad CRC", seed, slot)
				}
				if !bytes.Equal(rec[format.DqblkLSNOff:format.DqblkLSNOff+8], old[format.DqblkLSNOff:format.DqblkLSNOff+8]) {
					t.Errorf("seed %d: record %d's LSN changed", seed, slot)
				}
			}
		}
	}
}

// TestReplayRefusesBadDquotItems: a dquot item whose record is not a
// dquot of its id, or lies outside its block, fails recovery before
// anything is written.
func TestReplayRefusesBadDquotItems(t *testing.T) {
	g := format.Geometry{InodeSize: 512, BlockSize: 4096, BlockLog: 12, AgBlocks: 16, AgBlkLog: 4, AgCount: 8, DBlocks: 128}
	good := format.DqLogFormat{ID: 3, Blkno: 16, Len: 1, Boffset: 3 * format.DqblkSize}
	item := func(f format.DqLogFormat, rec []byte) Item { return DquotItem(&f, rec) }
	badMagic := dqRecord(3, 1, 0)
	badMagic[0] = 0
	outside := good
	outside.Boffset = 4096 - 100
	twoBlocks := good
	twoBlocks.Len = 2
	short := item(good, dqRecord(3, 1, 0))
	short.Regions[1] = short.Regions[1][:50]
	extra := item(good, dqRecord(3, 1, 0))
	extra.Regions = append(extra.Regions, []byte{1})
	for i, it := range []Item{
		item(good, dqRecord(4, 1, 0)), // another id
		item(good, badMagic),
		item(outside, dqRecord(3, 1, 0)),
		item(twoBlocks, dqRecord(3, 1, 0)),
		short,
		extra,
	} {
		d := &memDev{b: make([]byte, 64<<10)}
		buf, _ := BufItem(40, bytes.Repeat([]byte{9}, 512), nil)
		_, err := Replay(d, &g, []*Trans{{Tid: 1, LSN: format.MakeLSN(1, 2), Items: []Item{buf, it}}})
		var ce *format.CorruptError
		if !errors.As(err, &ce) {
			t.Errorf("case %d: %v, want a corruption error", i, err)
		}
		if d.b[40*format.BBSize] != 0 {
			t.Errorf("case %d: a block was written before the bad item was refused", i)
		}
	}
}
