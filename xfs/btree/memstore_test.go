package btree

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// errInjected is the failure the store injects.
var errInjected = errors.New("injected failure")

type memBlock struct {
	ptr uint64
	buf []byte
}

func (b *memBlock) Ptr() uint64   { return b.ptr }
func (b *memBlock) Bytes() []byte { return b.buf }

// memStore is a Store over a map: one "transaction" runs from commit to
// commit. Blocks untouched since the last commit are verified on Read,
// CRC included, as a buffer cache reading from disk would; commit
// finalizes (sets the CRC of) every dirty block. Like the engine's
// store, it hands out blocks read-only until Modify: a block changed or
// dirtied without Modify is reported in bad at commit.
type memStore struct {
	t      *Tree
	bs     int
	blocks map[uint64]*memBlock
	dirty  map[uint64]bool
	own    map[uint64]bool   // allocated or modified in this transaction
	seen   map[uint64][]byte // blocks read but not own: as they were read
	rng    *rand.Rand
	lo, hi uint64 // Alloc picks pointers in [lo, hi)

	// Fault injection: the Nth call from now (1 = the next) fails.
	failAlloc, failRead, failFree int
	// Sanity: calls that hand in blocks the store does not know.
	bad []string
}

func newMemStore(g *format.Geometry, rng *rand.Rand, lo, hi uint64) *memStore {
	return &memStore{bs: g.BlockSize, blocks: map[uint64]*memBlock{}, dirty: map[uint64]bool{}, own: map[uint64]bool{}, seen: map[uint64][]byte{}, rng: rng, lo: lo, hi: hi}
}

func countdown(n *int) bool {
	if *n <= 0 {
		return false
	}
	*n--
	return *n == 0
}

func (s *memStore) Read(ptr uint64) (Block, error) {
	if countdown(&s.failRead) {
		return nil, fmt.Errorf("read %d: %w", ptr, errInjected)
	}
	b, ok := s.blocks[ptr]
	if !ok {
		// What a disk would return there is not a block of this tree.
		return nil, format.Corrupt("test block", fmt.Sprint(ptr), "read of a block the tree does not own")
	}
	if !s.dirty[ptr] {
		if err := s.t.VerifyBlock(ptr, b.buf); err != nil {
			return nil, err
		}
	}
	if _, ok := s.seen[ptr]; !ok && !s.own[ptr] {
		s.seen[ptr] = bytes.Clone(b.buf)
	}
	return b, nil
}

func (s *memStore) Modify(b Block) error {
	if s.blocks[b.Ptr()] != b {
		s.bad = append(s.bad, fmt.Sprintf("modify of unknown block %d", b.Ptr()))
	}
	s.own[b.Ptr()] = true
	return nil
}

func (s *memStore) Alloc(near uint64) (Block, error) {
	if countdown(&s.failAlloc) {
		return nil, fmt.Errorf("alloc near %d: %w", near, errInjected)
	}
	for {
		p := s.lo + uint64(s.rng.Int63n(int64(s.hi-s.lo)))
		if _, used := s.blocks[p]; used {
			continue
		}
		b := &memBlock{ptr: p, buf: make([]byte, s.bs)}
		s.blocks[p] = b
		s.dirty[p] = true
		s.own[p] = true
		return b, nil
	}
}

func (s *memStore) Free(b Block) error {
	if countdown(&s.failFree) {
		return fmt.Errorf("free %d: %w", b.Ptr(), errInjected)
	}
	if s.blocks[b.Ptr()] != b {
		s.bad = append(s.bad, fmt.Sprintf("free of unknown block %d", b.Ptr()))
	}
	delete(s.blocks, b.Ptr())
	delete(s.dirty, b.Ptr())
	return nil
}

func (s *memStore) Dirty(b Block) {
	if s.blocks[b.Ptr()] != b {
		s.bad = append(s.bad, fmt.Sprintf("dirty of unknown block %d", b.Ptr()))
		return
	}
	if !s.own[b.Ptr()] {
		s.bad = append(s.bad, fmt.Sprintf("dirty of block %d without Modify", b.Ptr()))
	}
	s.dirty[b.Ptr()] = true
}

// commit ends the transaction: dirty blocks get their CRC.
func (s *memStore) commit() {
	for p := range s.dirty {
		s.t.Kind.Finalize(s.blocks[p].buf, 0)
	}
	clear(s.dirty)
	s.checkViews()
}

// checkViews reports blocks changed without Modify, and starts the next
// transaction's views.
func (s *memStore) checkViews() {
	for p, was := range s.seen {
		if b, ok := s.blocks[p]; ok && !s.own[p] && !bytes.Equal(b.buf, was) {
			s.bad = append(s.bad, fmt.Sprintf("block %d changed without Modify", p))
		}
	}
	clear(s.seen)
	clear(s.own)
}

// snapshot copies every block (and the dirty set) for a later restore.
type storeSnap struct {
	blocks map[uint64][]byte
	dirty  map[uint64]bool
}

func (s *memStore) snapshot() storeSnap {
	sn := storeSnap{blocks: map[uint64][]byte{}, dirty: map[uint64]bool{}}
	for p, b := range s.blocks {
		sn.blocks[p] = bytes.Clone(b.buf)
	}
	for p := range s.dirty {
		sn.dirty[p] = true
	}
	return sn
}

// restore cancels the transaction back to a snapshot.
func (s *memStore) restore(sn storeSnap) {
	s.blocks = map[uint64]*memBlock{}
	for p, b := range sn.blocks {
		s.blocks[p] = &memBlock{ptr: p, buf: bytes.Clone(b)}
	}
	s.dirty = map[uint64]bool{}
	for p := range sn.dirty {
		s.dirty[p] = true
	}
	clear(s.seen)
	clear(s.own)
}

// testGeo is a small filesystem geometry with the given block size: 4 AGs
// of 65536 blocks.
func testGeo(blockSize int) *format.Geometry {
	g := &format.Geometry{
		BlockSize: blockSize, BlockLog: uint(bits.TrailingZeros(uint(blockSize))),
		SectSize: 512, InodeSize: 512, InodeLog: 9,
		InoPBlock: blockSize / 512, InoPBLog: uint(bits.TrailingZeros(uint(blockSize / 512))),
		AgBlocks: 1 << 16, AgBlkLog: 16, AgCount: 4, DBlocks: 4 << 16,
	}
	copy(g.UUID[:], "xfs3 btree tests")
	return g
}

// newAGTree makes an empty short-form tree in AG 1: one empty root leaf,
// as mkfs leaves it.
func newAGTree(t testing.TB, k *Kind, g *format.Geometry, rng *rand.Rand) (*Tree, *memStore) {
	t.Helper()
	s := newMemStore(g, rng, 1, uint64(g.AgBlocks))
	tr := &Tree{Kind: k, Geo: g, Store: s, AG: 1, Levels: 1}
	s.t = tr
	b, err := s.Alloc(0)
	if err != nil {
		t.Fatal(err)
	}
	tr.Root = b.Ptr()
	tr.initBlock(b.Bytes(), b.Ptr(), 0, 0)
	s.commit()
	return tr, s
}

// newInodeTree makes an inode-rooted tree for inode 1000 whose fork is in
// extents format (no root yet); blocks come from AG 2.
func newInodeTree(k *Kind, g *format.Geometry, rng *rand.Rand, forkSize int) (*Tree, *memStore) {
	s := newMemStore(g, rng, uint64(2)<<g.AgBlkLog+1, uint64(3)<<g.AgBlkLog)
	tr := &Tree{Kind: k, Geo: g, Store: s, Ino: 1000, ForkSize: forkSize}
	s.t = tr
	return tr, s
}
