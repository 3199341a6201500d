package btree

import "errors"

// errReadOnlyStore: a read-only Store was asked for a change.
var errReadOnlyStore = errors.New("btree: change through a read-only store")

// ReadOnly is a Store for walking committed blocks outside any
// transaction (an inode's extent map loaded for reads): Fetch gets a
// block's bytes, Read verifies them with the tree's VerifyBlock, and
// changes are refused.
type ReadOnly struct {
	Tree  *Tree
	Fetch func(ptr uint64) ([]byte, error)
}

type readBlock struct {
	ptr uint64
	b   []byte
}

func (r readBlock) Ptr() uint64   { return r.ptr }
func (r readBlock) Bytes() []byte { return r.b }

func (s *ReadOnly) Read(ptr uint64) (Block, error) {
	b, err := s.Fetch(ptr)
	if err != nil {
		return nil, err
	}
	if err := s.Tree.VerifyBlock(ptr, b); err != nil {
		return nil, err
	}
	return readBlock{ptr, b}, nil
}

func (s *ReadOnly) Alloc(uint64) (Block, error) { return nil, errReadOnlyStore }
func (s *ReadOnly) Free(Block) error            { return errReadOnlyStore }
func (s *ReadOnly) Modify(Block) error          { return errReadOnlyStore }

// Dirty is never called by walks (Check, lookups); a change would be a
// programming error that cannot be reported through Dirty's signature.
func (s *ReadOnly) Dirty(Block) { panic(errReadOnlyStore) }
