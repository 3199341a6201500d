package ialloc

import (
	"sync/atomic"
	"testing"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/trans/transtest"
)

// harness is a volume open through a log-less cache, with its
// allocators.
type harness struct {
	*transtest.Image
	t             testing.TB
	space         *alloc.Space
	inodes        *Inodes
	icount, ifree atomic.Int64
}

func newHarness(t testing.TB, size int64, o mkfs.Options) *harness {
	t.Helper()
	h := &harness{Image: transtest.New(t, size, o), t: t}
	h.space = alloc.NewSpace(&h.Geo, h.Cache.Busy())
	h.inodes = New(&h.Geo, h.Sb, h.Cache.ReadCopy, &h.icount, &h.ifree)
	count, free := h.agiCounts()
	h.icount.Store(int64(count))
	h.ifree.Store(int64(free))
	return h
}

func (h *harness) begin() *Tx {
	h.t.Helper()
	tx, err := h.Cache.Begin()
	if err != nil {
		h.t.Fatal(err)
	}
	return h.inodes.Begin(h.space.Begin(tx, transtest.NoReservation{}))
}

func (h *harness) commit(tx *Tx) {
	h.t.Helper()
	if err := tx.Commit(); err != nil {
		h.t.Fatal(err)
	}
}

// agiCounts sums agi_count and agi_freecount over the committed AGIs.
func (h *harness) agiCounts() (count, free uint64) {
	h.t.Helper()
	for ag := format.AgNumber(0); ag < format.AgNumber(h.Geo.AgCount); ag++ {
		agi, err := Committed(h.Cache.Read, &h.Geo, ag)
		if err != nil {
			h.t.Fatal(err)
		}
		count += uint64(agi.Count)
		free += uint64(agi.FreeCount)
	}
	return count, free
}

// setInode rewrites inode ino in its chunk block inside tx: in use as an
// empty regular file, or free.
func (h *harness) setInode(tx *Tx, ino format.Ino, inUse bool) {
	h.t.Helper()
	g := &h.Geo
	ag, agino := g.InoToAg(ino)
	bno, slot := g.AgInoToAgBlock(agino)
	d := g.AgbToDaddr(ag, bno)
	b, err := tx.Read(d, g.BlockSize, BufOps)
	if err != nil {
		h.t.Fatal(err)
	}
	raw := b[slot*g.InodeSize : (slot+1)*g.InodeSize]
	core, err := format.VerifyInode(g, ino, raw)
	if err != nil {
		h.t.Fatal(err)
	}
	if inUse != (core.Mode == 0) {
		h.t.Fatalf("inode %d has mode %#o before it is set in use %v", ino, core.Mode, inUse)
	}
	if inUse {
		core.Mode, core.Nlink, core.Format = format.SIFREG|0o644, 1, format.FmtExtents
	} else {
		*core = *FreeInodeCore(g, ino)
	}
	core.Encode(raw)
	format.SetCRC(raw, format.InodeCRCOff)
	tx.Dirty(d)
}

// writeCounters stores the AG headers' totals in the superblock, as the
// engine does at close, so that xfs_repair finds them consistent.
func (h *harness) writeCounters() {
	h.t.Helper()
	var fdblocks uint64
	for ag := format.AgNumber(0); ag < format.AgNumber(h.Geo.AgCount); ag++ {
		agf, err := alloc.Committed(h.Cache.Read, &h.Geo, ag)
		if err != nil {
			h.t.Fatal(err)
		}
		fdblocks += uint64(agf.FreeBlks) + uint64(agf.FlCount) + uint64(agf.BtreeBlks)
	}
	sb := *h.Sb
	sb.ICount, sb.IFree = h.agiCounts()
	sb.FDBlocks = fdblocks
	sector := make([]byte, h.Geo.SectSize)
	if _, err := h.Dev.ReadAt(sector, 0); err != nil {
		h.t.Fatal(err)
	}
	sb.Encode(sector)
	format.SetCRC(sector, format.SbCRCOff)
	if _, err := h.Dev.WriteAt(sector, 0); err != nil {
		h.t.Fatal(err)
	}
	if err := h.Cache.Sync(); err != nil {
		h.t.Fatal(err)
	}
}
