package ialloc

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Inodes is the inode allocator of one writable volume.
type Inodes struct {
	geo     *format.Geometry // immutable
	read    CopyReader       // committed headers, for choosing an AG
	alignMt uint32           // sb_inoalignmt; immutable
	limit   uint64           // the imax_pct limit in inodes (0: none); immutable
	// refcountAsk is each AG's refcount btree reservation at its most
	// (alloc.RefcountAsk); immutable.
	refcountAsk []uint32
	// icount and ifree are the volume's in-core superblock counters,
	// updated when a transaction commits.
	icount, ifree *atomic.Int64

	// dirRotor spreads new directories across AGs; per volume, so that
	// a volume's layout does not depend on what else the process did.
	dirRotor atomic.Uint32

	unlinkedMu sync.Mutex                    // guards unlinked
	unlinked   map[format.AgNumber]*Unlinked // see Unlinked

	// agiOps and agfOps are each AG's AGI and AGF ops, one value per
	// volume (see alloc.Space's header ops); immutable.
	agiOps, agfOps []*trans.Ops
}

// CopyReader copies len(dst) bytes at off of a block's committed content
// into dst, outside any transaction (trans.Cache.ReadCopy). A reader that
// keeps nothing of a version lets the cache recycle it: the AGI, read for
// every allocation, changes with nearly each.
type CopyReader func(d format.Daddr, size int, ops *trans.Ops, off int, dst []byte) error

// New returns the inode allocator of the volume whose superblock is sb.
// icount and ifree are the in-core counters it keeps up to date.
func New(g *format.Geometry, sb *format.Superblock, read CopyReader, icount, ifree *atomic.Int64) *Inodes {
	in := &Inodes{geo: g, read: read, alignMt: max(sb.InoAlignMt, 1), limit: MaxInodes(g, sb.IMaxPct),
		icount: icount, ifree: ifree, unlinked: make(map[format.AgNumber]*Unlinked)}
	in.agiOps, in.agfOps = make([]*trans.Ops, g.AgCount), make([]*trans.Ops, g.AgCount)
	in.refcountAsk = make([]uint32, g.AgCount)
	logAG, _ := g.FsbToAg(sb.LogStart)
	for ag := range in.agiOps {
		in.agiOps[ag], in.agfOps[ag] = AgiOps(g, format.AgNumber(ag)), alloc.AgfOps(g, format.AgNumber(ag))
		var log uint32
		if format.AgNumber(ag) == logAG {
			log = sb.LogBlocks
		}
		in.refcountAsk[ag] = alloc.RefcountAsk(g, format.AgNumber(ag), log)
	}
	return in
}

// opsOf returns AG ag's AGI ops.
func (in *Inodes) opsOf(ag format.AgNumber) *trans.Ops {
	if int(ag) < len(in.agiOps) {
		return in.agiOps[ag]
	}
	return AgiOps(in.geo, ag) // an AG past the end fails its check on read
}

// committedAGI returns AG ag's AGI as last committed, copied out.
func (in *Inodes) committedAGI(ag format.AgNumber) (agi format.Agi, err error) {
	d := in.geo.AgHeaderDaddr(ag, 2)
	var raw [format.AgiLen]byte
	if err := in.read(d, in.geo.SectSize, in.opsOf(ag), 0, raw[:]); err != nil {
		return agi, locateAgi(err, ag, d)
	}
	err = format.DecodeAgiInto(raw[:], &agi)
	return agi, err
}

// committedAGF returns AG ag's AGF as last committed, copied out.
func (in *Inodes) committedAGF(ag format.AgNumber) (agf format.Agf, err error) {
	d := in.geo.AgHeaderDaddr(ag, 1)
	var ops *trans.Ops
	if int(ag) < len(in.agfOps) {
		ops = in.agfOps[ag]
	} else {
		ops = alloc.AgfOps(in.geo, ag) // an AG past the end fails its check on read
	}
	var raw [format.AgfLen]byte
	if err := in.read(d, in.geo.SectSize, ops, 0, raw[:]); err != nil {
		return agf, format.Located(err, fmt.Sprintf("AG %d AGF (daddr %d)", ag, d))
	}
	err = format.DecodeAgfInto(raw[:], &agf)
	return agf, err
}

// MaxInodes is the imax_pct limit in inodes (0: none).
func MaxInodes(g *format.Geometry, imaxPct uint8) uint64 {
	if imaxPct == 0 {
		return 0
	}
	return g.DBlocks * uint64(imaxPct) / 100 << g.InoPBLog
}

// Tx is one transaction's view of the inode allocator. It is used by the
// transaction's goroutine only.
type Tx struct {
	*alloc.Tx
	in   *Inodes
	agis []*AGI // the AGIs the transaction holds, in the order taken
}

// Begin starts the inode allocator's view of the transaction whose free
// space view is t.
func (in *Inodes) Begin(t *alloc.Tx) *Tx {
	it := new(Tx)
	in.BeginIn(it, t)
	return it
}

// BeginIn is Begin into it, which the caller keeps in a value of its
// own: one allocation less a transaction.
func (in *Inodes) BeginIn(it *Tx, t *alloc.Tx) { *it = Tx{Tx: t, in: in} }

// AGI is a transaction's locked view of one AG's inode header. Every
// field is owned by the transaction.
type AGI struct {
	t          *Tx
	ag         format.AgNumber
	daddr      format.Daddr
	buf        []byte      // the transaction's copy of the AGI sector
	h          *format.Agi // decoded buf (&hdr); log() encodes it back
	hdr        format.Agi
	agf        *alloc.AG    // the same AG's free space, locked on first need
	inodeTrees [2]inodeTree // the inobt and the finobt, set up on first use
}

// AgiOps verifies AG ag's AGI on read and sets its CRC on write.
func AgiOps(g *format.Geometry, ag format.AgNumber) *trans.Ops {
	return &trans.Ops{Name: "AGI", Finish: func(b []byte) { format.SetCRC(b, format.AgiCRCOff) },
		Verify: func(b []byte, _ format.Daddr) error {
			_, err := format.VerifyAgi(g, ag, b)
			return err
		}}
}

func locateAgi(err error, ag format.AgNumber, d format.Daddr) error {
	return format.Located(err, fmt.Sprintf("AG %d AGI (daddr %d)", ag, d))
}

// Committed reads AG ag's AGI as last committed, without locking it: for
// counters and hints that tolerate a change racing with them.
func Committed(read alloc.Reader, g *format.Geometry, ag format.AgNumber) (*format.Agi, error) {
	d := g.AgHeaderDaddr(ag, 2)
	b, err := read(d, g.SectSize, AgiOps(g, ag))
	if err != nil {
		return nil, locateAgi(err, ag, d)
	}
	return format.DecodeAgi(b)
}

// Lock locks AG ag's AGI for the transaction (once; later calls return
// the same view).
func (t *Tx) Lock(ag format.AgNumber) (*AGI, error) {
	if a := t.held(ag); a != nil {
		return a, nil
	}
	if t.Space.IsSick(ag) {
		return nil, fmt.Errorf("AG %d: %w", ag, format.ErrSick)
	}
	g := t.Geo()
	d := g.AgHeaderDaddr(ag, 2)
	buf, err := t.Read(d, g.SectSize, t.in.opsOf(ag))
	if err != nil {
		return nil, locateAgi(err, ag, d)
	}
	a := &AGI{t: t, ag: ag, daddr: d, buf: buf}
	if err := format.DecodeAgiInto(buf, &a.hdr); err != nil {
		return nil, err
	}
	a.h = &a.hdr
	t.agis = append(t.agis, a)
	return a, nil
}

// held returns AG ag's AGI if the transaction holds it (a transaction
// holds one or two).
func (t *Tx) held(ag format.AgNumber) *AGI {
	for _, a := range t.agis {
		if a.ag == ag {
			return a
		}
	}
	return nil
}

func (a *AGI) log() {
	a.h.Encode(a.buf)
	a.t.Dirty(a.daddr)
}

// freeSpace locks the AG's AGF: after its AGI, as the lock order says.
func (a *AGI) freeSpace() (*alloc.AG, error) {
	if a.agf == nil {
		agf, err := a.t.Tx.Lock(a.ag)
		if err != nil {
			return nil, err
		}
		a.agf = agf
	}
	return a.agf, nil
}

// Tree returns the inobt (free false) or the finobt (free true). Their
// blocks are ordinary allocations from the AG, counted in agi_iblocks and
// agi_fblocks.
func (a *AGI) Tree(free bool) *btree.Tree {
	i := 0
	if free {
		i = 1
	}
	it := &a.inodeTrees[i]
	if it.a == nil {
		it.init(a, free)
	}
	return &it.tr
}

// inodeTree is one of an AGI's inode trees in a transaction: its root
// changes go straight to the AGI, so one value serves the whole
// transaction, and it is the source of the tree's blocks.
type inodeTree struct {
	a    *AGI
	free bool
	tr   btree.Tree
}

func (it *inodeTree) init(a *AGI, free bool) {
	it.a, it.free = a, free
	kind := btree.Inobt
	if free {
		kind = btree.Finobt
	}
	root, levels, _ := it.counts()
	it.tr = btree.Tree{Kind: kind, Geo: a.t.Geo(), AG: a.ag, Root: uint64(*root), Levels: int(*levels)}
	it.tr.Store = alloc.NewStoreFrom(a.t.Tx.Tx, a.t.Space, &it.tr, it)
	it.tr.RootChanged = it.rootChanged
}

// counts returns the AGI's fields for the tree: its root, its height
// and its block count.
func (it *inodeTree) counts() (root *format.AgBlock, levels, blocks *uint32) {
	h := it.a.h
	if it.free {
		return &h.FreeRoot, &h.FreeLevel, &h.FBlocks
	}
	return &h.Root, &h.Level, &h.IBlocks
}

func (it *inodeTree) rootChanged() {
	root, levels, _ := it.counts()
	*root, *levels = format.AgBlock(it.tr.Root), uint32(it.tr.Levels)
	it.a.log()
}

// AllocBlock takes a block near near from the AG's free space.
func (it *inodeTree) AllocBlock(near uint64) (uint64, error) {
	a := it.a
	agf, err := a.freeSpace()
	if err != nil {
		return 0, err
	}
	bno, _, err := agf.Alloc(alloc.Request{MinLen: 1, MaxLen: 1, Goal: format.AgBlock(near)})
	if err != nil {
		return 0, err
	}
	if err := a.t.Use(1); err != nil {
		return 0, err
	}
	if a.t.Geo().InobtCount {
		_, _, blocks := it.counts()
		*blocks++
		a.log()
	}
	return uint64(bno), nil
}

// FreeBlock gives a tree block back to the AG's free space.
func (it *inodeTree) FreeBlock(ptr uint64) error {
	a := it.a
	agf, err := a.freeSpace()
	if err != nil {
		return err
	}
	if err := agf.Free(format.AgBlock(ptr), 1); err != nil {
		return err
	}
	a.t.Freed(1)
	if a.t.Geo().InobtCount {
		_, _, blocks := it.counts()
		*blocks--
		a.log()
	}
	return nil
}

// trees lists the inode trees to keep in step: the inobt, and the finobt
// when the filesystem has one.
func (a *AGI) trees() []bool {
	if a.t.Geo().Finobt {
		return []bool{false, true}
	}
	return []bool{false}
}

func encodeRec(r format.InobtRec) []byte {
	b := make([]byte, 16)
	r.Encode(b)
	return b
}

func decodeRec(c *btree.Cursor) format.InobtRec {
	rec, _ := c.View()
	return format.DecodeInobtRec(rec)
}

// CommittedChunks returns every inode chunk record of AG ag as last
// committed, in inode order: for walks over every inode of a volume no
// one else is changing (quotacheck at open).
func CommittedChunks(read alloc.Reader, g *format.Geometry, ag format.AgNumber) ([]format.InobtRec, error) {
	agi, err := Committed(read, g, ag)
	if err != nil {
		return nil, err
	}
	tr := &btree.Tree{Kind: btree.Inobt, Geo: g, AG: ag, Root: uint64(agi.Root), Levels: int(agi.Level)}
	tr.Store = &btree.ReadOnly{Tree: tr, Fetch: func(ptr uint64) ([]byte, error) {
		return read(g.AgbToDaddr(ag, format.AgBlock(ptr)), g.BlockSize, nil)
	}}
	c := tr.NewCursor()
	var recs []format.InobtRec
	ok, err := c.First()
	for ; ok && err == nil; ok, err = c.Increment() {
		recs = append(recs, decodeRec(c))
	}
	if err != nil {
		return nil, fmt.Errorf("AG %d inobt: %w", ag, err)
	}
	return recs, nil
}
