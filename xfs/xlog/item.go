package xlog

import (
	"bytes"

	"github.com/xfs3/xfs3/xfs/format"
)

// Item is one log item: its format region first, then its data regions.
type Item struct {
	Regions [][]byte
}

// BufItem logs the block data at daddr. When old (the block's previous
// content, same length) is given, only the 128-byte chunks that differ are
// logged; otherwise the whole block. The buffer type comes from the
// block's magic, so recovery (ours and the kernel's) knows how to verify
// it. ok is false when nothing changed.
func BufItem(daddr format.Daddr, data, old []byte) (it Item, ok bool) {
	chunks := (len(data) + format.BlfChunk - 1) / format.BlfChunk
	var runs [][2]int
	for c := 0; c < chunks; {
		if old != nil && len(old) == len(data) && chunkEqual(data, old, c) {
			c++
			continue
		}
		start := c
		for c < chunks && (old == nil || len(old) != len(data) || !chunkEqual(data, old, c)) {
			c++
		}
		runs = append(runs, [2]int{start, c})
	}
	if len(runs) == 0 {
		return Item{}, false
	}
	blft, _, _ := format.BlockLogInfo(data)
	f := format.NewBufLogFormat(daddr, len(data), blft, runs)
	hdr := make([]byte, f.EncodedLen())
	f.Encode(hdr)
	it.Regions = append(it.Regions, hdr)
	for _, r := range runs {
		it.Regions = append(it.Regions, data[r[0]*format.BlfChunk:min(r[1]*format.BlfChunk, len(data))])
	}
	return it, true
}

func chunkEqual(a, b []byte, c int) bool {
	lo, hi := c*format.BlfChunk, min((c+1)*format.BlfChunk, len(a))
	return bytes.Equal(a[lo:hi], b[lo:hi])
}

// CancelItem says that the block of n bytes at daddr was freed: recovery
// must not replay any earlier logged copy of it, since the block may hold
// file data by now.
func CancelItem(daddr format.Daddr, n int) Item {
	f := format.NewBufLogFormat(daddr, n, format.BlftUnknown, nil)
	f.Flags |= format.BlfCancel
	hdr := make([]byte, f.EncodedLen())
	f.Encode(hdr)
	return Item{Regions: [][]byte{hdr}}
}

// DquotItem logs one dquot record: f says where it lives, rec is the
// whole 136-byte record as it is now, of which the disk dquot is logged.
func DquotItem(f *format.DqLogFormat, rec []byte) Item {
	hdr := make([]byte, format.DqLogFormatSize)
	f.Encode(hdr)
	return Item{Regions: [][]byte{hdr, rec[:format.DiskDquotSize]}}
}
