package refcount

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
)

// memBlock is a tree block held in memory.
type memBlock struct {
	ptr uint64
	buf []byte
}

func (b *memBlock) Ptr() uint64   { return b.ptr }
func (b *memBlock) Bytes() []byte { return b.buf }

// memStore keeps a tree's blocks in a map, one "transaction" from commit
// to commit: blocks untouched since the last commit are verified (CRC
// included) on Read, as from a disk; commit sets the CRC of the dirty
// ones. It counts the tree's blocks in hdr as an AGF would, and takes
// new blocks lowest first from [lo, hi).
type memStore struct {
	bt     *btree.Tree
	hdr    *format.Agf
	blocks map[uint64]*memBlock
	dirty  map[uint64]bool
	lo, hi uint64
}

func (s *memStore) Read(ptr uint64) (btree.Block, error) {
	b, ok := s.blocks[ptr]
	if !ok {
		return nil, format.Corrupt("test block", fmt.Sprint(ptr), "not a block of the tree")
	}
	if !s.dirty[ptr] {
		if err := s.bt.VerifyBlock(ptr, b.buf); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (s *memStore) Alloc(uint64) (btree.Block, error) {
	for p := s.lo; p < s.hi; p++ {
		if _, used := s.blocks[p]; !used {
			b := &memBlock{ptr: p, buf: make([]byte, s.bt.Geo.BlockSize)}
			s.blocks[p] = b
			s.dirty[p] = true
			s.hdr.RefcountBlocks++
			return b, nil
		}
	}
	return nil, fmt.Errorf("test store: %w", format.ErrNoSpace)
}

func (s *memStore) Free(b btree.Block) error {
	delete(s.blocks, b.Ptr())
	delete(s.dirty, b.Ptr())
	s.hdr.RefcountBlocks--
	return nil
}

func (s *memStore) Modify(btree.Block) error { return nil }
func (s *memStore) Dirty(b btree.Block)      { s.dirty[b.Ptr()] = true }

func (s *memStore) commit() {
	for p := range s.dirty {
		s.bt.Kind.Finalize(s.blocks[p].buf, 0)
	}
	clear(s.dirty)
}

// memGeo is a geometry of 4 AGs of 65536 blocks of blockSize bytes.
func memGeo(blockSize int) *format.Geometry {
	g := &format.Geometry{
		BlockSize: blockSize, BlockLog: uint(bits.TrailingZeros(uint(blockSize))),
		SectSize: 512, InodeSize: 512, InodeLog: 9,
		InoPBlock: blockSize / 512, InoPBLog: uint(bits.TrailingZeros(uint(blockSize / 512))),
		AgBlocks: 1 << 16, AgBlkLog: 16, AgCount: 4, DBlocks: 4 << 16, Reflink: true,
	}
	copy(g.UUID[:], "xfs3 refcount ts")
	return g
}

// memAG is the AG of in-memory trees; their blocks come from the top of
// it, above memTreeLo, and data blocks stay below.
const (
	memAG     = 1
	memTreeLo = 50000
)

// newMemTree makes an empty refcount tree in memory (one empty root
// leaf, as mkfs leaves it) with blocks of blockSize bytes.
func newMemTree(t testing.TB, blockSize int) (*Tree, *memStore) {
	t.Helper()
	g := memGeo(blockSize)
	hdr := &format.Agf{}
	s := &memStore{hdr: hdr, blocks: map[uint64]*memBlock{}, dirty: map[uint64]bool{}, lo: memTreeLo, hi: uint64(g.AgBlocks)}
	bt := btree.NewAGTree(btree.Refcountbt, g, memAG, 0, 1, s)
	s.bt = bt
	root, err := s.Alloc(0)
	if err != nil {
		t.Fatal(err)
	}
	(&format.BtreeBlock{Magic: format.RefcountMagic, LeftSib: uint64(format.NullAgBlock), RightSib: uint64(format.NullAgBlock),
		Blkno: bt.Daddr(root.Ptr()), UUID: g.UUID, Owner: memAG}).Encode(root.Bytes())
	bt.Root = root.Ptr()
	hdr.RefcountRoot, hdr.RefcountLevel = format.AgBlock(bt.Root), 1
	bt.RootChanged = func() { hdr.RefcountRoot, hdr.RefcountLevel = bt.AGRoot() }
	s.commit()
	return &Tree{bt: bt, geo: g, ag: memAG, hdr: hdr}, s
}

// records returns every record of the tree, failing the test on error.
func records(t testing.TB, tr *Tree) []Rec {
	t.Helper()
	var out []Rec
	if err := tr.Walk(func(r Rec) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}
