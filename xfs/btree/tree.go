package btree

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

// Errors a cursor returns for misuse; corruption is a *format.CorruptError.
var (
	// ErrExists: Insert found a record with the same key.
	ErrExists = errors.New("btree: a record with this key exists")
	// ErrNoRecord: the cursor does not point at a record.
	ErrNoRecord = errors.New("btree: cursor is not on a record")
	// ErrKeyOrder: Insert or Update would put a record out of key order.
	ErrKeyOrder = errors.New("btree: record out of key order")
	// ErrPosition: Insert needs a cursor placed where a record can go.
	ErrPosition = errors.New("btree: cursor is not at an insert position")
	// ErrNoTree: an inode-rooted tree has no root (the fork is in extents format).
	ErrNoTree = errors.New("btree: fork has no btree root")
	// ErrTooTall: the tree would grow beyond format.MaxBtreeLevels.
	ErrTooTall = errors.New("btree: tree would grow too tall")
)

// Block is one tree block as the transaction holds it.
type Block interface {
	// Ptr is the block's address as tree pointers write it: an AG block
	// number for short-form trees, a filesystem block number for the bmbt.
	Ptr() uint64
	// Bytes is the whole block (Geometry.BlockSize bytes). The cursor
	// changes it in place and then calls Store.Dirty.
	Bytes() []byte
}

// Store gives cursors the blocks of one tree inside one transaction. It is
// the caller's buffer layer and allocator; the tree package keeps no state
// of its own beyond a cursor.
//
// Read may hand out bytes shared with readers outside the transaction
// (read-only); Modify then gives the block's bytes to change, and every
// later Read of the block in the transaction hands out those same bytes,
// so that a change made through one Block is seen by every later Read.
// The cursor calls Modify for every block an operation may change before
// it changes it. A block that comes from disk must have passed
// Tree.VerifyBlock (CRC and header) before Read returns it; blocks already
// changed in the transaction are not re-verified (their CRC is stale until
// Kind.Finalize). The cursor checks each block's header again on every Read.
//
// Errors from any method are returned to the caller unchanged. The tree
// may then be half changed: the caller cancels the transaction, which
// discards every block passed to Dirty, Alloc and Free; the Tree's root
// fields are restored by the cursor and RootChanged is not called.
type Store interface {
	// Read returns the block at ptr.
	Read(ptr uint64) (Block, error)
	// Alloc returns a new block filled with zeros. near is the block the
	// kernel would use as the allocation hint (the block being split, the
	// old root, the inode root's first child); where the block goes is the
	// caller's decision. Counting tree blocks (agf_btreeblks, agi_iblocks,
	// agi_fblocks, di_nblocks) is the caller's job too.
	Alloc(near uint64) (Block, error)
	// Free releases a block the tree no longer uses.
	Free(b Block) error
	// Modify makes b's bytes its own to change (Bytes returns them
	// afterwards); Dirty follows once they have changed.
	Modify(b Block) error
	// Dirty records that b's bytes changed.
	Dirty(b Block)
}

// Tree is one B+tree: its kind, where it lives, and its root. A Tree value
// describes the tree inside one transaction; the caller builds it from the
// AGF/AGI or the inode, and reads the root fields back after changes.
type Tree struct {
	Kind  *Kind
	Geo   *format.Geometry
	Store Store

	// AG is the allocation group of a short-form tree: the owner stamped
	// in its blocks and the AG its pointers are relative to.
	AG format.AgNumber
	// Ino owns the blocks of an inode-rooted tree (the bmbt).
	Ino format.Ino

	// Root and Levels locate a short-form tree's root block and give its
	// height (agf_roots/agf_levels, agi_root/agi_level,
	// agi_free_root/agi_free_level).
	Root   uint64
	Levels int

	// IRoot is the root of an inode-rooted tree as decoded from the fork
	// (nil while the fork is in extents format), and ForkSize is the number
	// of fork bytes it may fill: its capacity is format.BmdrMaxRecs(ForkSize).
	IRoot    *format.BmdrRoot
	ForkSize int

	// RootChanged, if set, is called at the end of a successful operation
	// that changed Root/Levels or IRoot, so that the caller logs the AG
	// header or re-encodes the root into the inode fork.
	RootChanged func()
}

// NewAGTree describes the short-form tree of kind k in AG ag whose root
// block and height come from the AGF (agf_roots/agf_levels) or the AGI
// (agi_root/agi_level, agi_free_root/agi_free_level).
func NewAGTree(k *Kind, g *format.Geometry, ag format.AgNumber, root format.AgBlock, levels uint32, s Store) *Tree {
	return &Tree{Kind: k, Geo: g, Store: s, AG: ag, Root: uint64(root), Levels: int(levels)}
}

// NewInodeTree describes the bmbt of a fork of inode ino that has size
// bytes; root is the decoded fork root, nil while the fork is in extents
// format.
func NewInodeTree(g *format.Geometry, ino format.Ino, root *format.BmdrRoot, size int, s Store) *Tree {
	return &Tree{Kind: Bmbt, Geo: g, Store: s, Ino: ino, IRoot: root, ForkSize: size}
}

// AGRoot returns a short-form tree's root block and height as the AG
// headers store them.
func (t *Tree) AGRoot() (format.AgBlock, uint32) { return format.AgBlock(t.Root), uint32(t.Levels) }

// Height returns the number of levels of the tree, counting an inode root
// as a level; 0 for an inode fork without a btree.
func (t *Tree) Height() int {
	if t.Kind.inodeRooted() {
		if t.IRoot == nil {
			return 0
		}
		return int(t.IRoot.Level) + 1
	}
	return t.Levels
}

// Daddr returns the disk address of the block at ptr.
func (t *Tree) Daddr(ptr uint64) format.Daddr {
	if t.Kind.Shape.Long {
		return t.Geo.FsbToDaddr(format.FsBlock(ptr))
	}
	return t.Geo.AgbToDaddr(t.AG, format.AgBlock(ptr))
}

// owner is the value blocks carry in bb_owner.
func (t *Tree) owner() uint64 {
	if t.Kind.Shape.Long {
		return uint64(t.Ino)
	}
	return uint64(t.AG)
}

// validPtr reports whether ptr may address a tree block: inside the AG (or
// the filesystem) and not AG block 0, which holds the AG headers.
func (t *Tree) validPtr(ptr uint64) bool {
	if t.Kind.Shape.Long {
		if !t.Geo.ValidFsb(format.FsBlock(ptr)) {
			return false
		}
		_, bno := t.Geo.FsbToAg(format.FsBlock(ptr))
		return bno != 0
	}
	return ptr != 0 && ptr <= uint64(^uint32(0)) && t.Geo.ValidAgBlock(t.AG, format.AgBlock(ptr))
}

// where names a block for error messages.
func (t *Tree) where(ptr uint64) string {
	if t.Kind.Shape.Long {
		return fmt.Sprintf("inode %d %s fsb %d", t.Ino, t.Kind.Shape.Name, ptr)
	}
	return fmt.Sprintf("AG %d %s agbno %d", t.AG, t.Kind.Shape.Name, ptr)
}

func (t *Tree) rootWhere() string {
	if t.Kind.Shape.Long {
		return fmt.Sprintf("inode %d %s root", t.Ino, t.Kind.Shape.Name)
	}
	return fmt.Sprintf("AG %d %s root", t.AG, t.Kind.Shape.Name)
}

func (t *Tree) corrupt(ptr uint64, format_ string, args ...any) error {
	return format.Corrupt(t.Kind.Shape.Name+" block", t.where(ptr), format_, args...)
}

// maxRecs is the capacity of a block at level.
func (t *Tree) maxRecs(level int) int { return t.Kind.Shape.MaxRecs(t.Geo.BlockSize, level == 0) }

// minRecs is the fill a block other than the root must keep.
func (t *Tree) minRecs(level int) int { return t.maxRecs(level) / 2 }

// VerifyBlock is the read verifier for a block of this tree found at ptr:
// it checks the CRC and the header (magic, UUID, own address, owner, level
// bound, record count against the block's capacity, sibling pointers).
// The buffer layer calls it when it reads the block from disk.
func (t *Tree) VerifyBlock(ptr uint64, b []byte) error {
	if len(b) != t.Geo.BlockSize {
		return t.corrupt(ptr, "%d bytes, want %d", len(b), t.Geo.BlockSize)
	}
	if !format.CRCOK(b, t.Kind.crcOff()) {
		return t.corrupt(ptr, "bad CRC")
	}
	_, err := t.checkHeader(ptr, b, -1)
	return err
}

// checkHeader checks everything VerifyBlock checks but the CRC, and the
// level when level >= 0. It returns the decoded header.
func (t *Tree) checkHeader(ptr uint64, b []byte, level int) (format.BtreeBlock, error) {
	if len(b) != t.Geo.BlockSize {
		return format.BtreeBlock{}, t.corrupt(ptr, "%d bytes, want %d", len(b), t.Geo.BlockSize)
	}
	h, err := format.DecodeBtreeBlock(b, t.Kind.Shape.Long)
	if err != nil {
		return format.BtreeBlock{}, format.Located(err, t.where(ptr))
	}
	null := t.Kind.nullPtr()
	switch {
	case h.Magic != t.Kind.Shape.Magic:
		return format.BtreeBlock{}, t.corrupt(ptr, "bad magic %#x, want %#x", h.Magic, t.Kind.Shape.Magic)
	case !bytes.Equal(h.UUID[:], t.Geo.UUID[:]):
		return format.BtreeBlock{}, t.corrupt(ptr, "UUID does not match the superblock")
	case h.Blkno != t.Daddr(ptr):
		return format.BtreeBlock{}, t.corrupt(ptr, "block claims to live at daddr %d, not %d", h.Blkno, t.Daddr(ptr))
	case h.Owner != t.owner():
		return format.BtreeBlock{}, t.corrupt(ptr, "owner %d, want %d", h.Owner, t.owner())
	case int(h.Level) >= format.MaxBtreeLevels:
		return format.BtreeBlock{}, t.corrupt(ptr, "level %d too deep", h.Level)
	case level >= 0 && int(h.Level) != level:
		return format.BtreeBlock{}, t.corrupt(ptr, "level %d, want %d", h.Level, level)
	case int(h.NumRecs) > t.maxRecs(int(h.Level)):
		return format.BtreeBlock{}, t.corrupt(ptr, "%d records exceed the capacity %d", h.NumRecs, t.maxRecs(int(h.Level)))
	case h.LeftSib != null && (!t.validPtr(h.LeftSib) || h.LeftSib == ptr):
		return format.BtreeBlock{}, t.corrupt(ptr, "bad siblings: left sibling %d is not another block of the tree", h.LeftSib)
	case h.RightSib != null && (!t.validPtr(h.RightSib) || h.RightSib == ptr):
		return format.BtreeBlock{}, t.corrupt(ptr, "bad siblings: right sibling %d is not another block of the tree", h.RightSib)
	case h.LeftSib != null && h.LeftSib == h.RightSib:
		return format.BtreeBlock{}, t.corrupt(ptr, "left and right siblings are both %d", h.LeftSib)
	}
	return h, nil
}

// initBlock writes a fresh v5 header: no siblings, lsn 0, CRC left for
// Kind.Finalize.
func (t *Tree) initBlock(b []byte, ptr uint64, level, numrecs int) {
	h := format.BtreeBlock{
		Magic:    t.Kind.Shape.Magic,
		Level:    uint16(level),
		NumRecs:  uint16(numrecs),
		LeftSib:  t.Kind.nullPtr(),
		RightSib: t.Kind.nullPtr(),
		Blkno:    t.Daddr(ptr),
		UUID:     t.Geo.UUID,
		Owner:    t.owner(),
		Long:     t.Kind.Shape.Long,
	}
	h.Encode(b)
}

// checkRoot validates the root fields before an operation.
func (t *Tree) checkRoot() error {
	if t.Kind.inodeRooted() {
		r := t.IRoot
		if r == nil {
			return ErrNoTree
		}
		maxr := format.BmdrMaxRecs(t.ForkSize)
		switch {
		case maxr < 1:
			return fmt.Errorf("btree: fork of %d bytes cannot hold a root", t.ForkSize)
		case r.Level < 1 || int(r.Level) >= format.MaxBtreeLevels:
			return format.Corrupt("bmbt root", t.rootWhere(), "bad level %d", r.Level)
		case r.NumRecs < 1 || int(r.NumRecs) > maxr:
			return format.Corrupt("bmbt root", t.rootWhere(), "%d records, at most %d fit", r.NumRecs, maxr)
		case len(r.Keys) < int(r.NumRecs) || len(r.Ptrs) < int(r.NumRecs):
			return format.Corrupt("bmbt root", t.rootWhere(), "%d records but %d keys and %d pointers", r.NumRecs, len(r.Keys), len(r.Ptrs))
		}
		return nil
	}
	if t.Levels < 1 || t.Levels > format.MaxBtreeLevels {
		return format.Corrupt(t.Kind.Shape.Name+" root", t.rootWhere(), "bad height %d", t.Levels)
	}
	if !t.validPtr(t.Root) {
		return format.Corrupt(t.Kind.Shape.Name+" root", t.rootWhere(), "root block %d out of range", t.Root)
	}
	return nil
}
