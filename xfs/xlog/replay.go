package xlog

import (
	"encoding/binary"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

// ReplayStats counts what Replay did with the buffer items it found.
type ReplayStats struct {
	Replayed, Skipped, Cancelled int
}

// cancelKey names a buffer the way cancel records do: address and length.
type cancelKey struct {
	blkno int64
	bbs   uint16
}

// Replay writes the committed transactions' buffer items in place, in log
// order (the caller flushes). As the kernel does on v5 volumes, a block
// whose own LSN is not older than the transaction is left alone (it was
// written back after that change), a block cancelled later in the log is
// not replayed before its cancel (it may hold file data now), and replayed
// blocks get the transaction's LSN and a fresh CRC. Items this recovery
// does not know (inode items, intents: the kernel writes them) fail with
// ErrUnsupportedItem before anything is written.
func Replay(d Device, trans []*Trans) (ReplayStats, error) {
	var st ReplayStats
	cancels := make(map[cancelKey]int)
	type bufItem struct {
		t *Trans
		f *format.BufLogFormat
		r [][]byte
	}
	var items []bufItem
	for _, t := range trans {
		for _, it := range t.Items {
			where := fmt.Sprintf("tid %#x (LSN %d/%d)", t.Tid, t.LSN.Cycle(), t.LSN.Block())
			if len(it.Regions) == 0 || len(it.Regions[0]) < 2 {
				return st, format.Corrupt("log item", where, "empty item")
			}
			typ := binary.LittleEndian.Uint16(it.Regions[0])
			if typ != format.LogItemBuf {
				return st, fmt.Errorf("%s: item type %#x: %w", where, typ, ErrUnsupportedItem)
			}
			f, err := format.DecodeBufLogFormat(it.Regions[0])
			if err != nil {
				return st, format.Located(err, where)
			}
			if f.Flags&(format.BlfInodeBuf|format.BlfUDquot|format.BlfPDquot|format.BlfGDquot) != 0 {
				return st, fmt.Errorf("%s: buffer item flags %#x: %w", where, f.Flags, ErrUnsupportedItem)
			}
			if f.Flags&format.BlfCancel != 0 {
				cancels[cancelKey{f.Blkno, f.Len}]++
			} else if runs := f.Runs(); len(runs) != len(it.Regions)-1 {
				return st, format.Corrupt("buffer log item", where, "%d dirty runs but %d regions", len(runs), len(it.Regions)-1)
			} else {
				for i, r := range runs {
					if r[1]*format.BlfChunk > int(f.Len)*format.BBSize+format.BlfChunk || len(it.Regions[i+1]) > (r[1]-r[0])*format.BlfChunk {
						return st, format.Corrupt("buffer log item", where, "region %d does not fit a %d-BB buffer", i, f.Len)
					}
				}
			}
			items = append(items, bufItem{t, f, it.Regions[1:]})
		}
	}
	// Replayed blocks stay in memory until the end, like the kernel's
	// delayed writes: the LSN test looks at what the block showed before
	// recovery, since transactions that share a record share an LSN.
	type replayed struct {
		data []byte
		lsn  format.LSN
	}
	blocks := make(map[cancelKey]*replayed)
	var order []cancelKey
	for _, it := range items {
		key := cancelKey{it.f.Blkno, it.f.Len}
		if it.f.Flags&format.BlfCancel != 0 {
			if cancels[key]--; cancels[key] == 0 {
				delete(cancels, key)
			}
			continue
		}
		if cancels[key] > 0 {
			st.Cancelled++
			continue
		}
		b := blocks[key]
		if b == nil {
			blk := make([]byte, int(it.f.Len)*format.BBSize)
			if _, err := d.ReadAt(blk, format.DaddrToByte(format.Daddr(it.f.Blkno))); err != nil {
				return st, fmt.Errorf("replay: read daddr %d: %w", it.f.Blkno, err)
			}
			b = &replayed{data: blk}
			if blft, lsnOff, _ := format.BlockLogInfo(blk); lsnOff >= 0 && blft == it.f.Blft() && lsnOff+8 <= len(blk) {
				if lsn := binary.BigEndian.Uint64(blk[lsnOff:]); lsn != ^uint64(0) {
					b.lsn = format.LSN(lsn)
				}
			}
		}
		if b.lsn != 0 && b.lsn >= it.t.LSN {
			st.Skipped++
			continue
		}
		if blocks[key] == nil {
			blocks[key] = b
			order = append(order, key)
		}
		for i, r := range it.f.Runs() {
			copy(b.data[r[0]*format.BlfChunk:], it.r[i])
		}
		if _, lsnOff, crcOff := format.BlockLogInfo(b.data); lsnOff >= 0 && lsnOff+8 <= len(b.data) && crcOff+4 <= len(b.data) {
			binary.BigEndian.PutUint64(b.data[lsnOff:], uint64(it.t.LSN))
			format.SetCRC(b.data, crcOff)
		}
		st.Replayed++
	}
	for _, key := range order {
		if _, err := d.WriteAt(blocks[key].data, format.DaddrToByte(format.Daddr(key.blkno))); err != nil {
			return st, fmt.Errorf("replay: write daddr %d: %w", key.blkno, err)
		}
	}
	return st, nil
}

// clearWindow bounds how far past the head Recover restamps blocks: more
// than any single batch the writer issues in practice.
const clearWindow = 16 << 20 / format.BBSize

// Recover replays a dirty log and leaves it clean: it scans, replays,
// flushes, restamps the blocks just past the head with the cycle they
// must show (so that records of a torn batch beyond the head are never
// found again), and writes an unmount record at the head.
func (l *Log) Recover(d Device, uuid [16]byte) (*Scan, ReplayStats, error) {
	s, err := l.Scan()
	if err != nil {
		return nil, ReplayStats{}, err
	}
	st, err := Replay(d, s.Trans)
	if err != nil {
		return s, st, err
	}
	if err := d.Sync(); err != nil {
		return s, st, err
	}
	if err := l.clearAhead(d, s.Head); err != nil {
		return s, st, err
	}
	w := NewWriter(d, l, uuid, s.Head.Cycle(), s.Head.Block(), int32(s.LastBlock))
	if err := w.Unmount(); err != nil {
		return s, st, err
	}
	return s, st, nil
}

// clearAhead stamps the window after head: blocks still in head's pass get
// the previous cycle, blocks past the log's end (the next pass) get
// head's cycle.
func (l *Log) clearAhead(d Device, head format.LSN) error {
	n := min(uint32(clearWindow), l.Blocks-1)
	bb, cycle := head.Block(), head.Cycle()-1
	for n > 0 {
		run := min(n, l.Blocks-bb)
		buf := make([]byte, int(run)*format.BBSize)
		for i := 0; i < int(run); i++ {
			binary.BigEndian.PutUint32(buf[i*format.BBSize:], cycle)
		}
		if _, err := d.WriteAt(buf, l.Start+int64(bb)*format.BBSize); err != nil {
			return fmt.Errorf("clear log blocks %d..%d: %w", bb, bb+run, err)
		}
		n -= run
		bb, cycle = 0, cycle+1
		if bb == head.Block() {
			break
		}
	}
	return d.Sync()
}
