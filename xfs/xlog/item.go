package xlog

import (
	"bytes"

	"github.com/xfs3/xfs3/xfs/format"
)

// Item is one log item: its format region first, then its data regions.
type Item struct {
	Regions [][]byte

	// An image item (a directory or attribute block, see wholeImage) is
	// logged whole the first time in an epoch and by its changed chunks
	// (partial, nil if it has no older copy) after that; a cancel item
	// makes the next image of its block whole again. block is the
	// block's address for both.
	partial [][]byte
	block   format.Daddr
	kind    itemKind
	diff    bool // a DiffItem: old below, no regions until formatted
	// image is the whole block a buffer item (plain or image) was made
	// from: a checkpoint that logs the block again merges its items into
	// one, with the chunks of both taken from the newest image. key is a
	// dquot item's record (its block and offset), where the newest item
	// of a checkpoint stands for all.
	image []byte
	key   dquotKey
	// old is what a diff item's image is diffed against (nil: logged
	// whole), by the leader when it writes the item's batch.
	old []byte
}

type itemKind uint8

const (
	otherItem itemKind = iota // never merged: a checkpoint boundary
	plainItem
	imageItem
	cancelItem
	dquotItem
)

// dquotKey names a dquot record: its block and byte offset in it.
type dquotKey struct {
	blkno   int64
	boffset uint32
}

// BufItem logs the block data at daddr. When old (the block's previous
// content, same length) is given, only the 128-byte chunks that differ are
// logged; otherwise the whole block. Blocks that wholeImage names carry
// both forms, and the writer logs them whole once an epoch (see Writer).
// The buffer type comes from the block's magic, so recovery (ours and the
// kernel's) knows how to verify it. ok is false when nothing changed.
func BufItem(daddr format.Daddr, data, old []byte) (it Item, ok bool) {
	return (*BufItems)(nil).Item(daddr, data, old)
}

// DiffItem is BufItem left to the log's leader: it diffs data against old
// when it writes the item's batch, once for every item of the block in a
// checkpoint (see mergeBlock), instead of the committer doing it for each.
// Neither slice may change until the batch is written.
func DiffItem(daddr format.Daddr, data, old []byte) Item {
	blft, _, _ := format.BlockLogInfo(data)
	if old != nil && len(old) != len(data) {
		old = nil
	}
	it := Item{block: daddr, kind: plainItem, image: data, old: old, diff: true}
	if wholeImage(blft) {
		it.kind = imageItem
	}
	return it
}

// diffGuess is what a diff item of a plain block is taken to log until
// it is formatted: two chunks, about what a commit's own diff of an AG
// header, a btree block or an inode's block logged (one to four).
const diffGuess = 2 * format.BlfChunk

// regionBytes returns the bytes it adds to the log, op headers included.
// A diff item counts as logging its whole block, or with guess
// diffGuess of a plain block.
func (it *Item) regionBytes(guess bool) int {
	if !it.diff {
		n := 0
		for _, r := range it.Regions {
			n += format.LogOpHeaderSize + len(r)
		}
		return n
	}
	chunks := (len(it.image) + format.BlfChunk - 1) / format.BlfChunk
	data := len(it.image)
	if guess && it.kind == plainItem {
		data = min(data, diffGuess)
	}
	return 2*format.LogOpHeaderSize + format.BlfHeaderSize + 4*((chunks+31)/32) + data
}

// BufItems formats the buffer items of one commit: the small ones share
// one allocation of room for as many as NewBufItems was told.
type BufItems struct{ small []smallBufItem }

// NewBufItems returns room for the items of n blocks.
func NewBufItems(n int) BufItems { return BufItems{small: make([]smallBufItem, 0, n)} }

// Item is BufItem, with the item's regions and header in f's room while
// it lasts; a nil f allocates each.
func (f *BufItems) Item(daddr format.Daddr, data, old []byte) (it Item, ok bool) {
	blft, _, _ := format.BlockLogInfo(data)
	if old != nil && len(old) != len(data) {
		old = nil
	}
	it, ok = bufItem(daddr, data, old, blft, f)
	if !ok {
		return it, false
	}
	it.block, it.kind, it.image = daddr, plainItem, data
	if !wholeImage(blft) {
		return it, true
	}
	it.kind = imageItem
	if old != nil {
		it.partial = it.Regions
		it.Regions = wholeBufItemIn(daddr, data, blft, f).Regions
	}
	return it, true
}

// wholeBufItem is the item that logs all of data.
func wholeBufItem(daddr format.Daddr, data []byte, blft uint16) Item {
	return wholeBufItemIn(daddr, data, blft, nil)
}

func wholeBufItemIn(daddr format.Daddr, data []byte, blft uint16, f *BufItems) Item {
	it, _ := bufItem(daddr, data, nil, blft, f)
	return it
}

// chunkMap is the bitmap of a block's 128-byte chunks, one bit each;
// the largest block's (64 KiB) fits on the stack.
type chunkMap [(64<<10/format.BlfChunk + 31) / 32]uint32

// bufItem logs the chunks of data that differ from old (all of them
// without old).
func bufItem(daddr format.Daddr, data, old []byte, blft uint16, f *BufItems) (it Item, ok bool) {
	chunks := (len(data) + format.BlfChunk - 1) / format.BlfChunk
	var m chunkMap
	dataMap := m[:(chunks+31)/32]
	markChanged(dataMap, data, old)
	return bufItemOf(daddr, data, blft, dataMap, f)
}

// markChanged sets in dataMap the chunks of data that differ from old
// (all of them without old).
func markChanged(dataMap []uint32, data, old []byte) {
	chunks := (len(data) + format.BlfChunk - 1) / format.BlfChunk
	for c := 0; c < chunks; c++ {
		if old == nil || !chunkEqual(data, old, c) {
			dataMap[c/32] |= 1 << (c % 32)
		}
	}
}

// bufItemOf logs the chunks of data that dataMap marks, in room if
// it has some; ok is false when it marks none.
func bufItemOf(daddr format.Daddr, data []byte, blft uint16, dataMap []uint32, room *BufItems) (it Item, ok bool) {
	chunks := (len(data) + format.BlfChunk - 1) / format.BlfChunk
	runs := 0
	for c := 0; c < chunks; c++ {
		if dataMap[c/32]&(1<<(c%32)) != 0 && (c == 0 || dataMap[(c-1)/32]&(1<<((c-1)%32)) == 0) {
			runs++
		}
	}
	if runs == 0 {
		return Item{}, false
	}
	f := format.BufLogFormatOf(daddr, len(data), blft, runs, dataMap)
	var hdr []byte
	if n := f.EncodedLen(); runs < len(smallBufItem{}.regions) && n <= len(smallBufItem{}.hdr) {
		var sp *smallBufItem
		if room != nil && len(room.small) < cap(room.small) {
			room.small = room.small[:len(room.small)+1]
			sp = &room.small[len(room.small)-1]
		} else {
			sp = new(smallBufItem)
		}
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

// wholeImage reports whether blocks of log type blft are image items:
// logged whole the first time in each epoch of the log (see Writer). The
// kernel's recovery writes the blocks replayed from one transaction,
// through their write verifiers, before it replays the next; and since
// our blocks keep LSN 0 on disk it replays every item of the window, also
// onto a block written in place at a later state or torn by a power cut.
// Part of an older image over such a block makes a block no transaction
// committed: harmless where the verifier checks fields one by one (AG
// headers, btree and inode blocks), but a failed mount where it checks
// the block as a whole (a directory's free-space table against its
// entries, hash order, stale counts). Since the log's tail only ever
// sits at an epoch's start, the first item of such a block that any
// recovery replays is whole, whatever the block on disk holds, and every
// later one changes a state recovery has just rebuilt.
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
	return Item{Regions: [][]byte{hdr}, block: daddr, kind: cancelItem}
}

// DquotItem logs one dquot record: f says where it lives, rec is the
// whole 136-byte record as it is now, of which the disk dquot is logged.
func DquotItem(f *format.DqLogFormat, rec []byte) Item {
	hdr := make([]byte, format.DqLogFormatSize)
	f.Encode(hdr)
	return Item{Regions: [][]byte{hdr, rec[:format.DiskDquotSize]}, kind: dquotItem, key: dquotKey{f.Blkno, f.Boffset}}
}
