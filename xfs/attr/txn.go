package attr

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// op is one attribute operation on one fork: it remembers every da block
// it has read or created so that each block is read at most once, and all
// changes made during the operation land in the same private copy.
type op struct {
	r     fork.Reader
	w     Fork // nil for reads
	g     *format.Geometry
	bs    int
	owner format.Ino
	ops   *blockOps
	blks  map[uint32]*dablk
	// mapping caches Mapped() between the operation's own allocations
	// and frees (nil: ask the fork).
	mapping [][2]format.FileOff
}

// dablk is a da block (leaf or node) held by an operation.
type dablk struct {
	no    uint32 // attribute fork block number
	b     []byte
	daddr format.Daddr
}

func newOp(r fork.Reader) *op {
	g := r.Geometry()
	o := &op{r: r, g: g, bs: g.BlockSize, owner: r.Owner(), ops: newBlockOps(g, r.Owner()), blks: map[uint32]*dablk{}}
	if w, ok := r.(Fork); ok {
		o.w = w
	}
	return o
}

// read returns da block no, verified.
func (o *op) read(no uint32) (*dablk, error) {
	if d, ok := o.blks[no]; ok {
		return d, nil
	}
	b, daddr, err := o.r.Read(format.FileOff(no), 1, &o.ops.da)
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("attr block %d", no))
	}
	if len(b) != o.bs {
		return nil, fmt.Errorf("attr block %d: read %d bytes, want %d", no, len(b), o.bs)
	}
	d := &dablk{no, b, daddr}
	o.blks[no] = d
	return d, nil
}

// dirty marks a held block as changed.
func (o *op) dirty(d *dablk) { o.w.Dirty(d.daddr) }

// grow is xfs_da_grow_inode: map a new block at the first hole of the
// fork and return it zeroed (to be formatted by the caller).
func (o *op) grow() (*dablk, error) {
	no, err := o.firstUnused(1)
	if err != nil {
		return nil, err
	}
	b, daddr, err := o.alloc(no, &o.ops.da)
	if err != nil {
		return nil, err
	}
	d := &dablk{uint32(no), b, daddr}
	o.blks[d.no] = d
	o.w.Dirty(daddr)
	return d, nil
}

// shrink is xfs_da_shrink_inode: unmap and free da block no.
func (o *op) shrink(no uint32) error {
	delete(o.blks, no)
	return o.free(format.FileOff(no))
}

// alloc maps one block and free unmaps one; both forget the cached
// mapping.
func (o *op) alloc(no format.FileOff, ops *trans.Ops) ([]byte, format.Daddr, error) {
	o.mapping = nil
	return o.w.Alloc(no, 1, ops)
}

func (o *op) free(no format.FileOff) error {
	o.mapping = nil
	return o.w.Free(no, 1)
}

// firstUnused is xfs_bmap_first_unused from offset 0: the lowest hole of
// at least n blocks, or the first block past the last mapping.
func (o *op) firstUnused(n int) (format.FileOff, error) {
	if o.r.Format() == format.FmtLocal {
		return 0, nil
	}
	ranges, err := o.mapped()
	if err != nil {
		return 0, err
	}
	var hi format.FileOff
	for _, r := range ranges {
		if r[0] >= format.FileOff(n) && r[0]-hi >= format.FileOff(n) {
			break
		}
		hi = max(hi, r[1])
	}
	return hi, nil
}

// mapped returns the fork's mapped block ranges.
func (o *op) mapped() ([][2]format.FileOff, error) {
	if o.r.Format() == format.FmtLocal {
		return nil, nil
	}
	if o.mapping == nil {
		m, err := o.r.Mapped()
		if err != nil {
			return nil, err
		}
		o.mapping = append(m, [2]format.FileOff{}) // never nil once asked
		o.mapping = o.mapping[:len(m)]
	}
	return o.mapping, nil
}

// isLeaf is xfs_attr_is_leaf: the fork maps exactly block 0.
func (o *op) isLeaf() (bool, error) {
	m, err := o.mapped()
	if err != nil {
		return false, err
	}
	return len(m) == 1 && m[0] == [2]format.FileOff{0, 1}, nil
}

// isShortform is xfs_attr_is_shortform: a local fork, or an extents fork
// without blocks (a fork just created, or one emptied during a replace).
func (o *op) isShortform() (bool, error) {
	if o.r.Format() == format.FmtLocal {
		return true, nil
	}
	m, err := o.mapped()
	return err == nil && len(m) == 0, err
}
