package attr

import (
	"bytes"
	"fmt"

	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// memFork is the test implementation of Fork: a fork.Mem for the blocks
// and the local bytes, plus the inode fields an attribute fork moves.
// The data fork is only described (format and size), never stored; when
// AddFork squeezes it, it is converted the way the kernel would (extents
// to a one-record btree, local to one extent).
type memFork struct {
	*fork.Mem
	forkOff   int
	dataFmt   int8
	dataBytes int
	saved     *memFork // inode fields at Begin
	mapped    [][2]format.FileOff
	// copies are the private block copies handed out since the last
	// Commit or Cancel. Like trans.Tx, a second Read of a block returns
	// the same copy. (fork.Mem means to, but loses track of its copies
	// after a Free and then hands out a fresh copy of the committed block,
	// which Commit writes over the changed one.)
	copies map[format.FileOff]memCopy
}

type memCopy struct {
	buf   []byte
	daddr format.Daddr
}

func (m *memFork) Read(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	if c, ok := m.copies[off]; ok && count == 1 {
		return c.buf, c.daddr, nil
	}
	b, d, err := m.Mem.Read(off, count, ops)
	if err == nil && count == 1 {
		m.remember(off, b, d)
	}
	return b, d, err
}

func (m *memFork) remember(off format.FileOff, b []byte, d format.Daddr) {
	if m.copies == nil {
		m.copies = map[format.FileOff]memCopy{}
	}
	m.copies[off] = memCopy{b, d}
}

// Mapped caches fork.Mem's answer, which sorts every block each time.
func (m *memFork) Mapped() ([][2]format.FileOff, error) {
	if m.mapped == nil {
		r, err := m.Mem.Mapped()
		if err != nil {
			return nil, err
		}
		m.mapped = append(r, [2]format.FileOff{})[:len(r)]
	}
	return m.mapped, nil
}

func (m *memFork) Alloc(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	m.mapped = nil
	b, d, err := m.Mem.Alloc(off, count, ops)
	if err == nil && count == 1 {
		m.remember(off, b, d)
	}
	return b, d, err
}

func (m *memFork) Free(off format.FileOff, count int) error {
	m.mapped = nil
	for i := 0; i < count; i++ {
		delete(m.copies, off+format.FileOff(i))
	}
	return m.Mem.Free(off, count)
}

// newMemFork returns an inode without an attribute fork whose data fork
// has the given format and size.
func newMemFork(g format.Geometry, ino format.Ino, dataFmt int8, dataBytes int) *memFork {
	m := fork.NewMem(g, ino, 0)
	m.Fmt = format.FmtExtents
	return &memFork{Mem: m, dataFmt: dataFmt, dataBytes: dataBytes}
}

func (m *memFork) Begin() {
	s := *m
	s.Mem, s.saved, s.mapped, s.copies = nil, nil, nil, nil
	m.saved, m.copies = &s, nil
	m.Mem.Begin()
}

func (m *memFork) Commit() {
	m.saved, m.copies = nil, nil
	m.Mem.Commit()
}

func (m *memFork) Cancel() {
	m.mapped, m.copies = nil, nil
	if s := m.saved; s != nil {
		m.forkOff, m.dataFmt, m.dataBytes = s.forkOff, s.dataFmt, s.dataBytes
		m.setSpace()
	}
	m.saved = nil
	m.Mem.Cancel()
}

func (m *memFork) lit() int { return format.LiteralSize(m.Geo.InodeSize) }

// setSpace keeps fork.Mem's inline limit equal to the attr fork size.
func (m *memFork) setSpace() {
	if m.forkOff == 0 {
		m.Space, m.MaxSpace = 0, 0
		return
	}
	m.Space = m.lit() - m.forkOff*8
	m.MaxSpace = m.Space
}

func (m *memFork) ForkOff() int          { return m.forkOff }
func (m *memFork) DataFork() (int8, int) { return m.dataFmt, m.dataBytes }
func (m *memFork) dataFits(off int) bool { return m.dataBytes <= off*8 }

func (m *memFork) SetForkOff(off int) error {
	switch {
	case m.forkOff == 0:
		return fmt.Errorf("SetForkOff(%d) without an attribute fork", off)
	case off < 1 || off*8 > m.lit():
		return fmt.Errorf("SetForkOff(%d) outside the %d-byte literal area", off, m.lit())
	case !m.dataFits(off):
		return fmt.Errorf("SetForkOff(%d): data fork of %d bytes does not fit", off, m.dataBytes)
	case m.Mem.Fmt == format.FmtLocal && len(m.Data) > m.lit()-off*8:
		return fmt.Errorf("SetForkOff(%d): %d attr bytes do not fit", off, len(m.Data))
	}
	m.forkOff = off
	m.setSpace()
	return nil
}

func (m *memFork) AddFork(off int) error {
	if m.forkOff != 0 {
		return fmt.Errorf("AddFork with forkoff %d", m.forkOff)
	}
	if off < 1 || off*8 > m.lit() {
		return fmt.Errorf("AddFork(%d) outside the literal area", off)
	}
	if !m.dataFits(off) {
		switch m.dataFmt {
		case format.FmtExtents:
			m.dataFmt, m.dataBytes = format.FmtBtree, bmdrSpace(1)
		case format.FmtLocal:
			m.dataFmt, m.dataBytes = format.FmtExtents, format.ExtentRecSize
		default:
			return fmt.Errorf("AddFork(%d): %d-byte data fork of format %d does not fit", off, m.dataBytes, m.dataFmt)
		}
	}
	m.forkOff = off
	m.Mem.Fmt, m.Data = format.FmtExtents, nil
	m.setSpace()
	return nil
}

func (m *memFork) RemoveFork() error {
	if m.Blocks() != 0 {
		return fmt.Errorf("RemoveFork with %d blocks mapped", m.Blocks())
	}
	m.forkOff = 0
	m.Mem.Fmt, m.Data = format.FmtExtents, nil
	m.setSpace()
	return nil
}

func (m *memFork) SetInline(b []byte) error {
	if m.forkOff == 0 {
		return fmt.Errorf("SetInline without an attribute fork")
	}
	return m.Mem.SetInline(b)
}

// state is a deep copy of everything the fork holds, for comparisons.
type forkState struct {
	forkOff, dataFmt, dataBytes int
	fmt                         int8
	data                        []byte
	blocks                      map[format.FileOff][]byte
}

func (m *memFork) state() forkState {
	s := forkState{forkOff: m.forkOff, dataFmt: int(m.dataFmt), dataBytes: m.dataBytes, fmt: m.Mem.Fmt,
		data: bytes.Clone(m.Data), blocks: map[format.FileOff][]byte{}}
	ranges, _ := m.Mapped()
	for _, r := range ranges {
		for o := r[0]; o < r[1]; o++ {
			b, _, _ := m.Block(o)
			s.blocks[o] = bytes.Clone(b)
		}
	}
	return s
}

func (s forkState) equal(t forkState) bool {
	if s.forkOff != t.forkOff || s.dataFmt != t.dataFmt || s.dataBytes != t.dataBytes || s.fmt != t.fmt ||
		!bytes.Equal(s.data, t.data) || len(s.blocks) != len(t.blocks) {
		return false
	}
	for o, b := range s.blocks {
		if !bytes.Equal(b, t.blocks[o]) {
			return false
		}
	}
	return true
}
