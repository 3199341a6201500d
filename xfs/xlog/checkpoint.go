package xlog

import (
	"encoding/binary"

	"github.com/xfs3/xfs3/xfs/format"
)

// Checkpoints. A batch's transactions go to the log as few checkpoints
// as their items allow, as the kernel's committed-item list gathers
// them: consecutive transactions join one checkpoint, in which each
// block is logged once, by the union of the chunks its transactions
// changed taken from the newest of their images (which holds every
// earlier change), and each dquot record once, by its newest value. A
// hot block (an AGI, a btree leaf, a directory block) is then logged
// once a batch rather than once a transaction. Recovery, ours and the
// kernel's, replays a checkpoint whole or not at all, and no transaction
// of a batch is acknowledged durable before the whole batch is written,
// so a crash loses none that was. A transaction that cancels a block (or
// logs an item of another kind) is a checkpoint of its own, so that a
// block freed and taken again is logged in the order of those changes.

// checkpoint is the transactions of a batch logged as one, its items
// and a bound of their log bytes (transBytes).
type checkpoint struct {
	pendings []*pending
	items    []Item
	bytes    int
}

// merger groups a batch into checkpoints. The leader owns it and reuses
// its tables from batch to batch: a batch costs no allocation per
// transaction for them.
type merger struct {
	cps     []checkpoint
	all     []Item // the items of the checkpoint being merged, in order
	next    []int  // next[i]: the next item of all's block, or -1
	blocks  map[format.Daddr]int
	order   []blockItems // by first appearance
	records map[dquotKey]int
	dquots  []Item
	group   []Item
	out     []Item // the merged items of the batch's checkpoints
	room    BufItems
}

// blockItems links the items of one block in a checkpoint: first and last
// index in all (next links them), and how many.
type blockItems struct{ first, last, n int }

// checkpoints groups batch into checkpoints, in order. The result is
// valid until the next call.
func (m *merger) checkpoints(batch []*pending) []checkpoint {
	m.cps, m.out = m.cps[:0], m.out[:0]
	// A batch's items are written before the next batch is merged, so
	// the room for the small ones is reused; it grows when a batch
	// filled it.
	if n := len(m.room.small); n == cap(m.room.small) {
		m.room = NewBufItems(max(64, 2*n))
	} else {
		m.room.small = m.room.small[:0]
	}
	start := 0
	flush := func(end int) {
		if end > start {
			cp := checkpoint{pendings: batch[start:end], items: m.merge(batch[start:end])}
			cp.bytes = transBytes(cp.items, false)
			m.cps = append(m.cps, cp)
		}
		start = end
	}
	for i, p := range batch {
		if !mergeable(p) {
			flush(i)
			flush(i + 1)
		}
	}
	flush(len(batch))
	return m.cps
}

// mergeable reports whether p may share a checkpoint: it logs only
// buffer and dquot items.
func mergeable(p *pending) bool {
	for _, it := range p.items {
		switch it.kind {
		case plainItem, imageItem, dquotItem:
		default:
			return false
		}
	}
	return true
}

// merge returns the items of a checkpoint of ps: the items of a single
// transaction as they are, its diff items formatted; else one item per
// block, in the order the blocks were first logged, then one per dquot
// record. A block whose diff items changed nothing is left out, unless
// that would leave the checkpoint empty.
func (m *merger) merge(ps []*pending) []Item {
	if len(ps) == 1 {
		from := len(m.out)
		m.out = formatDiffs(m.out, ps[0].items, &m.room)
		return m.out[from:len(m.out):len(m.out)]
	}
	if m.blocks == nil {
		m.blocks, m.records = map[format.Daddr]int{}, map[dquotKey]int{}
	}
	clear(m.blocks)
	clear(m.records)
	m.all, m.next, m.order, m.dquots = m.all[:0], m.next[:0], m.order[:0], m.dquots[:0]
	for _, p := range ps {
		m.all = append(m.all, p.items...)
	}
	for i, it := range m.all {
		m.next = append(m.next, -1)
		if it.kind == dquotItem {
			if at, ok := m.records[it.key]; ok {
				m.dquots[at] = it // the newest value stands for all
				continue
			}
			m.records[it.key] = len(m.dquots)
			m.dquots = append(m.dquots, it)
			continue
		}
		if at, ok := m.blocks[it.block]; ok {
			b := &m.order[at]
			m.next[b.last], b.last = i, i
			b.n++
			continue
		}
		m.blocks[it.block] = len(m.order)
		m.order = append(m.order, blockItems{first: i, last: i, n: 1})
	}
	from := len(m.out)
	for _, b := range m.order {
		m.group = m.group[:0]
		for i := b.first; i >= 0; i = m.next[i] {
			m.group = append(m.group, m.all[i])
		}
		if it, ok := m.mergeBlock(m.group); ok {
			m.out = append(m.out, it)
		}
	}
	m.out = append(m.out, m.dquots...)
	if len(m.out) == from && len(m.all) > 0 {
		m.out = append(m.out, unchanged(m.all[0]))
	}
	return m.out[from:len(m.out):len(m.out)]
}

// mergeBlock is the one item that logs what the items of one block, in
// log order, logged: the chunks any of them changed, from the newest
// image. An image item's changed-chunk form is kept only when every item
// had one (the first logging of a block in an epoch is whole). A run of
// diff items that change the block one after the other (each one's old
// is the image before it) is diffed once, its first old against its last
// image: the chunks it changed between the checkpoint's states, which is
// what a recovery replaying the checkpoint whole needs. ok is false when
// nothing changed.
func (m *merger) mergeBlock(group []Item) (Item, bool) {
	newest := group[len(group)-1]
	if len(group) == 1 && !newest.diff {
		return newest, true
	}
	chunks := (len(newest.image) + format.BlfChunk - 1) / format.BlfChunk
	var cm chunkMap
	union := cm[:(chunks+31)/32]
	partial := true
	for i := 0; i < len(group); i++ {
		it := group[i]
		if len(it.image) != len(newest.image) {
			// A block keeps its size while it is logged.
			return wholeItem(newest), true
		}
		if it.diff {
			first := it
			for i+1 < len(group) && group[i+1].diff && follows(group[i+1], group[i]) {
				i++
			}
			if first.old == nil {
				partial = false
			}
			markChanged(union, group[i].image, first.old)
			continue
		}
		hdr := it.Regions[0]
		if it.kind == imageItem {
			if it.partial == nil {
				partial = false
			} else {
				hdr = it.partial[0]
			}
		}
		// The chunk map of an item bufItemOf made: MapSize words after
		// the fixed header (format.BufLogFormat), read in place.
		words := int(binary.LittleEndian.Uint32(hdr[16:]))
		if words > len(union) || len(hdr) < format.BlfHeaderSize+4*words {
			// Our items carry their whole map: log the newest image
			// whole.
			return wholeItem(newest), true
		}
		for w := range words {
			union[w] |= binary.LittleEndian.Uint32(hdr[format.BlfHeaderSize+4*w:])
		}
	}
	blft, _, _ := format.BlockLogInfo(newest.image)
	chunked, ok := bufItemOf(newest.block, newest.image, blft, union, &m.room)
	if !ok {
		return Item{}, false
	}
	merged := Item{Regions: chunked.Regions, block: newest.block, kind: newest.kind, image: newest.image}
	if newest.kind == imageItem {
		merged.Regions = wholeBufItemIn(newest.block, newest.image, blft, &m.room).Regions
		if partial {
			merged.partial = chunked.Regions
		}
	}
	return merged, true
}

// follows reports whether diff item next changes the image that diff
// item prev made: its old is prev's image (the same bytes, not a copy).
func follows(next, prev Item) bool {
	return next.old != nil && len(prev.image) > 0 && &next.old[0] == &prev.image[0]
}

// formatDiffs appends items to out with their diff items formatted (in
// room), leaving out those that changed nothing unless none is left.
func formatDiffs(out, items []Item, room *BufItems) []Item {
	from := len(out)
	for _, it := range items {
		if it.diff {
			var ok bool
			if it, ok = room.Item(it.block, it.image, it.old); !ok {
				continue
			}
		}
		out = append(out, it)
	}
	if len(out) == from && len(items) > 0 {
		out = append(out, unchanged(items[0]))
	}
	return out
}

// unchanged is an item that logs its block whole: a checkpoint whose
// diff items changed nothing still logs an item (rare: a transaction
// that marked a block dirty and left it as it was).
func unchanged(it Item) Item {
	if !it.diff {
		return it
	}
	return wholeItem(it)
}

// wholeItem is it logged whole, as the same kind of item.
func wholeItem(it Item) Item {
	blft, _, _ := format.BlockLogInfo(it.image)
	whole := wholeBufItem(it.block, it.image, blft)
	whole.block, whole.kind, whole.image = it.block, it.kind, it.image
	return whole
}
