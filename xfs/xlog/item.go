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
	if old != nil && len(old) != len(data) {
		old = nil
	}
	// The bitmap of a 64 KiB block (the largest) fits on the stack.
	var mapSpace [(64<<10/format.BlfChunk + 31) / 32]uint32
	var dataMap []uint32
	if words := (chunks + 31) / 32; words <= len(mapSpace) {
		dataMap = mapSpace[:words]
	} else {
		dataMap = make([]uint32, words)
	}
	runs := 0
	for c := 0; c < chunks; c++ {
		if old != nil && chunkEqual(data, old, c) {
			continue
		}
		dataMap[c/32] |= 1 << (c % 32)
		if c == 0 || dataMap[(c-1)/32]&(1<<((c-1)%32)) == 0 {
			runs++
		}
	}
	if runs == 0 {
		return Item{}, false
	}
	blft, _, _ := format.BlockLogInfo(data)
	f := format.BufLogFormatOf(daddr, len(data), blft, runs, dataMap)
	hdr := make([]byte, f.EncodedLen())
	f.Encode(hdr)
	it.Regions = make([][]byte, 0, 1+runs)
	it.Regions = append(it.Regions, hdr)
	for c := 0; c < chunks; {
		if dataMap[c/32]&(1<<(c%32)) == 0 {
			c++
			continue
		}
		start := c
		for c < chunks && dataMap[c/32]&(1<<(c%32)) != 0 {
			c++
		}
		it.Regions = append(it.Regions, data[start*format.BlfChunk:min(c*format.BlfChunk, len(data))])
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
