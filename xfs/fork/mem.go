package fork

import (
	"errors"
	"fmt"
	"hash/crc32"
	"sort"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// ErrMemFull is returned by Mem.Alloc when its block budget is spent.
var ErrMemFull = errors.New("fork.Mem: out of blocks")

// Mem is an in-memory Writer for tests of format code. Blocks live in a
// map by fork offset; each gets a fake, unique disk address. Ops.Verify
// runs when a committed block is first read with those Ops (like a buffer
// cache loading it) and Ops.Finish on every Commit, like the real thing.
// Within a transaction, reading a block again returns the same private
// copy. View hands out a copy that must stay unchanged: Commit and Cancel
// panic when it was written to, as the engine's transactions do in test
// binaries. Begin, Commit and Cancel cost nothing per unchanged block.
type Mem struct {
	Geo        format.Geometry
	Ino        format.Ino
	Fmt        int8
	Data       []byte // local bytes
	DiSize     int64
	Space      int // InlineSpace
	MaxSpace   int // MaxInlineSpace
	BlockLimit int // Alloc fails with ErrMemFull beyond this many blocks (0: no limit)

	blocks  map[format.FileOff]*memBlock
	next    format.Daddr
	pending []pendingRun           // private copies handed out since Begin
	latest  map[format.FileOff]int // index in pending of the last copy of a run
	dirty   map[format.Daddr]bool
	views   []memView        // read-only copies handed out since Begin
	saved   *memSaved        // state at Begin, restored by Cancel
	sorted  []format.FileOff // mapped offsets in order, when sortedOK
	sortOK  bool
}

// memSaved is what Cancel restores: the scalar state at Begin and an undo
// log of the block map changes since (blocks themselves only change at
// Commit, so Begin costs nothing per block).
type memSaved struct {
	fmt    int8
	data   []byte
	diSize int64
	next   format.Daddr
	undo   []memUndo
}

// memUndo restores one map slot: prev nil means the slot was empty.
type memUndo struct {
	off  format.FileOff
	prev *memBlock
}

// memView is a block handed out by View, and its checksum then.
type memView struct {
	daddr format.Daddr
	buf   []byte
	sum   uint32
}

type memBlock struct {
	daddr format.Daddr
	data  []byte // one filesystem block
	ops   *trans.Ops
	// verified records the Ops (and run length) that last verified this
	// content, so that, like a buffer cache, unchanged blocks are verified
	// once; Commit clears it.
	verified      *trans.Ops
	verifiedCount int
}

// NewMem returns an empty local fork with space bytes of inline room.
func NewMem(g format.Geometry, ino format.Ino, space int) *Mem {
	return &Mem{Geo: g, Ino: ino, Fmt: format.FmtLocal, Space: space, MaxSpace: space,
		blocks: make(map[format.FileOff]*memBlock), next: 1 << 20, dirty: make(map[format.Daddr]bool)}
}

// Begin starts a transaction on the fork: Commit applies what was marked
// dirty (running Ops.Finish), Cancel restores the state at Begin.
func (m *Mem) Begin() {
	m.saved = &memSaved{fmt: m.Fmt, data: append([]byte(nil), m.Data...), diSize: m.DiSize, next: m.next}
	m.pending, m.latest, m.views = nil, nil, nil
	m.dirty = make(map[format.Daddr]bool)
}

// checkViews panics when a block handed out by View was changed.
func (m *Mem) checkViews() {
	for _, v := range m.views {
		if crc32.ChecksumIEEE(v.buf) != v.sum {
			panic(fmt.Sprintf("fork.Mem: block at daddr %d changed through a view", v.daddr))
		}
	}
	m.views = nil
}

// logUndo records the current content of map slot off before it changes.
func (m *Mem) logUndo(off format.FileOff) {
	if m.saved != nil {
		m.saved.undo = append(m.saved.undo, memUndo{off, m.blocks[off]})
	}
}

// Commit writes back every dirty private copy.
func (m *Mem) Commit() {
	m.checkViews()
	bs := m.Geo.BlockSize
	for _, p := range m.pending {
		run, err := m.run(p.off, p.count)
		if err != nil || !m.dirty[run[0].daddr] || run[0].daddr != p.daddr {
			continue // freed since, or never changed
		}
		if p.ops != nil && p.ops.Finish != nil {
			p.ops.Finish(p.buf)
		}
		for i, b := range run {
			copy(b.data, p.buf[i*bs:(i+1)*bs])
			b.ops, b.verified = p.ops, nil
		}
	}
	m.pending, m.latest, m.saved = nil, nil, nil
	m.dirty = make(map[format.Daddr]bool)
}

// Cancel restores the state at Begin.
func (m *Mem) Cancel() {
	m.checkViews()
	s := m.saved
	if s == nil {
		return
	}
	for i := len(s.undo) - 1; i >= 0; i-- {
		if u := s.undo[i]; u.prev == nil {
			delete(m.blocks, u.off)
		} else {
			m.blocks[u.off] = u.prev
		}
	}
	m.Fmt, m.Data, m.DiSize, m.next = s.fmt, s.data, s.diSize, s.next
	m.pending, m.latest, m.saved, m.sortOK = nil, nil, nil, false
	m.dirty = make(map[format.Daddr]bool)
}

// Block returns the committed bytes of the block at off (for checkers).
func (m *Mem) Block(off format.FileOff) ([]byte, format.Daddr, bool) {
	b, ok := m.blocks[off]
	if !ok {
		return nil, 0, false
	}
	return b.data, b.daddr, true
}

func (m *Mem) Geometry() *format.Geometry { return &m.Geo }
func (m *Mem) Owner() format.Ino          { return m.Ino }
func (m *Mem) Format() int8               { return m.Fmt }
func (m *Mem) Inline() []byte             { return m.Data }
func (m *Mem) Size() int64                { return m.DiSize }
func (m *Mem) InlineSpace() int           { return m.Space }
func (m *Mem) MaxInlineSpace() int        { return m.MaxSpace }
func (m *Mem) SetSize(size int64)         { m.DiSize = size }

// Blocks is the number of mapped blocks.
func (m *Mem) Blocks() int { return len(m.blocks) }

func (m *Mem) SetInline(b []byte) error {
	if len(b) > m.MaxSpace {
		return fmt.Errorf("fork.Mem: %d inline bytes exceed %d", len(b), m.MaxSpace)
	}
	if len(m.blocks) != 0 {
		return errors.New("fork.Mem: SetInline with blocks still mapped")
	}
	m.Data = append([]byte(nil), b...)
	m.DiSize = int64(len(b))
	m.Fmt = format.FmtLocal
	return nil
}

func (m *Mem) ToBlocks() error {
	if m.Fmt != format.FmtLocal {
		return errors.New("fork.Mem: ToBlocks of a fork that is not local")
	}
	m.Data, m.DiSize, m.Fmt = nil, 0, format.FmtExtents
	return nil
}

// run returns the count blocks mapped from off, or an error on a hole.
func (m *Mem) run(off format.FileOff, count int) ([]*memBlock, error) {
	out := make([]*memBlock, count)
	for i := range out {
		b, ok := m.blocks[off+format.FileOff(i)]
		if !ok {
			return nil, format.Corrupt("fork", "", "block %d is not mapped", uint64(off)+uint64(i))
		}
		out[i] = b
	}
	return out, nil
}

func (m *Mem) Read(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	return m.take(off, count, ops, false)
}

// View returns the blocks like Read, as a copy the caller must not change
// (see fork.Viewer); a Read later gives a private copy to change.
func (m *Mem) View(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	return m.take(off, count, ops, true)
}

// take returns the transaction's private copy of a run when it has one
// (like a real transaction, Mem hands out the same copy again), else a
// new copy: private, its changes landing in the blocks at Dirty time, or
// a view, checked unchanged when the transaction ends.
func (m *Mem) take(off format.FileOff, count int, ops *trans.Ops, view bool) ([]byte, format.Daddr, error) {
	run, err := m.run(off, count)
	if err != nil {
		return nil, 0, err
	}
	daddr := run[0].daddr
	if i, ok := m.latestIndex()[off]; ok {
		if p := m.pending[i]; p.count == count && p.daddr == daddr {
			return p.buf, daddr, nil
		}
	}
	buf, err := m.copyRun(run, count, ops)
	if err != nil {
		return nil, 0, err
	}
	if view {
		m.views = append(m.views, memView{daddr, buf, crc32.ChecksumIEEE(buf)})
	} else {
		m.addPending(pendingRun{off, count, daddr, buf, ops})
	}
	return buf, daddr, nil
}

// latestIndex returns latest, rebuilt from pending when a Free dropped it
// (a copy handed out before the Free is still the one to hand out).
func (m *Mem) latestIndex() map[format.FileOff]int {
	if m.latest == nil {
		m.latest = make(map[format.FileOff]int, len(m.pending))
		for i, q := range m.pending {
			m.latest[q.off] = i
		}
	}
	return m.latest
}

// copyRun copies a run's committed blocks into one buffer, verifying them
// the first time they are read with ops.
func (m *Mem) copyRun(run []*memBlock, count int, ops *trans.Ops) ([]byte, error) {
	bs := m.Geo.BlockSize
	buf := make([]byte, count*bs)
	for i, b := range run {
		copy(buf[i*bs:], b.data)
	}
	if ops != nil && ops.Verify != nil && (run[0].verified != ops || run[0].verifiedCount != count) {
		if err := ops.Verify(buf, run[0].daddr); err != nil {
			return nil, err
		}
		run[0].verified, run[0].verifiedCount = ops, count
	}
	return buf, nil
}

func (m *Mem) addPending(p pendingRun) {
	m.latestIndex()[p.off] = len(m.pending)
	m.pending = append(m.pending, p)
}

type pendingRun struct {
	off   format.FileOff
	count int
	daddr format.Daddr
	buf   []byte
	ops   *trans.Ops
}

func (m *Mem) Alloc(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	if m.Fmt == format.FmtLocal {
		return nil, 0, errors.New("fork.Mem: Alloc on a local fork (call ToBlocks first)")
	}
	if m.BlockLimit > 0 && len(m.blocks)+count > m.BlockLimit {
		return nil, 0, ErrMemFull
	}
	bbPerBlock := format.Daddr(m.Geo.BlockSize >> format.BBShift)
	first := m.next
	for i := 0; i < count; i++ {
		o := off + format.FileOff(i)
		if _, ok := m.blocks[o]; ok {
			return nil, 0, fmt.Errorf("fork.Mem: block %d already mapped", o)
		}
		m.logUndo(o)
		m.blocks[o] = &memBlock{daddr: m.next, data: make([]byte, m.Geo.BlockSize), ops: ops}
		if m.sortOK {
			i := sort.Search(len(m.sorted), func(i int) bool { return m.sorted[i] >= o })
			m.sorted = append(m.sorted, 0)
			copy(m.sorted[i+1:], m.sorted[i:])
			m.sorted[i] = o
		}
		m.next += bbPerBlock
	}
	buf := make([]byte, count*m.Geo.BlockSize)
	m.addPending(pendingRun{off, count, first, buf, ops})
	m.dirty[first] = true
	return buf, first, nil
}

func (m *Mem) Free(off format.FileOff, count int) error {
	if _, err := m.run(off, count); err != nil {
		return err
	}
	for i := 0; i < count; i++ {
		o := off + format.FileOff(i)
		m.logUndo(o)
		delete(m.blocks, o)
		if m.sortOK {
			j := sort.Search(len(m.sorted), func(j int) bool { return m.sorted[j] >= o })
			m.sorted = append(m.sorted[:j], m.sorted[j+1:]...)
		}
	}
	kept := m.pending[:0]
	m.latest = nil
	for _, p := range m.pending {
		if p.off+format.FileOff(p.count) <= off || p.off >= off+format.FileOff(count) {
			kept = append(kept, p)
		}
	}
	m.pending = kept
	return nil
}

func (m *Mem) Dirty(daddr format.Daddr) { m.dirty[daddr] = true }

func (m *Mem) Mapped() ([][2]format.FileOff, error) {
	if !m.sortOK {
		m.sorted = m.sorted[:0]
		for o := range m.blocks {
			m.sorted = append(m.sorted, o)
		}
		sort.Slice(m.sorted, func(i, j int) bool { return m.sorted[i] < m.sorted[j] })
		m.sortOK = true
	}
	out := [][2]format.FileOff{}
	for _, o := range m.sorted {
		if n := len(out); n > 0 && out[n-1][1] == o {
			out[n-1][1]++
		} else {
			out = append(out, [2]format.FileOff{o, o + 1})
		}
	}
	return out, nil
}
