package xfs

import (
	"context"
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/attr"
	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/ialloc"
	"github.com/xfs3/xfs3/xfs/quota"
	"github.com/xfs3/xfs3/xfs/refcount"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Scrub. A pass walks the volume's metadata with the verifiers, AG by
// AG: the AGF, AGFL, free-space btrees and refcount btree under the AGF
// (one batch), the AGI and inode btrees under the AGI (one batch), then
// the AG's in-use inodes in inode-btree order, each under its own lock
// taken shared: its core, the extent maps (and bmbt blocks) of both
// forks, a directory's blocks and an xattr fork's blocks. Blocks come
// through the same verified read paths as every other read, and what
// fails verification is marked sick as any read would mark it (health.go),
// so a scrub finds damage before a client does. A batch holds at most one
// AG header or one inode at a time, in a transaction of its own that
// changes nothing (cancelled before the batch returns): readers and
// writers go on meanwhile, and no lock or transaction outlives a batch.
// The cursor is plain data; a caller may keep it anywhere and resume.

// ScrubPhase is the step of an AG a scrub cursor is at.
type ScrubPhase uint8

// The steps of one AG, in order.
const (
	ScrubFreeSpace  ScrubPhase = iota // AGF, AGFL, bnobt, cntbt, refcountbt
	ScrubInodeTrees                   // AGI, inobt, finobt
	ScrubInodes                       // the AG's in-use inodes, from Ino on
)

func (p ScrubPhase) String() string {
	switch p {
	case ScrubFreeSpace:
		return "free-space"
	case ScrubInodeTrees:
		return "inode-trees"
	case ScrubInodes:
		return "inodes"
	}
	return fmt.Sprintf("phase-%d", p)
}

// ScrubCursor is where a scrub pass stands. The zero value starts a pass.
type ScrubCursor struct {
	AG    format.AgNumber `json:"ag"`
	Phase ScrubPhase      `json:"phase"`
	// Ino is the next inode to check in the ScrubInodes phase (0: the
	// AG's first).
	Ino format.Ino `json:"ino,omitempty"`
	// Done: the pass has covered every AG.
	Done bool `json:"done,omitempty"`
}

// ScrubCounts count what scrub batches checked.
type ScrubCounts struct {
	AGHeaders int64 `json:"ag_headers"` // AGF, AGFL and AGI sectors
	Blocks    int64 `json:"blocks"`     // btree, directory and xattr blocks
	Inodes    int64 `json:"inodes"`     // in-use inodes
	Damaged   int64 `json:"damaged"`    // structures found sick (Damage)
}

// Add adds o to c.
func (c *ScrubCounts) Add(o ScrubCounts) {
	c.AGHeaders += o.AGHeaders
	c.Blocks += o.Blocks
	c.Inodes += o.Inodes
	c.Damaged += o.Damaged
}

// ScrubBatch is what one Scrub call did.
type ScrubBatch struct {
	ScrubCounts
	// Damage lists the structures the batch found sick: marked by it, or
	// marked before (then not walked again).
	Damage []SickStructure
	// Next is where the next batch starts; Next.Done ends the pass.
	Next ScrubCursor
}

// DefaultScrubBudget is the work of a batch when Scrub is given none:
// blocks plus inodes checked.
const DefaultScrubBudget = 256

// Scrub checks the next part of the volume's metadata from cursor on and
// returns the counters and the cursor after it. budget bounds the blocks
// and inodes a batch checks (0: DefaultScrubBudget); an AG's trees and an
// inode are checked whole, so a batch may overrun it by one of those.
// Damage does not fail the call: it is marked sick and listed in the
// batch. An error (an I/O error, ctx done, a closed volume) leaves the
// cursor where the batch stopped, so a retry resumes there.
func (v Space) Scrub(ctx context.Context, cursor ScrubCursor, budget int) (ScrubBatch, error) {
	if budget <= 0 {
		budget = DefaultScrubBudget
	}
	b := ScrubBatch{Next: cursor}
	s := &scrubber{m: v.mount, b: &b}
	for !b.Next.Done && int(b.Blocks+b.Inodes) < budget {
		if err := ctx.Err(); err != nil {
			return b, err
		}
		if v.w != nil {
			if err := v.cache.Err(); err != nil {
				return b, err
			}
		}
		c := &b.Next
		if uint64(c.AG) >= uint64(v.geo.AgCount) {
			*c = ScrubCursor{Done: true}
			break
		}
		if s.sickAG(c.AG) {
			// Listed once a pass; its trees and inodes are not walked
			// again until xfs_repair has mended it.
			*c = ScrubCursor{AG: c.AG + 1}
			continue
		}
		var err error
		switch c.Phase {
		case ScrubFreeSpace:
			err = s.freeSpace(c.AG)
			if err == nil {
				c.Phase = ScrubInodeTrees
			}
		case ScrubInodeTrees:
			err = s.inodeTrees(c.AG)
			if err == nil {
				c.Phase, c.Ino = ScrubInodes, 0
			}
		default:
			var done bool
			done, err = s.inodes(ctx, c, budget)
			if err == nil && done {
				*c = ScrubCursor{AG: c.AG + 1}
			}
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// scrubber is one Scrub call's state.
type scrubber struct {
	m *mount
	b *ScrubBatch
}

// damage sorts out err from checking a structure: a verification failure
// marks what it belongs to sick (inode ino, or else AG ag, whose header
// at d stands for blocks that do not know their own address) and is
// listed; a refusal because it is sick already is listed too; anything
// else is the caller's error.
func (s *scrubber) damage(err error, ino format.Ino, ag format.AgNumber, d format.Daddr) error {
	if err == nil {
		return nil
	}
	var ce *format.CorruptError
	switch {
	case errors.As(err, &ce):
		if ino == 0 && ce.Ino == 0 {
			err = format.AtDaddr(err, d)
		}
		s.m.markSick(err, ino)
	case errors.Is(err, ErrSick):
	default:
		return err
	}
	if ino == 0 && ce != nil {
		ino = ce.Ino
	}
	if st, ok := s.m.sickStructure(ino, ag); ok {
		s.b.Damage = append(s.b.Damage, st)
		s.b.Damaged++
	}
	return nil
}

// sickStructure returns the mark of inode ino (ino != 0) or of AG ag.
func (v *mount) sickStructure(ino format.Ino, ag format.AgNumber) (SickStructure, bool) {
	if ino != 0 {
		return v.sickInode(ino)
	}
	v.health.mu.Lock()
	defer v.health.mu.Unlock()
	st, ok := v.health.ags[ag]
	return st, ok
}

// sickAG reports whether AG ag is marked sick, listing it when it is
// and the cursor is at the AG's start (so once a pass).
func (s *scrubber) sickAG(ag format.AgNumber) bool {
	st, ok := s.m.sickStructure(0, ag)
	if ok && s.b.Next.Phase == ScrubFreeSpace {
		s.b.Damage = append(s.b.Damage, st)
		s.b.Damaged++
	}
	return ok
}

// lockAG holds AG ag's AGF (agi false) or AGI (agi true) in a
// transaction that changes nothing, so that its trees hold still while
// they are read; on a read-only volume nothing changes and nothing is
// locked. The returned function cancels the transaction.
func (s *scrubber) lockAG(ag format.AgNumber, agi bool) (func(), error) {
	if s.m.w == nil {
		return func() {}, nil
	}
	t, err := s.m.begin(0)
	if err != nil {
		return nil, err
	}
	if agi {
		_, err = t.ialloc.Lock(ag)
	} else {
		_, err = t.alloc.Lock(ag)
	}
	if err != nil {
		t.Cancel()
		return nil, err
	}
	return t.Cancel, nil
}

// committedTree returns a short-form tree of AG ag read through the
// buffer cache (committed blocks, verified as every reader verifies
// them).
func (s *scrubber) committedTree(kind *btree.Kind, ag format.AgNumber, root format.AgBlock, levels uint32) *btree.Tree {
	g := &s.m.geo
	bt := btree.NewAGTree(kind, g, ag, root, levels, nil)
	ops := &trans.Ops{
		Name: kind.Shape.Name,
		Verify: func(b []byte, d format.Daddr) error {
			bno := format.AgBlock((uint64(d) >> (g.BlockLog - format.BBShift)) % uint64(g.AgBlocks))
			return bt.VerifyBlock(uint64(bno), b)
		},
		Finish: func(b []byte) { kind.Finalize(b, 0) },
	}
	bt.Store = &btree.ReadOnly{Tree: bt, Fetch: func(ptr uint64) ([]byte, error) {
		return s.m.readCommitted(bt.Daddr(ptr), g.BlockSize, ops)
	}}
	return bt
}

// freeSpace checks AG ag's AGF, AGFL, free-space btrees and refcount
// btree, and that the AGF's counters agree with the trees.
func (s *scrubber) freeSpace(ag format.AgNumber) error {
	g := &s.m.geo
	d := g.AgHeaderDaddr(ag, 1)
	unlock, err := s.lockAG(ag, false)
	if err != nil {
		return s.damage(err, 0, ag, d)
	}
	defer unlock()
	return s.damage(s.checkFreeSpace(ag), 0, ag, d)
}

func (s *scrubber) checkFreeSpace(ag format.AgNumber) error {
	g := &s.m.geo
	agf, err := alloc.Committed(s.m.readCommitted, g, ag)
	if err != nil {
		return err
	}
	s.b.AGHeaders++
	where := fmt.Sprintf("AG %d AGF", ag)
	// The AGFL: a ring whose active part holds flcount blocks.
	fd := g.AgHeaderDaddr(ag, 3)
	fb, err := s.m.readCommitted(fd, g.SectSize, &trans.Ops{Name: "AGFL",
		Finish: func(b []byte) { format.SetCRC(b, format.AgflCRCOff) },
		Verify: func(b []byte, _ format.Daddr) error {
			_, err := format.VerifyAgfl(g, ag, b)
			return err
		}})
	if err != nil {
		return format.Located(err, fmt.Sprintf("AG %d AGFL (daddr %d)", ag, fd))
	}
	s.b.AGHeaders++
	fl, err := format.DecodeAgfl(fb)
	if err != nil {
		return err
	}
	size := uint32(len(fl.Bno))
	if agf.FlCount > 0 {
		if agf.FlFirst >= size || agf.FlLast >= size {
			return format.Corrupt("AGF", where, "free list slots %d..%d outside the %d-slot AGFL", agf.FlFirst, agf.FlLast, size)
		}
		active := (agf.FlLast+size-agf.FlFirst)%size + 1
		if active != agf.FlCount {
			return format.Corrupt("AGF", where, "free list %d..%d holds %d blocks, flcount says %d", agf.FlFirst, agf.FlLast, active, agf.FlCount)
		}
		for i, n := agf.FlFirst, uint32(0); n < agf.FlCount; i, n = (i+1)%size, n+1 {
			if b := fl.Bno[i]; b == format.NullAgBlock || !g.ValidAgBlock(ag, b) {
				return format.AtDaddr(format.Corrupt("AGFL", fmt.Sprintf("AG %d AGFL", ag), "slot %d holds block %d", i, b), fd)
			}
		}
	}
	// The free-space trees hold the same extents, summing to freeblks,
	// the longest being longest; their blocks but the roots are btreeblks.
	var sums [2]struct{ blocks, n, longest uint64 }
	nonRoot := 0
	for i, kind := range []*btree.Kind{btree.Bnobt, btree.Cntbt} {
		which := format.BtBno
		if i == 1 {
			which = format.BtCnt
		}
		tr := s.committedTree(kind, ag, agf.Roots[which], agf.Levels[which])
		sum := &sums[i]
		st, err := tr.Check(func(rec []byte) error {
			r := format.DecodeAllocRec(rec)
			if r.BlockCount == 0 || !g.ValidAgBlock(ag, r.StartBlock) ||
				uint64(r.StartBlock)+uint64(r.BlockCount) > uint64(g.AgSize(ag)) {
				return format.Corrupt(kind.Shape.Name, fmt.Sprintf("AG %d", ag), "free extent %d+%d outside the AG", r.StartBlock, r.BlockCount)
			}
			sum.blocks += uint64(r.BlockCount)
			sum.n++
			sum.longest = max(sum.longest, uint64(r.BlockCount))
			return nil
		})
		s.b.Blocks += int64(st.Blocks)
		if err != nil {
			return err
		}
		nonRoot += st.Blocks - 1
	}
	switch {
	case sums[0] != sums[1]:
		return format.Corrupt("AGF", where, "bnobt and cntbt differ: %d extents of %d blocks, %d of %d", sums[0].n, sums[0].blocks, sums[1].n, sums[1].blocks)
	case sums[0].blocks != uint64(agf.FreeBlks):
		return format.Corrupt("AGF", where, "freeblks %d, the free-space trees hold %d", agf.FreeBlks, sums[0].blocks)
	case sums[0].longest != uint64(agf.Longest):
		return format.Corrupt("AGF", where, "longest %d, the longest free extent is %d", agf.Longest, sums[0].longest)
	case !g.Rmapbt && uint64(nonRoot) != uint64(agf.BtreeBlks):
		return format.Corrupt("AGF", where, "btreeblks %d, the free-space trees have %d blocks besides their roots", agf.BtreeBlks, nonRoot)
	}
	if !g.Reflink {
		return nil
	}
	rt, err := refcount.Committed(s.m.readCommitted, g, ag)
	if err != nil {
		return err
	}
	if _, err := rt.Check(); err != nil {
		return err
	}
	s.b.Blocks += int64(agf.RefcountBlocks) // Check held them to the tree
	return nil
}

// inodeTrees checks AG ag's AGI and inode btrees, and that the AGI's
// counters agree with them.
func (s *scrubber) inodeTrees(ag format.AgNumber) error {
	g := &s.m.geo
	d := g.AgHeaderDaddr(ag, 2)
	unlock, err := s.lockAG(ag, true)
	if err != nil {
		return s.damage(err, 0, ag, d)
	}
	defer unlock()
	return s.damage(s.checkInodeTrees(ag), 0, ag, d)
}

func (s *scrubber) checkInodeTrees(ag format.AgNumber) error {
	g := &s.m.geo
	agi, err := ialloc.Committed(s.m.readCommitted, g, ag)
	if err != nil {
		return err
	}
	s.b.AGHeaders++
	where := fmt.Sprintf("AG %d AGI", ag)
	var count, free uint64
	withFree := map[format.AgIno]bool{}
	check := func(rec format.InobtRec) error {
		if rec.StartIno%format.InodesPerChunk != 0 || rec.Count > format.InodesPerChunk || rec.FreeCount > rec.Count {
			return format.Corrupt("inobt", fmt.Sprintf("AG %d", ag), "bad record at inode %d (count %d, free %d)", rec.StartIno, rec.Count, rec.FreeCount)
		}
		return nil
	}
	tr := s.committedTree(btree.Inobt, ag, agi.Root, agi.Level)
	st, err := tr.Check(func(b []byte) error {
		rec := format.DecodeInobtRec(b)
		if err := check(rec); err != nil {
			return err
		}
		count += uint64(rec.Count)
		free += uint64(rec.FreeCount)
		if rec.FreeCount > 0 {
			withFree[rec.StartIno] = true
		}
		return nil
	})
	s.b.Blocks += int64(st.Blocks)
	if err != nil {
		return err
	}
	if count != uint64(agi.Count) || free != uint64(agi.FreeCount) {
		return format.Corrupt("AGI", where, "count %d, free %d; the inobt holds %d, %d free", agi.Count, agi.FreeCount, count, free)
	}
	if g.InobtCount && uint64(st.Blocks) != uint64(agi.IBlocks) {
		return format.Corrupt("AGI", where, "iblocks %d, the inobt has %d", agi.IBlocks, st.Blocks)
	}
	if !g.Finobt {
		return nil
	}
	ft := s.committedTree(btree.Finobt, ag, agi.FreeRoot, agi.FreeLevel)
	n := 0
	st, err = ft.Check(func(b []byte) error {
		rec := format.DecodeInobtRec(b)
		if err := check(rec); err != nil {
			return err
		}
		if rec.FreeCount == 0 || !withFree[rec.StartIno] {
			return format.Corrupt("finobt", fmt.Sprintf("AG %d", ag), "chunk at inode %d is not a chunk with free inodes in the inobt", rec.StartIno)
		}
		n++
		return nil
	})
	s.b.Blocks += int64(st.Blocks)
	if err != nil {
		return err
	}
	if n != len(withFree) {
		return format.Corrupt("finobt", fmt.Sprintf("AG %d", ag), "holds %d chunks, the inobt has %d with free inodes", n, len(withFree))
	}
	if g.InobtCount && uint64(st.Blocks) != uint64(agi.FBlocks) {
		return format.Corrupt("AGI", where, "fblocks %d, the finobt has %d", agi.FBlocks, st.Blocks)
	}
	return nil
}

// inodes checks the in-use inodes of cursor c's AG from c.Ino on until
// the batch's budget is spent; done when the AG has no more.
func (s *scrubber) inodes(ctx context.Context, c *ScrubCursor, budget int) (done bool, err error) {
	ag := c.AG
	inos, more, err := s.nextInodes(ag, c.Ino, budget-int(s.b.Blocks+s.b.Inodes))
	if err != nil {
		return false, s.damage(err, 0, ag, s.m.geo.AgHeaderDaddr(ag, 2))
	}
	for _, ino := range inos {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if int(s.b.Blocks+s.b.Inodes) >= budget {
			return false, nil
		}
		if err := s.inode(ino); err != nil {
			return false, err
		}
		c.Ino = ino + 1
	}
	return !more, nil
}

// nextInodes lists up to n in-use inodes of AG ag from inode from on, in
// inode-btree order, under the AGI; more when the tree holds others past
// them.
func (s *scrubber) nextInodes(ag format.AgNumber, from format.Ino, n int) (inos []format.Ino, more bool, err error) {
	g := &s.m.geo
	n = max(n, 1)
	unlock, err := s.lockAG(ag, true)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	agi, err := ialloc.Committed(s.m.readCommitted, g, ag)
	if err != nil {
		return nil, false, err
	}
	var start format.AgIno
	if from != 0 {
		fag, agino := g.InoToAg(from)
		if fag != ag {
			return nil, false, nil
		}
		start = agino
	}
	tr := s.committedTree(btree.Inobt, ag, agi.Root, agi.Level)
	cur := tr.NewCursor()
	key := make([]byte, 16)
	format.InobtRec{StartIno: start &^ (format.InodesPerChunk - 1)}.Encode(key)
	ok, err := cur.Lookup(btree.GE, key)
	for ; ok && err == nil; ok, err = cur.Increment() {
		b, _ := cur.Get()
		rec := format.DecodeInobtRec(b)
		for i := 0; i < format.InodesPerChunk; i++ {
			agino := rec.StartIno + format.AgIno(i)
			hole := rec.HoleMask&(1<<(i/(format.InodesPerChunk/16))) != 0
			if agino < start || hole || rec.Free&(1<<i) != 0 {
				continue
			}
			if len(inos) == n {
				return inos, true, nil
			}
			inos = append(inos, g.AgInoToIno(ag, agino))
		}
	}
	return inos, false, err
}

// inode checks one inode, under its lock taken shared (lock order rule
// 2; no transaction is open): its core as on disk, both forks' extent
// maps and bmbt blocks, and a directory's or xattr fork's blocks.
func (s *scrubber) inode(ino format.Ino) error {
	if st, ok := s.m.sickInode(ino); ok {
		s.b.Damage = append(s.b.Damage, st)
		s.b.Damaged++
		return nil
	}
	v := s.m
	h := v.icache.hold(ino)
	h.lock.RLock()
	defer func() {
		h.lock.RUnlock()
		v.icache.release(h)
	}()
	// The core is read again from its cluster buffer: a cached inode
	// would hide a damaged copy.
	fresh, err := v.readInode(ino)
	if err != nil {
		return s.damage(err, ino, 0, 0)
	}
	if fresh.core.Mode == 0 {
		return nil // freed since the inode btree was read
	}
	s.b.Inodes++
	ip := h.cur.Load()
	if ip == nil {
		h.cur.CompareAndSwap(nil, fresh)
		ip = h.cur.Load()
	}
	for _, f := range []Fork{DataFork, AttrFork} {
		if f == AttrFork && ip.core.ForkOff == 0 {
			continue
		}
		if err := s.forkMap(ip, f); err != nil {
			return s.damage(format.Located(err, fmt.Sprintf("inode %d %v", ino, f)), ino, 0, 0)
		}
	}
	if ip.isDir() {
		s.b.Blocks += s.mappedBlocks(ip, DataFork)
		if err := dir.Check(readFork{v: v, ip: ip}); err != nil {
			return s.damage(format.Located(err, fmt.Sprintf("inode %d", ino)), ino, 0, 0)
		}
	}
	if ip.core.ForkOff != 0 {
		s.b.Blocks += s.mappedBlocks(ip, AttrFork)
		if err := attr.Check(attrReadFork{readFork{v: v, ip: ip}}); err != nil {
			return s.damage(format.Located(err, fmt.Sprintf("inode %d %v", ino, AttrFork)), ino, 0, 0)
		}
	}
	if ino == v.sb.PQuotIno && validQuotaIno(v.sb) {
		return s.quotaFile()
	}
	return nil
}

// quotaFile checks every block of the project quota file with the dquot
// verifier; a damaged block marks its projects sick (markQuotaSick).
func (s *scrubber) quotaFile() error {
	q := s.m.quotas()
	live := q.liveQuota()
	ops := quota.NewManager(&s.m.geo, false).Ops()
	if live != nil {
		ops = live.Ops()
	}
	return q.eachDquotBlock(ops, func(fb uint64, _ []byte, _ format.Daddr, err error) error {
		s.b.Blocks++
		if err == nil {
			return nil
		}
		s.m.markQuotaSick(live, fb, err)
		s.m.health.mu.Lock()
		st := s.m.health.quota[fb]
		s.m.health.mu.Unlock()
		s.b.Damage = append(s.b.Damage, st)
		s.b.Damaged++
		return nil
	})
}

// forkMap checks fork f's extent map as loadExtents does, counting the
// bmbt blocks of a btree fork, read afresh.
func (s *scrubber) forkMap(ip *inode, f Fork) error {
	v := s.m
	if ip.format(f) != format.FmtBtree {
		_, err := v.loadExtents(ip, f)
		return err
	}
	fork := ip.fork(f)
	root, err := format.DecodeBmdrRoot(fork)
	if err != nil {
		return err
	}
	tr := btree.NewInodeTree(&v.geo, ip.ino, root, len(fork), nil)
	tr.Store = &btree.ReadOnly{Tree: tr, Fetch: func(ptr uint64) ([]byte, error) {
		return v.readFsb(format.FsBlock(ptr), 1)
	}}
	var ext []format.Extent
	st, err := tr.Check(func(rec []byte) error {
		ext = append(ext, format.DecodeExtent(rec))
		return nil
	})
	s.b.Blocks += int64(st.Blocks)
	if err != nil {
		return err
	}
	if n := ip.nextents(f); uint64(len(ext)) != n {
		return format.Corrupt("bmbt", "", "tree holds %d extents, inode says %d", len(ext), n)
	}
	return v.checkExtents(ext)
}

// mappedBlocks counts the blocks mapped by a metadata fork (a
// directory's data fork, an xattr fork); 0 when its map is unreadable,
// which the fork's check reports.
func (s *scrubber) mappedBlocks(ip *inode, f Fork) int64 {
	if ip.format(f) != format.FmtExtents && ip.format(f) != format.FmtBtree {
		return 0
	}
	ext, err := s.m.extents(ip, f)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ext {
		n += int64(e.BlockCount)
	}
	return n
}
