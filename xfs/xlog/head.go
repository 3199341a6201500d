package xlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/xfs3/xfs3/xfs/format"
)

// ErrNeedsRecovery says the log holds changes that were never written back.
var ErrNeedsRecovery = errors.New("log needs recovery")

// Log locates the internal log on a device.
type Log struct {
	R      io.ReaderAt
	Start  int64  // byte offset of the log's first block
	Blocks uint32 // log size in 512-byte basic blocks
}

func (l *Log) readBB(bb uint32, buf []byte) error {
	if bb >= l.Blocks {
		return fmt.Errorf("log block %d outside a log of %d blocks", bb, l.Blocks)
	}
	_, err := l.R.ReadAt(buf[:512], l.Start+int64(bb)*512)
	return err
}

// cycleOf returns the cycle number stamped on a basic block.
func (l *Log) cycleOf(bb uint32, buf []byte) (uint32, error) {
	if err := l.readBB(bb, buf); err != nil {
		return 0, err
	}
	if binary.BigEndian.Uint32(buf) == format.LogHeaderMagic {
		return binary.BigEndian.Uint32(buf[4:]), nil
	}
	return binary.BigEndian.Uint32(buf), nil
}

// FindHead returns the first basic block after the newest record: the
// first block whose cycle is lower than block 0's (found by bisection), or
// 0 when the whole log carries one cycle.
func (l *Log) FindHead() (head uint32, cycle uint32, err error) {
	buf := make([]byte, 512)
	first, err := l.cycleOf(0, buf)
	if err != nil {
		return 0, 0, err
	}
	last, err := l.cycleOf(l.Blocks-1, buf)
	if err != nil {
		return 0, 0, err
	}
	if first == 0 {
		return 0, 0, fmt.Errorf("log block 0 has cycle 0: %w", ErrNeedsRecovery)
	}
	if last == first {
		return 0, first + 1, nil
	}
	lo, hi := uint32(0), l.Blocks-1 // cycle(lo) == first, cycle(hi) != first
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		c, err := l.cycleOf(mid, buf)
		if err != nil {
			return 0, 0, err
		}
		if c == first {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, first, nil
}

// LastRecord finds the header of the record that ends at head, scanning
// backwards over at most one iclog's worth of blocks (wrapping at the start).
func (l *Log) LastRecord(head uint32) (*format.LogRecHeader, uint32, error) {
	buf := make([]byte, 512)
	const maxScan = 1 << 16 // far more than one 256 KiB record
	bb := head
	for i := 0; i < maxScan && i < int(l.Blocks); i++ {
		if bb == 0 {
			bb = l.Blocks
		}
		bb--
		if err := l.readBB(bb, buf); err != nil {
			return nil, 0, err
		}
		if binary.BigEndian.Uint32(buf) == format.LogHeaderMagic {
			h, err := format.DecodeLogRecHeader(buf)
			return h, bb, err
		}
	}
	return nil, 0, fmt.Errorf("no record header before log block %d: %w", head, ErrNeedsRecovery)
}

// CheckClean returns nil when the newest record is an unmount record that
// ends exactly at the head, and an error wrapping ErrNeedsRecovery otherwise.
func (l *Log) CheckClean() error {
	head, _, err := l.FindHead()
	if err != nil {
		return err
	}
	h, at, err := l.LastRecord(head)
	if err != nil {
		return err
	}
	// A record larger than 32 KiB carries extended header sectors.
	hdrBB := uint32(format.LogRecHeaderSectors(h.Size))
	if h.Version != format.LogVersion2 {
		hdrBB = 1
	}
	lenBB := (h.Len + 511) / 512
	if (at+hdrBB+lenBB)%l.Blocks != head%l.Blocks {
		return fmt.Errorf("record at log block %d does not end at the head %d: %w", at, head, ErrNeedsRecovery)
	}
	if h.NumLogOps != 1 || h.Len < format.LogOpHeaderSize {
		return fmt.Errorf("last record (block %d) is not an unmount record: %w", at, ErrNeedsRecovery)
	}
	buf := make([]byte, 512)
	if err := l.readBB((at+hdrBB)%l.Blocks, buf); err != nil {
		return err
	}
	if op := format.DecodeLogOpHeader(buf); op.ClientID != format.LogClientLog || op.Flags&format.LogOpUnmountTrans == 0 {
		return fmt.Errorf("last record (block %d) is not an unmount record: %w", at, ErrNeedsRecovery)
	}
	return nil
}
