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
// logged, except in the blocks wholeImage names; otherwise the whole
// block. The buffer type comes from the block's magic, so recovery (ours
// and the kernel's) knows how to verify it. ok is false when nothing
// changed.
func BufItem(daddr format.Daddr, data, old []byte) (it Item, ok bool) {
	chunks := (len(data) + format.BlfChunk - 1) / format.BlfChunk
	blft, _, _ := format.BlockLogInfo(data)
	if old != nil && len(old) != len(data) {
		old = nil
	}
	if old != nil && wholeImage(blft) {
		if bytes.Equal(data, old) {
			return Item{}, false
		}
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
	f := format.BufLogFormatOf(daddr, len(data), blft, runs, dataMap)
	var hdr []byte
	if n := f.EncodedLen(); runs < len(smallBufItem{}.regions) && n <= len(smallBufItem{}.hdr) {
		sp := new(smallBufItem)
		it.Regions, hdr = sp.regions[:0], sp.hdr[:n]
	} else {
		it.Regions, hdr = make([][]byte, 0, 1+runs), make([]byte, n)
	}
	f.Encode(hdr)
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

// smallBufItem holds the regions and the format header of an item of a
// few runs over a block of up to 4 KiB, the common case, in one
// allocation.
type smallBufItem struct {
	regions [4][]byte
	hdr     [format.BlfHeaderSize + 4]byte
}

// wholeImage reports whether blocks of log type blft are always logged
// whole. The kernel's recovery writes the blocks replayed from one record
// (one LSN), through their write verifiers, before it replays the next;
// and since our blocks keep LSN 0 on disk it replays every item of the
// window, also onto a block written in place at a later state (by our own
// recovery cut short, TestKernelReplaysAfterCutRecovery). Part of an older
// image over a newer block makes a block no transaction committed:
// harmless where the verifier checks fields one by one (AG headers, btree
// and inode blocks), but a failed mount where it checks the block as a
// whole (a directory's free-space table against its entries, hash order,
// stale counts). A whole image makes every step a state once committed.
func wholeImage(blft uint16) bool {
	switch blft {
	case format.BlftDir3Block, format.BlftDir3Data, format.BlftDir3Free, format.BlftDir3Leaf1,
		format.BlftDir3LeafN, format.BlftDa3Node, format.BlftAttrLeaf:
		return true
	}
	return false
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
