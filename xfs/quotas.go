package xfs

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/ialloc"
	"github.com/xfs3/xfs3/xfs/quota"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Quotas is the volume's project quotas, kept in the project quota inode
// in the kernel's format, so that xfs_quota on a quota-enabled kernel
// reports the same limits and usage. Every inode is charged to the
// project in its di_projid within the transaction that allocates or
// frees its blocks or itself; a change that would pass a hard limit
// fails with ErrQuota and changes nothing. Limits of project 0 are the
// default of every project without its own. A Quotas comes from
// Volume.Quotas and is safe for many goroutines.
type Quotas struct{ *mount }

// Quotas returns the volume's project quotas.
func (v *Volume) Quotas() Quotas { return Quotas{v.mount} }

func (m *mount) quotas() Quotas { return Quotas{m} }

// Project quota: every inode is charged to the project in its di_projid,
// in the transaction that allocates or frees its blocks or itself (see
// chargeQuota), and the records live in the project quota inode in the
// kernel's format. A writable volume always keeps them: one whose flags
// say the counts cannot be trusted (made before quotas, or last mounted
// by a kernel without quota) is recounted at open (quotacheck).

// ProjectQuota is one project's limits and usage.
type ProjectQuota struct {
	ID        uint32
	Limits    quota.Limits // the project's own limits (0: the default)
	Effective quota.Limits // what is enforced: own limits, else project 0's
	Usage     quota.Usage  // blocks and inodes charged, grace timers
}

// quotaOn reports whether the superblock says project quota counts are
// kept and may be trusted.
func quotaOn(sb *format.Superblock) bool {
	return sb.QFlags&quota.FlagProjectAcct != 0 && sb.QFlags&quota.FlagProjectChecked != 0 &&
		validQuotaIno(sb)
}

func validQuotaIno(sb *format.Superblock) bool {
	return sb.PQuotIno != 0 && sb.PQuotIno != format.NullIno
}

// loadQuota reads the dquots of a volume whose counts can be trusted, so
// that every change from here on (freeing unlinked inodes included) is
// charged. Other volumes get quota in enableQuota.
func (v Quotas) loadQuota(dquotCache int) error {
	// Only project quota is kept: user and group counts would go stale,
	// so their flags go (the kernel recounts them on its next mount with
	// those options).
	v.sb.QFlags &= quota.FlagsProject
	if !quotaOn(v.sb) {
		v.sb.QFlags = 0
		return nil
	}
	m := quota.NewManager(&v.geo, v.sb.QFlags&quota.FlagProjectEnforce != 0)
	// A damaged block marks its projects sick and the open goes on: the
	// other projects are charged as ever.
	err := v.eachDquotBlock(m.Ops(), func(fb uint64, b []byte, d format.Daddr, err error) error {
		if err != nil {
			v.markQuotaSick(m, fb, err)
			return nil
		}
		addRecords(m, b, d)
		return nil
	})
	if err != nil {
		return fmt.Errorf("project quota: %w", err)
	}
	m.SetLoader(v.dquotLoader(m), dquotCache)
	v.w.quota = m
	return nil
}

// dquotLoader returns m's loader: it reads a project's record as
// committed, for a dquot evicted from memory; ok is false when the quota
// file has a hole where the record would be. It takes no lock.
func (v Quotas) dquotLoader(m *quota.Manager) quota.Loader {
	return func(id uint32) (quota.Record, format.Daddr, bool, error) { return v.loadDquot(m, id) }
}

func (v Quotas) loadDquot(m *quota.Manager, id uint32) (r quota.Record, d format.Daddr, ok bool, err error) {
	ip, err := v.iget(v.sb.PQuotIno)
	if err != nil {
		return r, 0, false, fmt.Errorf("quota inode: %w", err)
	}
	ext, err := v.extents(ip, DataFork)
	if err != nil {
		return r, 0, false, err
	}
	fb, off := quota.Locate(&v.geo, id)
	fsb, _, ok, _ := mapBlock(ext, format.FileOff(fb))
	if !ok {
		return r, 0, false, nil
	}
	d = v.geo.FsbToDaddr(fsb)
	b, err := v.readCommitted(d, v.geo.BlockSize, m.Ops())
	if err != nil {
		err = format.Located(err, fmt.Sprintf("quota file block %d", fb))
		return r, 0, false, v.markQuotaSick(m, fb, err)
	}
	return quota.Decode(b[off:]), d, true, nil
}

// eachDquotBlock calls fn with every block of the quota file, verified,
// with its file block and address. A block that fails verification is
// given to fn with its error instead (b nil), and fn decides: return the
// error to stop, nil to go on.
func (v Quotas) eachDquotBlock(ops *trans.Ops, fn func(fb uint64, b []byte, d format.Daddr, err error) error) error {
	ip, err := v.iget(v.sb.PQuotIno)
	if err != nil {
		return fmt.Errorf("quota inode: %w", err)
	}
	ext, err := v.extents(ip, DataFork)
	if err != nil {
		return err
	}
	for _, e := range ext {
		for i := uint64(0); i < e.BlockCount; i++ {
			fb := uint64(e.StartOff) + i
			d := v.geo.FsbToDaddr(e.StartBlock + format.FsBlock(i))
			b, err := v.readCommitted(d, v.geo.BlockSize, ops)
			if err != nil && !errors.Is(err, ErrCorrupt) {
				return format.Located(err, fmt.Sprintf("quota file block %d", fb))
			}
			if err != nil {
				b, err = nil, format.Located(err, fmt.Sprintf("quota file block %d", fb))
			}
			if err := fn(fb, b, d, err); err != nil {
				return err
			}
		}
	}
	return nil
}

// verifiedDquotBlocks is eachDquotBlock for callers that need every
// block sound: a damaged one stops the walk with its error.
func (v Quotas) verifiedDquotBlocks(ops *trans.Ops, fn func(b []byte, d format.Daddr) error) error {
	return v.eachDquotBlock(ops, func(_ uint64, b []byte, d format.Daddr, err error) error {
		if err != nil {
			return err
		}
		return fn(b, d)
	})
}

// addRecords puts the records of quota file block b, at d, into m.
func addRecords(m *quota.Manager, b []byte, d format.Daddr) {
	for off := 0; off+quota.RecordSize <= len(b); off += quota.RecordSize {
		m.Add(quota.Decode(b[off:]), d)
	}
}

// enableQuota gives a volume whose counts cannot be trusted a quota inode
// (if it has none) and exact counts. Until it sets the "checked" flag at
// the end, a crash leaves the flag clear and the next open starts over.
func (v Quotas) enableQuota(dquotCache int) error {
	if v.w.quota != nil {
		return nil
	}
	if !validQuotaIno(v.sb) {
		if err := v.makeQuotaInode(); err != nil {
			return fmt.Errorf("create the project quota inode: %w", err)
		}
	}
	m := quota.NewManager(&v.geo, true)
	if err := v.quotacheck(m); err != nil {
		return fmt.Errorf("quotacheck: %w", err)
	}
	v.sb.QFlags = quota.FlagsProject
	m.SetLoader(v.dquotLoader(m), dquotCache)
	v.w.quota = m
	if err := v.sync(); err != nil {
		return err
	}
	return v.cache.Force()
}

// superblockOps verifies the primary superblock sector and sets its CRC.
var superblockOps = trans.Ops{Name: "superblock",
	Finish: func(b []byte) { format.SetCRC(b, format.SbCRCOff) }}

// makeQuotaInode allocates the quota inode and points the superblock at
// it in one transaction, as the kernel does: a crash leaves either both
// or neither.
func (v Quotas) makeQuotaInode() error {
	var ino format.Ino
	err := v.runTx(v.names().createReserve(), false, func(t *txn) error {
		free, err := t.allocInode(v.sb.RootIno, false)
		if err != nil {
			return err
		}
		h := v.icache.hold(free.ino)
		c := t.track(h, free)
		t.OnCommit(func() { v.icache.release(h) })
		t.OnCancel(func() { v.icache.release(h) })
		v.initInodeCore(&c.core, newInodeAttrs{Mode: format.SIFREG, Nlink: 1, Now: time.Now()}, nil)
		clear(c.forkBytes(DataFork))
		sector, err := t.Read(0, v.geo.SectSize, &superblockOps)
		if err != nil {
			return err
		}
		sb, err := format.DecodeSuperblock(sector)
		if err != nil {
			return err
		}
		sb.PQuotIno = free.ino
		sb.VersionNum |= format.SbVersionQuotaBit
		sb.QFlags = quota.FlagProjectAcct | quota.FlagProjectEnforce
		sb.Encode(sector)
		t.Dirty(0)
		ino = free.ino
		return nil
	})
	if err != nil {
		return err
	}
	v.sb.PQuotIno = ino
	v.sb.VersionNum |= format.SbVersionQuotaBit
	v.sb.QFlags = quota.FlagProjectAcct | quota.FlagProjectEnforce
	// The superblock is written in place from v.sb from now on: the copy
	// the transaction left in the cache must never be written after it.
	if err := v.cache.Sync(); err != nil {
		return err
	}
	v.cache.Invalidate(0)
	return nil
}

// quotacheck counts every inode and its blocks by project, and rewrites
// every record with those counts (keeping limits), making records for
// projects that have none. Nothing else runs during it (open).
func (v Quotas) quotacheck(m *quota.Manager) error {
	type use struct{ blocks, inodes int64 }
	counts := map[uint32]*use{0: {}}
	g := &v.geo
	for ag := format.AgNumber(0); ag < format.AgNumber(g.AgCount); ag++ {
		chunks, err := ialloc.CommittedChunks(v.readCommitted, g, ag)
		if err != nil {
			return err
		}
		for _, r := range chunks {
			for i := 0; i < format.InodesPerChunk; i++ {
				if r.Free&(1<<i) != 0 {
					continue
				}
				ino := g.AgInoToIno(ag, r.StartIno+format.AgIno(i))
				if ino == v.sb.PQuotIno || ino == v.sb.UQuotIno || ino == v.sb.GQuotIno {
					continue
				}
				core, err := v.readInodeCore(ino)
				if err != nil {
					return err
				}
				if core.Mode == 0 {
					continue
				}
				u := counts[core.ProjID()]
				if u == nil {
					u = &use{}
					counts[core.ProjID()] = u
				}
				u.blocks += int64(core.NBlocks)
				u.inodes++
			}
		}
	}
	// Existing records keep their limits; every record gets its count.
	ids := map[uint32]bool{}
	for id := range counts {
		ids[id] = true
	}
	old := quota.NewManager(g, false)
	err := v.verifiedDquotBlocks(old.Ops(), func(b []byte, d format.Daddr) error {
		for off := 0; off+quota.RecordSize <= len(b); off += quota.RecordSize {
			ids[quota.Decode(b[off:]).ID] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	byBlock := map[uint64][]uint32{}
	for id := range ids {
		fb, _ := quota.Locate(g, id)
		byBlock[fb] = append(byBlock[fb], id)
	}
	fbs := make([]uint64, 0, len(byBlock))
	for fb := range byBlock {
		fbs = append(fbs, fb)
	}
	sort.Slice(fbs, func(i, j int) bool { return fbs[i] < fbs[j] })
	now := time.Now().Unix()
	for _, fb := range fbs {
		err := v.withDquotBlock(m, fb, func(b []byte) {
			for _, id := range byBlock[fb] {
				_, off := quota.Locate(g, id)
				r := quota.Decode(b[off:])
				r.BCount, r.ICount = 0, 0
				if u := counts[id]; u != nil {
					r.BCount, r.ICount = uint64(u.blocks), uint64(u.inodes)
				}
				m.Retime(&r, now)
				r.Encode(b[off:])
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// readInodeCore reads an inode's core as committed, in use or not.
func (v *mount) readInodeCore(ino format.Ino) (*format.Dinode, error) {
	g := &v.geo
	ag, agino := g.InoToAg(ino)
	bno, slot := g.AgInoToAgBlock(agino)
	raw := make([]byte, g.InodeSize)
	if err := v.cache.ReadCopy(g.AgbToDaddr(ag, bno), g.BlockSize, ialloc.BufOps, slot*g.InodeSize, raw); err != nil {
		return nil, err
	}
	core, err := format.VerifyInode(g, ino, raw)
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("inode %d", ino))
	}
	return core, nil
}

// withDquotBlock changes quota file block fb in a transaction, making it
// (with empty records) if the file has a hole there, and puts the
// block's records into m when it commits. Only a block no dquot item can
// be in flight for may be changed this way (a new one, or any while
// quotacheck runs at open), or the buffer would undo the items: with a
// nil change, a block that exists already is left alone.
func (v Quotas) withDquotBlock(m *quota.Manager, fb uint64, change func(b []byte)) error {
	ino := v.sb.PQuotIno
	h, unlock := v.lockInode(ino)
	defer unlock()
	return v.runTx(v.bmbtReserve()+1, false, func(t *txn) error {
		c, err := t.modifyAny(h, ino)
		if err != nil {
			return err
		}
		ext, err := c.mapping(DataFork)
		if err != nil {
			return err
		}
		var d format.Daddr
		if fsb, _, ok, _ := mapBlock(ext, format.FileOff(fb)); ok {
			if change == nil {
				return nil
			}
			d = v.geo.FsbToDaddr(fsb)
		} else {
			b, nd, err := c.allocBlocks(DataFork, format.FileOff(fb), 1, m.Ops())
			if err != nil {
				return err
			}
			// The quota file keeps di_size 0 (xfs_repair requires it).
			quota.InitBlock(&v.geo, b, fb)
			d = nd
		}
		// The record changes last, like every dquot change (lock order).
		t.OnPrepared(func() error {
			b, err := t.Read(d, v.geo.BlockSize, m.Ops())
			if err != nil {
				return err
			}
			if change != nil {
				change(b)
			}
			t.Dirty(d)
			t.OnCommit(func() {
				for off := 0; off+quota.RecordSize <= len(b); off += quota.RecordSize {
					m.Add(quota.Decode(b[off:]), d)
				}
			})
			return nil
		})
		return nil
	})
}

// chargeQuota charges a changed inode's project with what the change did
// to its blocks and to the inode itself (allocated, freed, or moved to
// another project). Growth is checked against the limits unless the
// transaction frees space, which must never fail on a quota, or is
// unchecked (Namespace.ApplyUnchecked).
func (c *inodeChange) chargeQuota() {
	v := c.t.v
	m := v.w.quota
	if m == nil || c.ino == v.sb.PQuotIno {
		return
	}
	oldID, oldBlocks, oldInodes := uint32(0), int64(0), int64(0)
	if c.base.core.Mode != 0 {
		oldID, oldBlocks, oldInodes = c.base.core.ProjID(), int64(c.base.core.NBlocks), 1
	}
	newID, newBlocks, newInodes := uint32(0), int64(0), int64(0)
	if c.core.Mode != 0 {
		newID, newBlocks, newInodes = c.core.ProjID(), int64(c.core.NBlocks), 1
	}
	charge := m.Charge
	if c.t.freeing || c.t.unchecked {
		charge = m.Force
	}
	if oldID == newID || oldInodes == 0 || newInodes == 0 {
		id := newID
		if newInodes == 0 {
			id = oldID
		}
		charge(c.t.Tx, id, newBlocks-oldBlocks, newInodes-oldInodes)
		return
	}
	m.Force(c.t.Tx, oldID, -oldBlocks, -oldInodes)
	charge(c.t.Tx, newID, newBlocks, newInodes)
}

// Enabled reports whether the volume keeps project quota (a writable
// volume not opened with NoQuota).
func (v Quotas) Enabled() bool { return v.w != nil && v.w.quota != nil }

// quotaManager returns the volume's dquots, or an error when the volume
// keeps none (opened read-only).
func (v Quotas) quotaManager() (*quota.Manager, error) {
	if err := v.checkWritable(); err != nil {
		return nil, err
	}
	if v.w.quota == nil {
		return nil, fmt.Errorf("%w: project quota is not on", ErrUnsupported)
	}
	return v.w.quota, nil
}

// SetProject charges inode ino (a bucket directory) to project id from
// now on: it takes the ID and, if it is a directory, the inherit flag, so
// that everything made below it is charged to id too. What ino already
// holds moves to id. The project gets a record if it has none (when the
// volume keeps quota: Options.NoQuota).
func (v Quotas) SetProject(ino format.Ino, id uint32) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	if m := v.w.quota; m != nil {
		if err := v.ensureDquot(m, id); err != nil {
			return err
		}
	}
	h, unlock := v.lockInode(ino)
	defer unlock()
	return v.runTx(0, false, func(t *txn) error {
		// The kernel moves an immutable inode to another project too.
		c, err := t.modifyAny(h, ino)
		if err != nil {
			return err
		}
		c.core.SetProjID(id)
		if c.core.Mode&format.SIFMT == format.SIFDIR {
			c.core.Flags |= format.DiflagProjInherit
		}
		c.touch(false)
		return nil
	})
}

// ensureDquot gives project id a record if it has none.
func (v Quotas) ensureDquot(m *quota.Manager, id uint32) error {
	if ok, err := m.Has(id); ok || err != nil {
		return err
	}
	fb, _ := quota.Locate(&v.geo, id)
	return v.withDquotBlock(m, fb, nil)
}

// SetLimits sets project id's own limits (zero fields fall back to
// project 0's, the defaults). Limits of project 0 are the defaults.
func (v Quotas) SetLimits(id uint32, l quota.Limits) (err error) {
	defer v.settle(&err)
	m, err := v.quotaManager()
	if err != nil {
		return err
	}
	if err := v.ensureDquot(m, id); err != nil {
		return err
	}
	// Logged as a dquot item, like every other change of a record.
	return v.runTx(0, false, func(t *txn) error {
		m.SetLimits(t.Tx, id, l)
		return nil
	})
}

// SetGrace sets the grace periods of soft limits (kept in project
// 0's timers, as the kernel does); 0 keeps the current value.
func (v Quotas) SetGrace(blocks, inodes time.Duration) (err error) {
	defer v.settle(&err)
	m, err := v.quotaManager()
	if err != nil {
		return err
	}
	if err := v.ensureDquot(m, 0); err != nil {
		return err
	}
	return v.runTx(0, false, func(t *txn) error {
		m.SetGrace(t.Tx, int64(blocks/time.Second), int64(inodes/time.Second))
		return nil
	})
}

// Get returns project id's limits and usage, after freeing what deleted
// files still hold so that the usage is current.
func (v Quotas) Get(id uint32) (ProjectQuota, error) {
	qs, err := v.List()
	if err != nil {
		return ProjectQuota{}, err
	}
	for _, q := range qs {
		if q.ID == id {
			return q, nil
		}
	}
	return ProjectQuota{ID: id}, nil
}

// List returns every project that has a record with usage or limits,
// by ID, after flushing pending inactivation.
func (v Quotas) List() ([]ProjectQuota, error) {
	v.flushInactive()
	if v.w == nil {
		return v.readQuotas()
	}
	m, err := v.quotaManager()
	if err != nil {
		return nil, err
	}
	return v.projectQuotas(m)
}

// projectQuotas reports the projects of the quota file that have usage
// or limits, and project 0 (the defaults): from their dquots where they
// are in memory, else from their records.
func (v Quotas) projectQuotas(m *quota.Manager) ([]ProjectQuota, error) {
	var out []ProjectQuota
	err := v.eachDquotBlock(m.Ops(), func(fb uint64, b []byte, _ format.Daddr, err error) error {
		if err != nil {
			// Left out: its projects' counts are unknown (and marked
			// sick when m keeps the volume's counts).
			if m != v.liveQuota() {
				return err
			}
			v.markQuotaSick(m, fb, err)
			return nil
		}
		for off := 0; off+quota.RecordSize <= len(b); off += quota.RecordSize {
			r := quota.Decode(b[off:])
			q := ProjectQuota{ID: r.ID,
				Limits: quota.Limits{BlkHard: r.BlkHard, BlkSoft: r.BlkSoft, InoHard: r.InoHard, InoSoft: r.InoSoft},
				Usage:  quota.Usage{Blocks: int64(r.BCount), Inodes: int64(r.ICount), BTimer: r.BTimer, ITimer: r.ITimer}}
			m.Peek(r.ID, func(d *quota.Dquot) { q.Limits, q.Usage = d.Limits(), d.Usage() })
			q.Effective = m.Effective(q.ID, q.Limits)
			if q.ID == 0 || q.Limits != (quota.Limits{}) || q.Usage.Blocks != 0 || q.Usage.Inodes != 0 {
				out = append(out, q)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// readDquots puts every record of the quota file into m.
func (v Quotas) readDquots(m *quota.Manager) error {
	return v.verifiedDquotBlocks(m.Ops(), func(b []byte, d format.Daddr) error {
		addRecords(m, b, d)
		return nil
	})
}

// liveQuota is the manager that keeps a writable volume's counts; nil
// when there is none.
func (v Quotas) liveQuota() *quota.Manager {
	if v.w == nil {
		return nil
	}
	return v.w.quota
}

// readQuotas reads the records of a read-only volume.
func (v Quotas) readQuotas() ([]ProjectQuota, error) {
	if !quotaOn(v.sb) {
		return nil, fmt.Errorf("%w: project quota is not on (or its counts are not checked)", ErrUnsupported)
	}
	m := quota.NewManager(&v.geo, false)
	if err := v.readDquots(m); err != nil {
		return nil, err
	}
	return v.projectQuotas(m)
}

// Check tells, before anything is written, whether project id has
// room for blocks more blocks and inodes more inodes: a write of known
// size that cannot fit fails at once. Transactions check again, exactly.
func (v Quotas) Check(id uint32, blocks, inodes int64) error {
	if v.w == nil || v.w.quota == nil {
		return nil
	}
	m := v.w.quota
	if err := m.Reserve(id, blocks, inodes); err != nil {
		if !errors.Is(err, quota.ErrExceeded) || v.w.inactive == nil {
			return err
		}
		v.w.inactive.Flush()
		if err := m.Reserve(id, blocks, inodes); err != nil {
			return err
		}
	}
	m.Release(id, blocks, inodes)
	return nil
}

// isQuotaOrSpace reports whether err is a full volume or a quota hit:
// both may go away once deleted files are freed.
func isQuotaOrSpace(err error) bool {
	return errors.Is(err, ErrNoSpace) || errors.Is(err, ErrQuota)
}
