package xfs

import (
	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// treeBlock is a btree.Block held by a transaction.
type treeBlock struct {
	ptr   uint64
	daddr format.Daddr
	data  []byte
}

func (b *treeBlock) Ptr() uint64   { return b.ptr }
func (b *treeBlock) Bytes() []byte { return b.data }

// treeStore gives a btree the blocks of one tree through a transaction.
// Where new blocks come from is the allocator's business: alloc and free
// are supplied per tree (the AGFL for free-space trees, the AG's free
// space for inode trees, free space near the inode for the bmbt).
type treeStore struct {
	t     *txn
	tree  *btree.Tree
	alloc func(near uint64) (uint64, error)
	free  func(ptr uint64) error
}

func (s *treeStore) Read(ptr uint64) (btree.Block, error) {
	d := s.tree.Daddr(ptr)
	b, err := s.t.Read(d, s.t.v.geo.BlockSize, s.t.v.treeOps(s.tree, ptr))
	if err != nil {
		return nil, err
	}
	return &treeBlock{ptr: ptr, daddr: d, data: b}, nil
}

func (s *treeStore) Alloc(near uint64) (btree.Block, error) {
	ptr, err := s.alloc(near)
	if err != nil {
		return nil, err
	}
	d := s.tree.Daddr(ptr)
	b, err := s.t.Get(d, s.t.v.geo.BlockSize, s.t.v.treeOps(s.tree, ptr))
	if err != nil {
		return nil, err
	}
	return &treeBlock{ptr: ptr, daddr: d, data: b}, nil
}

func (s *treeStore) Free(b btree.Block) error {
	tb := b.(*treeBlock)
	s.t.Forget(tb.daddr)
	return s.free(tb.ptr)
}

func (s *treeStore) Dirty(b btree.Block) { s.t.Dirty(b.(*treeBlock).daddr) }

// treeOpsKey names the verifier of one tree's blocks: the kind and the
// owner decide what a valid block looks like.
type treeOpsKey struct {
	kind  *btree.Kind
	ag    format.AgNumber
	owner format.Ino
}

// treeOps returns buffer ops that verify a block of tree on read and set
// its CRC on write.
func (v *Volume) treeOps(tree *btree.Tree, _ uint64) *trans.Ops {
	key := treeOpsKey{tree.Kind, tree.AG, tree.Ino}
	if ops, ok := v.w.treeOps.Load(key); ok {
		return ops.(*trans.Ops)
	}
	kind, geo, ag, ino := tree.Kind, tree.Geo, tree.AG, tree.Ino
	ops := &trans.Ops{
		Name: kind.Shape.Name,
		Verify: func(b []byte, d format.Daddr) error {
			t := btree.Tree{Kind: kind, Geo: geo, AG: ag, Ino: ino}
			return t.VerifyBlock(daddrToPtr(geo, kind, d), b)
		},
		Finish: func(b []byte) { kind.Finalize(b, 0) },
	}
	actual, _ := v.w.treeOps.LoadOrStore(key, ops)
	return actual.(*trans.Ops)
}

// daddrToPtr converts a disk address back to the pointer form of a tree.
func daddrToPtr(g *format.Geometry, k *btree.Kind, d format.Daddr) uint64 {
	bb := uint64(d) >> (g.BlockLog - format.BBShift)
	ag := bb / uint64(g.AgBlocks)
	bno := bb % uint64(g.AgBlocks)
	if k.Shape.Long {
		return uint64(g.AgToFsb(format.AgNumber(ag), format.AgBlock(bno)))
	}
	return bno
}
