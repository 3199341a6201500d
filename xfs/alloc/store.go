package alloc

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

// store gives a btree the blocks of one tree through a transaction.
type store struct {
	tx   *trans.Tx
	ops  *trans.Ops
	tree *btree.Tree
	size int
	src  BlockSource
	fns  funcSource // src, for NewStore
}

// A BlockSource gives a tree its new blocks and takes back the ones it
// frees, inside the transaction of the tree's store.
type BlockSource interface {
	AllocBlock(near uint64) (uint64, error)
	FreeBlock(ptr uint64) error
}

// funcSource is a BlockSource of two functions.
type funcSource struct {
	alloc func(near uint64) (uint64, error)
	free  func(ptr uint64) error
}

func (f *funcSource) AllocBlock(near uint64) (uint64, error) { return f.alloc(near) }
func (f *funcSource) FreeBlock(ptr uint64) error             { return f.free(ptr) }

// NewStore returns the block store of tree inside transaction tx. Where
// new blocks come from is the owner's business: alloc and free are
// supplied per tree (the AGFL for free-space trees, the AG's free space
// for inode trees, free space near the inode for the bmbt).
func NewStore(tx *trans.Tx, s *Space, tree *btree.Tree, alloc func(near uint64) (uint64, error), free func(ptr uint64) error) btree.Store {
	st := &store{tx: tx, ops: s.TreeOps(tree), tree: tree, size: s.geo.BlockSize, fns: funcSource{alloc, free}}
	st.src = &st.fns
	return st
}

// NewStoreFrom is NewStore with the blocks from src: an owner that keeps
// its trees in a value of its own makes no function values for them.
func NewStoreFrom(tx *trans.Tx, s *Space, tree *btree.Tree, src BlockSource) btree.Store {
	return &store{tx: tx, ops: s.TreeOps(tree), tree: tree, size: s.geo.BlockSize, src: src}
}

// Read views the block: most blocks a lookup passes through stay as they
// are, and a copy of each would be garbage at once.
func (s *store) Read(ptr uint64) (btree.Block, error) {
	d := s.tree.Daddr(ptr)
	b, err := s.tx.View(d, s.size, s.ops)
	if err != nil {
		return nil, err
	}
	return &treeBlock{ptr: ptr, daddr: d, data: b}, nil
}

func (s *store) Alloc(near uint64) (btree.Block, error) {
	ptr, err := s.src.AllocBlock(near)
	if err != nil {
		return nil, err
	}
	d := s.tree.Daddr(ptr)
	b, err := s.tx.Get(d, s.size, s.ops)
	if err != nil {
		return nil, err
	}
	return &treeBlock{ptr: ptr, daddr: d, data: b}, nil
}

func (s *store) Free(b btree.Block) error {
	tb := b.(*treeBlock)
	s.tx.Forget(tb.daddr)
	return s.src.FreeBlock(tb.ptr)
}

// Modify trades the view for the transaction's private copy.
func (s *store) Modify(b btree.Block) error {
	tb := b.(*treeBlock)
	data, err := s.tx.Read(tb.daddr, s.size, s.ops)
	if err != nil {
		return err
	}
	tb.data = data
	return nil
}

func (s *store) Dirty(b btree.Block) { s.tx.Dirty(b.(*treeBlock).daddr) }

// treeOpsKey names the verifier of one tree's blocks: the kind and the
// owner decide what a valid block looks like.
type treeOpsKey struct {
	kind  *btree.Kind
	ag    format.AgNumber
	owner format.Ino
}

// TreeOps returns buffer ops that verify a block of tree on read and set
// its CRC on write; one value per tree kind and owner, so the cache sees
// the same ops for a block whoever reads it.
func (s *Space) TreeOps(tree *btree.Tree) *trans.Ops {
	key := treeOpsKey{tree.Kind, tree.AG, tree.Ino}
	if ops, ok := s.treeOps.Load(key); ok {
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
	actual, _ := s.treeOps.LoadOrStore(key, ops)
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
