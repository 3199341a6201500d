package xlog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

// Recovery, in the kernel's order:
//
//	find the head (cycle drop) ─> newest complete record before it ─> its tail
//	walk tail → head record by record (cycle, LSN, CRC checked; a torn
//	record ends the walk) ─> transactions by tid, complete at COMMIT
//	pass 1: collect buffer cancels   pass 2: replay buffers in log order,
//	skipping cancelled ones and those whose on-disk LSN is not older
//	─> flush ─> stamp the blocks after the head with the previous cycle
//	─> unmount record

// ErrUnsupportedItem says the log holds an item recovery cannot replay.
var ErrUnsupportedItem = errors.New("log item not supported by this recovery")

// Trans is a committed transaction found in the log.
type Trans struct {
	Tid    uint32
	LSN    format.LSN // record holding its start
	Header format.LogTransHeader
	Items  []Item

	header []byte // raw header (it may arrive in pieces)
	total  int    // regions the last item announced
}

// Scan is what a walk over the active log found.
type Scan struct {
	Tail      format.LSN // where the walk started
	Head      format.LSN // first block after the last complete record
	LastBlock uint32     // header block of the last complete record
	Records   int
	Trans     []*Trans // committed, in commit order
	Clean     bool     // the last record is an unmount record
}

// corrupt builds a located log corruption error.
func corrupt(bb uint32, format_ string, args ...any) error {
	return format.Corrupt("log record", fmt.Sprintf("log block %d", bb), format_, args...)
}

// readRecord reads and checks the record whose header is at bb, expecting
// cycle; it returns the header and the unstamped payload.
func (l *Log) readRecord(bb, cycle uint32) (*format.LogRecHeader, []byte, error) {
	sect := make([]byte, format.BBSize)
	if err := l.readBB(bb, sect); err != nil {
		return nil, nil, err
	}
	h, err := format.DecodeLogRecHeader(sect)
	if err != nil {
		return nil, nil, err
	}
	if h.Magic != format.LogHeaderMagic {
		return nil, nil, corrupt(bb, "no record header (magic %#x)", h.Magic)
	}
	if h.Cycle != cycle || h.LSN != format.MakeLSN(cycle, bb) {
		return nil, nil, corrupt(bb, "record of cycle %d, LSN %#x where cycle %d was expected", h.Cycle, uint64(h.LSN), cycle)
	}
	if h.Version != format.LogVersion2 || h.Size == 0 || h.Size > 256*1024 {
		return nil, nil, corrupt(bb, "version %d, h_size %d", h.Version, h.Size)
	}
	hdrs := format.LogRecHeaderSectors(h.Size)
	if h.Len == 0 || h.Len%format.BBSize != 0 || h.Len > uint32(hdrs)*format.LogHeaderCycleSize {
		return nil, nil, corrupt(bb, "payload length %d", h.Len)
	}
	n := uint32(hdrs) + h.Len/format.BBSize
	if n >= l.Blocks {
		return nil, nil, corrupt(bb, "record of %d blocks in a log of %d", n, l.Blocks)
	}
	// A record may run past the end of the log (the kernel's do): its
	// sectors there carry the next cycle.
	rec := make([]byte, int(n)*format.BBSize)
	first := min(n, l.Blocks-bb)
	if _, err := l.R.ReadAt(rec[:first*format.BBSize], l.Start+int64(bb)*format.BBSize); err != nil {
		return nil, nil, err
	}
	if first < n {
		if _, err := l.R.ReadAt(rec[first*format.BBSize:], l.Start); err != nil {
			return nil, nil, err
		}
	}
	wantCycle := func(i uint32) uint32 {
		if bb+i < l.Blocks {
			return cycle
		}
		if cycle+1 == format.LogHeaderMagic {
			return cycle + 2
		}
		return cycle + 1
	}
	payload := rec[hdrs*format.BBSize:]
	be := binary.BigEndian
	for i := 0; i < len(payload)/format.BBSize; i++ {
		if c := be.Uint32(payload[i*format.BBSize:]); c != wantCycle(uint32(hdrs+i)) {
			return nil, nil, corrupt(bb, "payload block %d carries cycle %d, not %d (torn write)", i, c, wantCycle(uint32(hdrs+i)))
		}
	}
	for k := 1; k < hdrs; k++ {
		if be.Uint32(rec[k*format.BBSize:]) != wantCycle(uint32(k)) {
			return nil, nil, corrupt(bb, "extended header %d carries the wrong cycle (torn write)", k)
		}
	}
	if crc := format.LogRecordCRC(rec, hdrs, payload); crc != h.CRC && h.CRC != 0 {
		return nil, nil, corrupt(bb, "CRC %#x, computed %#x", h.CRC, crc)
	}
	out := append([]byte(nil), payload...)
	for i := 0; i < len(out)/format.BBSize; i++ {
		w := h.CycleData[i%format.LogCycleDataWords]
		if i >= format.LogCycleDataWords {
			w = be.Uint32(rec[(i/format.LogCycleDataWords)*format.BBSize+4+4*(i%format.LogCycleDataWords):])
		}
		be.PutUint32(out[i*format.BBSize:], w)
	}
	return h, out, nil
}

// newestRecord finds the newest complete, intact record at or before the
// head estimate, scanning back at most scanMax blocks.
func (l *Log) newestRecord(head, headCycle uint32) (*format.LogRecHeader, uint32, error) {
	const scanMax = 1 << 16
	buf := make([]byte, format.BBSize)
	bb, cycle := head, headCycle
	for i := 0; i < scanMax && i < int(l.Blocks); i++ {
		if bb == 0 {
			bb, cycle = l.Blocks, cycle-1
		}
		bb--
		if err := l.readBB(bb, buf); err != nil {
			return nil, 0, err
		}
		if binary.BigEndian.Uint32(buf) != format.LogHeaderMagic {
			continue
		}
		if binary.BigEndian.Uint32(buf[4:]) != cycle {
			continue // a stale record of an earlier pass
		}
		h, _, err := l.readRecord(bb, cycle)
		if err != nil {
			var ce *format.CorruptError
			if errors.As(err, &ce) {
				continue // torn or stale: keep looking further back
			}
			return nil, 0, err
		}
		return h, bb, nil
	}
	return nil, 0, corrupt(head, "no intact record within %d blocks before the head", scanMax)
}

// Scan finds the active part of the log and collects its committed
// transactions. A record that fails its checks ends the walk: it and
// everything after it were never acknowledged.
func (l *Log) Scan() (*Scan, error) {
	head, cycle, err := l.FindHead()
	if err != nil {
		return nil, err
	}
	last, lastBB, err := l.newestRecord(head, cycle)
	if err != nil {
		return nil, err
	}
	s := &Scan{Tail: last.TailLSN}
	tail := last.TailLSN
	if tail.Block() >= l.Blocks || tail.Cycle() > last.Cycle || tail.Cycle()+1 < last.Cycle {
		return nil, corrupt(lastBB, "tail LSN %d/%d outside the log", tail.Cycle(), tail.Block())
	}
	open := make(map[uint32]*Trans)
	bb, cyc := tail.Block(), tail.Cycle()
	end := format.MakeLSN(last.Cycle, lastBB)
	for n := uint32(0); n <= l.Blocks; n++ {
		if bb == l.Blocks-1 && !l.isHeader(bb) {
			bb, cyc = 0, cyc+1 // a one-block remainder our writer stamped over
		}
		h, payload, err := l.readRecord(bb, cyc)
		if err != nil {
			var ce *format.CorruptError
			if !errors.As(err, &ce) {
				return nil, err
			}
			break // torn: the head is here
		}
		s.Records++
		s.LastBlock = bb
		clean, err := parseRecord(h, payload, open, &s.Trans)
		if err != nil {
			return nil, format.Located(err, fmt.Sprintf("log block %d", bb))
		}
		s.Clean = clean
		hdrs := uint32(format.LogRecHeaderSectors(h.Size))
		bb += hdrs + h.Len/format.BBSize
		if bb >= l.Blocks {
			bb, cyc = bb-l.Blocks, cyc+1
		}
		if h.LSN == end {
			break
		}
	}
	s.Head = format.MakeLSN(cyc, bb)
	return s, nil
}

// isHeader reports whether block bb starts with a record header magic.
func (l *Log) isHeader(bb uint32) bool {
	buf := make([]byte, format.BBSize)
	return l.readBB(bb, buf) == nil && binary.BigEndian.Uint32(buf) == format.LogHeaderMagic
}

// parseRecord adds a record's ops to the open transactions, moving those
// that commit to done. clean reports an unmount op.
func parseRecord(h *format.LogRecHeader, p []byte, open map[uint32]*Trans, done *[]*Trans) (clean bool, err error) {
	off := 0
	for i := uint32(0); i < h.NumLogOps; i++ {
		if off+format.LogOpHeaderSize > len(p) {
			return false, format.Corrupt("log op", fmt.Sprintf("op %d", i), "header past the record's end")
		}
		op := format.DecodeLogOpHeader(p[off:])
		off += format.LogOpHeaderSize
		if int(op.Len) > len(p)-off {
			return false, format.Corrupt("log op", fmt.Sprintf("op %d", i), "%d bytes past the record's end", op.Len)
		}
		data := p[off : off+int(op.Len)]
		off += int(op.Len)
		switch op.ClientID {
		case format.LogClientLog:
			if op.Flags&format.LogOpUnmountTrans != 0 {
				clean = true
			}
			continue
		case format.LogClientTransaction:
		default:
			return false, format.Corrupt("log op", fmt.Sprintf("op %d", i), "client ID %#x", op.ClientID)
		}
		clean = false
		t := open[op.Tid]
		if op.Flags&format.LogOpStartTrans != 0 {
			if t == nil {
				open[op.Tid] = &Trans{Tid: op.Tid, LSN: h.LSN}
			}
			continue
		}
		if t == nil {
			continue // started before the tail
		}
		if op.Flags&format.LogOpCommitTrans != 0 {
			if t.total != 0 && len(t.Items) > 0 && len(t.Items[len(t.Items)-1].Regions) != t.total {
				return false, format.Corrupt("log transaction", fmt.Sprintf("tid %#x", t.Tid), "last item has %d of %d regions", len(t.Items[len(t.Items)-1].Regions), t.total)
			}
			delete(open, op.Tid)
			*done = append(*done, t)
			continue
		}
		if err := t.add(op, data); err != nil {
			return false, err
		}
	}
	return clean, nil
}

// add appends one op's data to the transaction.
func (t *Trans) add(op format.LogOpHeader, data []byte) error {
	where := fmt.Sprintf("tid %#x", t.Tid)
	cont := op.Flags&format.LogOpWasContTrans != 0
	if t.header == nil || (cont && len(t.Items) == 0) {
		t.header = append(t.header, data...)
		if len(t.header) >= format.LogTransHeaderSize {
			hdr, err := format.DecodeLogTransHeader(t.header)
			if err != nil {
				return format.Located(err, where)
			}
			t.Header = hdr
		}
		return nil
	}
	if cont {
		it := &t.Items[len(t.Items)-1]
		r := &it.Regions[len(it.Regions)-1]
		*r = append(*r, data...)
		return nil
	}
	if len(t.Items) == 0 || len(t.Items[len(t.Items)-1].Regions) == t.total {
		if len(data) < 4 {
			return format.Corrupt("log item", where, "format region of %d bytes", len(data))
		}
		n := int(binary.LittleEndian.Uint16(data[2:]))
		if n == 0 || n > 1024 {
			return format.Corrupt("log item", where, "%d regions", n)
		}
		t.total = n
		t.Items = append(t.Items, Item{})
	}
	it := &t.Items[len(t.Items)-1]
	it.Regions = append(it.Regions, append([]byte(nil), data...))
	return nil
}
