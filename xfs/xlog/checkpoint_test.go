package xlog

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"slices"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestCheckpointsMergeTransactions is a model test of checkpoints:
// seeded transactions change a few chunks of plain blocks and of
// directory blocks (image items), log dquot records and now and then
// free a block (a cancel item), several queued before each force. In
// the log, each checkpoint names a block at most once and a dquot record
// at most once, several transactions share checkpoints, and replaying
// the log from its tail over what the write-backs put in place gives
// every block and record its newest content. Half the buffer items are
// diff items (DiffItem), which the leader diffs once for each run of
// them in a checkpoint; some of those change nothing.
func TestCheckpointsMergeTransactions(t *testing.T) {
	g := format.Geometry{InodeSize: 512, BlockSize: 4096, BlockLog: 12, AgBlocks: 2048, AgBlkLog: 11, AgCount: 4, DBlocks: 8192}
	const (
		nblocks = 8
		dqDaddr = 8 * nblocks // the dquot block, after the others
		records = 30
	)
	for seed := int64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewSource(seed))
		// A small log, which wraps; the blocks lie after it.
		const logBlocks = 700
		_, l, w := newTestLog(t, logBlocks)
		w.SetIdleWriteBack(0)
		d := l.R.(*memDev)
		base := int64(testLogStart + logBlocks*format.BBSize)
		daddrOf := func(i int) format.Daddr { return format.Daddr(base/format.BBSize) + format.Daddr(8*i) }
		dq := format.Daddr(base/format.BBSize) + dqDaddr

		cur := make([][]byte, nblocks) // newest content; nil while freed
		for i := range cur {
			cur[i] = make([]byte, 4096)
			rng.Read(cur[i])
			if i%2 == 1 {
				binary.BigEndian.PutUint32(cur[i], format.Dir3DataMagic)
			} else {
				binary.BigEndian.PutUint32(cur[i], 0x11223344) // no known magic: a plain item
			}
			copy(d.b[int64(daddrOf(i))*format.BBSize:], cur[i])
		}
		dqBlock := d.b[int64(dq)*format.BBSize : int64(dq)*format.BBSize+4096]
		for slot := uint32(0); slot < records; slot++ {
			copy(dqBlock[slot*format.DqblkSize:], dqRecord(slot, 0, 0))
		}
		counts := map[uint32]uint64{}
		commits := 0
		for round := 0; round < 300; round++ {
			var last Ticket
			for k := 1 + rng.Intn(6); k > 0; k-- {
				var items []Item
				touched := map[int]bool{}
				for n := 1 + rng.Intn(3); n > 0; n-- {
					i := rng.Intn(nblocks)
					if touched[i] {
						continue
					}
					touched[i] = true
					switch {
					case cur[i] == nil:
						img := make([]byte, 4096)
						rng.Read(img)
						binary.BigEndian.PutUint32(img, [2]uint32{0x11223344, format.Dir3DataMagic}[i%2])
						it, _ := BufItem(daddrOf(i), img, nil)
						if rng.Intn(2) == 0 {
							it = DiffItem(daddrOf(i), img, nil)
						}
						items, cur[i] = append(items, it), img
					case rng.Intn(12) == 0:
						items, cur[i] = append(items, CancelItem(daddrOf(i), 4096)), nil
					default:
						img := bytes.Clone(cur[i])
						for c := rng.Intn(4); c > 0; c-- {
							img[4+rng.Intn(len(img)-4)]++
						}
						if rng.Intn(2) == 0 {
							// Its old is the image before it, as the
							// cache's versions are.
							items, cur[i] = append(items, DiffItem(daddrOf(i), img, cur[i])), img
						} else if it, ok := BufItem(daddrOf(i), img, cur[i]); ok {
							items, cur[i] = append(items, it), img
						}
					}
				}
				if rng.Intn(2) == 0 {
					slot := uint32(rng.Intn(records))
					counts[slot] = uint64(rng.Intn(1 << 20))
					f := format.DqLogFormat{ID: slot, Blkno: int64(dq), Len: 1, Boffset: slot * format.DqblkSize}
					items = append(items, DquotItem(&f, dqRecord(slot, counts[slot], 0)))
				}
				if len(items) == 0 {
					continue
				}
				// The write-back puts what the transaction logged in
				// place, as the cache does once it is durable.
				tk, err := w.Queue(items, func(own, durable Ticket) error {
					for _, it := range items {
						switch it.kind {
						case plainItem, imageItem:
							d.WriteAt(it.image, int64(it.block)*format.BBSize)
						case dquotItem:
							rec := append(bytes.Clone(it.Regions[1]), make([]byte, format.DqblkSize-format.DiskDquotSize)...)
							format.SetCRC(rec, format.DqblkCRCOff)
							d.WriteAt(rec, it.key.blkno*format.BBSize+int64(it.key.boffset))
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				last = tk
				commits++
			}
			if last != 0 {
				if err := w.Force(last); err != nil {
					t.Fatal(err)
				}
			}
		}
		s := haltAndScan(t, w, l)
		if st := w.Stats(); st.Checkpoints*2 > st.Commits || int(st.Commits) != commits {
			t.Fatalf("seed %d: %d commits (queued %d) in %d checkpoints, want several a checkpoint", seed, st.Commits, commits, st.Checkpoints)
		}
		for _, tr := range s.Trans {
			blocks, recs := map[int64]bool{}, map[uint32]bool{}
			for _, it := range tr.Items {
				switch binary.LittleEndian.Uint16(it.Regions[0]) {
				case format.LogItemBuf:
					f, err := format.DecodeBufLogFormat(it.Regions[0])
					if err != nil {
						t.Fatal(err)
					}
					if blocks[f.Blkno] {
						t.Fatalf("seed %d: checkpoint %#x logs block %d twice", seed, uint64(tr.LSN), f.Blkno)
					}
					blocks[f.Blkno] = true
				case format.LogItemDquot:
					id := binary.LittleEndian.Uint32(it.Regions[0][4:])
					if recs[id] {
						t.Fatalf("seed %d: checkpoint %#x logs dquot %d twice", seed, uint64(tr.LSN), id)
					}
					recs[id] = true
				}
			}
		}
		// Replayed from the tail over what the write-backs put in
		// place, the log gives every block its newest content.
		if _, err := Replay(d, &g, s.Trans); err != nil {
			t.Fatalf("seed %d: replay: %v", seed, err)
		}
		for i, want := range cur {
			if want == nil {
				continue
			}
			at := int64(daddrOf(i)) * format.BBSize
			got := bytes.Clone(d.b[at : at+4096])
			want = bytes.Clone(want)
			// Replay stamps a directory block's LSN and CRC.
			if _, lsnOff, crcOff := format.BlockLogInfo(want); lsnOff >= 0 {
				clear(got[lsnOff : lsnOff+8])
				clear(want[lsnOff : lsnOff+8])
				clear(got[crcOff : crcOff+4])
				clear(want[crcOff : crcOff+4])
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("seed %d: block %d does not replay to its newest content", seed, i)
			}
		}
		for slot, count := range counts {
			rec := dqBlock[slot*format.DqblkSize : (slot+1)*format.DqblkSize]
			if got := binary.BigEndian.Uint64(rec[40:]); got != count {
				t.Fatalf("seed %d: dquot %d replays to count %d, last logged %d", seed, slot, got, count)
			}
		}
		if w.Head().Cycle() < 3 {
			t.Fatalf("seed %d: the log did not wrap twice", seed)
		}
		st := w.Stats()
		t.Logf("seed %d: %d commits in %d checkpoints, %d log bytes", seed, st.Commits, st.Checkpoints, st.Bytes)
	}
}

// TestDiffItemsTooLargeWhole: a transaction whose diff items would not fit
// in half the log if they logged whole blocks is diffed when queued and
// taken by what it logs; it replays to its images.
func TestDiffItemsTooLargeWhole(t *testing.T) {
	g := format.Geometry{InodeSize: 512, BlockSize: 4096, BlockLog: 12, AgBlocks: 2048, AgBlkLog: 11, AgCount: 4, DBlocks: 8192}
	const logBlocks, nblocks = 700, 60 // 350 KiB of log; 240 KiB of blocks
	d, l, w := newTestLog(t, logBlocks)
	d.b = append(d.b, make([]byte, nblocks*4096)...)
	base := int64(testLogStart + logBlocks*format.BBSize)
	var items []Item
	var images [][]byte
	for i := range nblocks {
		old := make([]byte, 4096)
		binary.BigEndian.PutUint32(old, 0x11223344)
		copy(d.b[base+int64(i)*4096:], old)
		img := bytes.Clone(old)
		img[100+i]++
		items = append(items, DiffItem(format.Daddr(base/format.BBSize)+format.Daddr(8*i), img, old))
		images = append(images, img)
	}
	if bound := transBytes(items, false); bound <= w.transBytesMax() {
		t.Fatalf("bound %d fits in half the log (%d): the test needs more blocks", bound, w.transBytesMax())
	}
	tk, err := w.Queue(items, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Force(tk); err != nil {
		t.Fatal(err)
	}
	s := haltAndScan(t, w, l)
	if _, err := Replay(d, &g, s.Trans); err != nil {
		t.Fatal(err)
	}
	for i, want := range images {
		at := base + int64(i)*4096
		if got := d.b[at : at+4096]; !bytes.Equal(got, want) {
			t.Fatalf("block %d does not replay to its image", i)
		}
	}
}

// TestUnchangedDiffItemLogsWhole: a checkpoint whose only diff item
// changed nothing still logs an item (its block whole), so no
// checkpoint is empty; and a checkpoint that merges it with a changed
// block leaves it out.
func TestUnchangedDiffItemLogsWhole(t *testing.T) {
	_, l, w := newTestLog(t, 700)
	base := format.Daddr((testLogStart + 700*format.BBSize) / format.BBSize)
	old := make([]byte, 4096)
	binary.BigEndian.PutUint32(old, 0x11223344)
	same := bytes.Clone(old)
	tk, err := w.Queue([]Item{DiffItem(base, same, old)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Force(tk); err != nil {
		t.Fatal(err)
	}
	changed := bytes.Clone(old)
	changed[300]++
	for _, it := range []Item{DiffItem(base, same, old), DiffItem(base+8, changed, old)} {
		if _, err := w.Queue([]Item{it}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.ForceAll(); err != nil {
		t.Fatal(err)
	}
	s := haltAndScan(t, w, l)
	if len(s.Trans) != 2 {
		t.Fatalf("%d checkpoints, want 2", len(s.Trans))
	}
	var got [][2]int64 // each item's block and logged length
	for _, tr := range s.Trans {
		for _, it := range tr.Items {
			f, err := format.DecodeBufLogFormat(it.Regions[0])
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, r := range it.Regions[1:] {
				n += len(r)
			}
			got = append(got, [2]int64{f.Blkno, int64(n)})
		}
	}
	want := [][2]int64{{int64(base), 4096}, {int64(base) + 8, format.BlfChunk}}
	if !slices.Equal(got, want) {
		t.Fatalf("logged (block, bytes) %v, want %v", got, want)
	}
}

// haltAndScan stops w as a crash would (the write-back pass under way
// ends, the ones not begun never run, and nothing writes the device while
// the test reads it) and scans its log.
func haltAndScan(t *testing.T, w *Writer, l *Log) *Scan {
	t.Helper()
	w.Halt()
	s, err := l.Scan()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
