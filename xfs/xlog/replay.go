package xlog

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/xfs3/xfs3/xfs/format"
)

// ReplayStats counts what Replay did with the items it found.
type ReplayStats struct {
	Replayed, Skipped, Cancelled int
	// Unfree lists, in log order, the extents of extent-free intents
	// that were never finished.
	Unfree []format.EFIExtent
	// Intents lists every intent the log left unfinished (extent-free,
	// refcount and bmap), in log order: the caller finishes them in that
	// order once the volume is writable, as the kernel does at the end of
	// recovery (xlog_recover_process_intents walks its AIL, where the
	// recovered intents sit in log order whatever their type).
	Intents []Intent
}

// Intent is an intent item without its done item: one field is set.
type Intent struct {
	EFI *format.EFILogFormat
	CUI *format.CUILogFormat
	BUI *format.BUILogFormat
}

// key returns what a done item names: the intent's type and ID (the
// kernel's xlog_recover_release_intent matches both).
func (in Intent) key() (uint16, uint64) {
	switch {
	case in.EFI != nil:
		return format.LogItemEFI, in.EFI.ID
	case in.CUI != nil:
		return format.LogItemCUI, in.CUI.ID
	}
	return format.LogItemBUI, in.BUI.ID
}

// cancelKey names a buffer the way cancel records do: address and length.
type cancelKey struct {
	blkno int64
	bbs   uint16
}

// replayer holds recovery's state: pending cancels, and the sectors it has
// rebuilt, kept in memory until the end like the kernel's delayed writes
// (sectors, because the same bytes may be logged as a 4 KiB block by one
// item and as a 16 KiB inode cluster by another). Replayed buffers get a
// fresh CRC when written out, but keep the LSN they show: unlike the
// kernel, this recovery never raises a block's LSN, so that a torn write
// of a replayed block, should the power fail again, can never make the
// next recovery (ours or the kernel's) skip the item that repairs it.
type replayer struct {
	d       Device
	g       *format.Geometry
	cancels map[cancelKey]int
	sectors map[int64][]byte
	touched map[cancelKey]bool
	order   []cancelKey
	st      ReplayStats
}

// read returns the current content of bbs sectors at blkno.
func (r *replayer) read(blkno int64, bbs uint16) ([]byte, error) {
	if size := int64(r.g.DBlocks << (r.g.BlockLog - format.BBShift)); blkno < 0 || blkno+int64(bbs) > size {
		return nil, format.Corrupt("log item", fmt.Sprintf("daddr %d", blkno), "a buffer of %d sectors outside the %d-sector filesystem", bbs, size)
	}
	out := make([]byte, int(bbs)*format.BBSize)
	for i := int64(0); i < int64(bbs); i++ {
		sect := out[i*format.BBSize : (i+1)*format.BBSize]
		if p, ok := r.sectors[blkno+i]; ok {
			copy(sect, p)
			continue
		}
		if _, err := r.d.ReadAt(sect, format.DaddrToByte(format.Daddr(blkno+i))); err != nil {
			return nil, fmt.Errorf("replay: read daddr %d: %w", blkno+i, err)
		}
	}
	return out, nil
}

// write keeps data as the new content of its sectors.
func (r *replayer) write(blkno int64, data []byte) {
	for i := 0; i < len(data)/format.BBSize; i++ {
		r.sectors[blkno+int64(i)] = data[i*format.BBSize : (i+1)*format.BBSize]
	}
}

// Replay writes the committed transactions in place, in log order, the way
// the kernel's recovery does on v5 volumes (the caller flushes):
//
//   - buffer items: skipped while a later cancel of the same buffer is
//     pending (the block may hold file data by now) or when the block's own
//     LSN is not older than the transaction and its CRC is good (a torn
//     write must not hide a block); otherwise the logged chunks are copied
//     in and the block gets a fresh CRC (its LSN is not raised: see
//     replayer).
//     Inode buffers flagged INODE_BUF only carry unlinked-list pointers.
//   - inode items: the host-endian core and the logged fork bytes go into
//     the inode unless its own LSN is newer (and its CRC good); the inode
//     keeps its LSN and gets a fresh CRC.
//   - inode-chunk creation: the chunk's inodes are initialised.
//   - dquot items: the logged disk dquot goes over its record unless the
//     record's own LSN is newer (and its CRC good); the record keeps its
//     LSN and gets a fresh CRC.
//   - intents (extent-free, refcount update, bmap update) matched by a
//     done item need nothing; the others are returned, in log order, in
//     ReplayStats.Intents (and the extents of the extent-free ones in
//     Unfree) for the caller to finish. An unfinished intent the kernel
//     would call corrupt fails the replay before anything is written.
//
// Anything else (rmap, attr and mapping-exchange intents, quota-off items,
// fork owner changes) fails with ErrUnsupportedItem before anything is
// written. g gives the volume's
// geometry (inode size, UUID, AG layout).
func Replay(d Device, g *format.Geometry, trans []*Trans) (ReplayStats, error) {
	r := &replayer{d: d, g: g, cancels: make(map[cancelKey]int), sectors: make(map[int64][]byte), touched: make(map[cancelKey]bool)}
	// Pass 1: check every item, count cancels, pair intents.
	var pending []Intent // unfinished, in log order
	done := func(typ uint16, b []byte, where string) error {
		var id uint64
		var err error
		if typ == format.LogItemEFI {
			id, err = format.DecodeIntentID(b)
		} else {
			id, err = format.DecodeIntentDone(b, typ+1)
		}
		if err != nil {
			return format.Located(err, where)
		}
		// The oldest pending intent of that type and ID is the one
		// done, as in the kernel's search of its AIL.
		for i, in := range pending {
			if t, x := in.key(); t == typ && x == id {
				pending = append(pending[:i], pending[i+1:]...)
				break
			}
		}
		return nil
	}
	for _, t := range trans {
		for _, it := range t.Items {
			where := fmt.Sprintf("tid %#x (LSN %d/%d)", t.Tid, t.LSN.Cycle(), t.LSN.Block())
			if len(it.Regions) == 0 || len(it.Regions[0]) < 2 {
				return r.st, format.Corrupt("log item", where, "empty item")
			}
			switch typ := binary.LittleEndian.Uint16(it.Regions[0]); typ {
			case format.LogItemBuf:
				f, err := checkBufItem(it, where)
				if err != nil {
					return r.st, err
				}
				if f.Flags&format.BlfCancel != 0 {
					r.cancels[cancelKey{f.Blkno, f.Len}]++
				}
			case format.LogItemInode:
				f, err := format.DecodeInodeLogFormat(it.Regions[0])
				if err != nil {
					return r.st, format.Located(err, where)
				}
				if f.Fields&(format.IlogDOwner|format.IlogAOwner) != 0 {
					return r.st, fmt.Errorf("%s: inode %d fork owner change: %w", where, f.Ino, ErrUnsupportedItem)
				}
				if len(it.Regions) != int(f.Size) || len(it.Regions[1]) < format.InodeCoreSize {
					return r.st, format.Corrupt("inode log item", where, "%d of %d regions, core of %d bytes", len(it.Regions), f.Size, len(it.Regions[1]))
				}
			case format.LogItemICreate:
				if _, err := format.DecodeICreateLog(it.Regions[0]); err != nil {
					return r.st, format.Located(err, where)
				}
			case format.LogItemDquot:
				if err := checkDquotItem(g, it); err != nil {
					return r.st, format.Located(err, where)
				}
			case format.LogItemEFI:
				f, err := format.DecodeEFI(it.Regions[0])
				if err != nil {
					return r.st, format.Located(err, where)
				}
				for _, e := range f.Extents {
					// Checked now, like the kernel, so that a bad intent
					// fails recovery before anything is written.
					if _, bno := g.FsbToAg(e.Start); bno == 0 || !g.ValidExtent(e.Start, uint64(e.Len)) {
						return r.st, format.Corrupt("EFI log item", where, "extent %d+%d is not inside one AG", e.Start, e.Len)
					}
				}
				pending = append(pending, Intent{EFI: f})
			case format.LogItemCUI:
				f, err := format.DecodeCUI(it.Regions[0])
				if err != nil {
					return r.st, format.Located(err, where)
				}
				pending = append(pending, Intent{CUI: f})
			case format.LogItemBUI:
				f, err := format.DecodeBUI(it.Regions[0])
				if err != nil {
					return r.st, format.Located(err, where)
				}
				pending = append(pending, Intent{BUI: f})
			case format.LogItemEFD:
				if err := done(format.LogItemEFI, it.Regions[0], where); err != nil {
					return r.st, err
				}
			case format.LogItemCUD:
				if err := done(format.LogItemCUI, it.Regions[0], where); err != nil {
					return r.st, err
				}
			case format.LogItemBUD:
				if err := done(format.LogItemBUI, it.Regions[0], where); err != nil {
					return r.st, err
				}
			default:
				return r.st, fmt.Errorf("%s: item type %#x: %w", where, typ, ErrUnsupportedItem)
			}
		}
	}
	// The unfinished refcount and bmap intents are checked now, before
	// anything is written; the kernel checks the same when it comes to
	// finish them (xfs_cui_validate_phys, xfs_bui_validate), and leaves
	// the finished ones unchecked.
	for _, in := range pending {
		var err error
		switch {
		case in.EFI != nil:
			r.st.Unfree = append(r.st.Unfree, in.EFI.Extents...)
		case in.CUI != nil:
			err = in.CUI.Check(g)
		case in.BUI != nil:
			err = in.BUI.Check(g)
		}
		if err != nil {
			return r.st, err
		}
	}
	if len(pending) > 0 {
		r.st.Intents = pending
	}
	// Pass 2: replay in log order, each transaction's items in the
	// kernel's order.
	for _, t := range trans {
		for _, it := range replayOrder(t.Items) {
			var err error
			switch binary.LittleEndian.Uint16(it.Regions[0]) {
			case format.LogItemBuf:
				err = r.buf(t, it)
			case format.LogItemInode:
				err = r.inode(t, it)
			case format.LogItemICreate:
				err = r.icreate(it)
			case format.LogItemDquot:
				err = r.dquot(t, it)
			}
			if err != nil {
				return r.st, err
			}
		}
	}
	for _, key := range r.order {
		data, err := r.read(key.blkno, key.bbs)
		if err != nil {
			return r.st, err
		}
		if _, lsnOff, crcOff := format.BlockLogInfo(data); lsnOff >= 0 && crcOff+4 <= len(data) {
			format.SetCRC(data, crcOff)
			r.write(key.blkno, data)
		}
	}
	addrs := make([]int64, 0, len(r.sectors))
	for a := range r.sectors {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
	for i := 0; i < len(addrs); {
		j := i + 1
		for j < len(addrs) && addrs[j] == addrs[j-1]+1 {
			j++
		}
		run := make([]byte, 0, (j-i)*format.BBSize)
		for _, a := range addrs[i:j] {
			run = append(run, r.sectors[a]...)
		}
		if _, err := d.WriteAt(run, format.DaddrToByte(format.Daddr(addrs[i]))); err != nil {
			return r.st, fmt.Errorf("replay: write daddr %d: %w", addrs[i], err)
		}
		i = j
	}
	return r.st, nil
}

// crcOK reports whether the CRC stored at off matches b.
func crcOK(b []byte, off int) bool {
	return binary.LittleEndian.Uint32(b[off:]) == format.ComputeCRC(b, off)
}

// replayOrder sorts a transaction's items the way the kernel's recovery
// does: inode-chunk creation first (it initialises blocks that other items
// of the transaction then change), then buffers, then inodes and the rest,
// then inode buffers (unlinked pointers), then cancels.
func replayOrder(items []Item) []Item {
	rank := func(it Item) int {
		switch binary.LittleEndian.Uint16(it.Regions[0]) {
		case format.LogItemICreate:
			return 0
		case format.LogItemBuf:
			f, _ := format.DecodeBufLogFormat(it.Regions[0])
			switch {
			case f.Flags&format.BlfCancel != 0:
				return 4
			case f.Flags&format.BlfInodeBuf != 0:
				return 3
			}
			return 1
		}
		return 2
	}
	out := make([]Item, 0, len(items))
	for r := 0; r <= 4; r++ {
		for _, it := range items {
			if rank(it) == r {
				out = append(out, it)
			}
		}
	}
	return out
}

// checkBufItem decodes a buffer item and checks its regions against its map.
func checkBufItem(it Item, where string) (*format.BufLogFormat, error) {
	f, err := format.DecodeBufLogFormat(it.Regions[0])
	if err != nil {
		return nil, format.Located(err, where)
	}
	// Dquot buffers (BlfPDquot and friends) replay like any other: the
	// engine keeps project quota whenever the superblock says so, and
	// quotacheck rewrites every record when it does not.
	if f.Flags&format.BlfCancel != 0 {
		return f, nil
	}
	runs := f.Runs()
	if len(runs) != len(it.Regions)-1 {
		return nil, format.Corrupt("buffer log item", where, "%d dirty runs but %d regions", len(runs), len(it.Regions)-1)
	}
	for i, r := range runs {
		if r[0]*format.BlfChunk >= int(f.Len)*format.BBSize || len(it.Regions[i+1]) > (r[1]-r[0])*format.BlfChunk {
			return nil, format.Corrupt("buffer log item", where, "region %d does not fit a %d-BB buffer", i, f.Len)
		}
	}
	return f, nil
}

func (r *replayer) buf(t *Trans, it Item) error {
	f, _ := format.DecodeBufLogFormat(it.Regions[0])
	key := cancelKey{f.Blkno, f.Len}
	if f.Flags&format.BlfCancel != 0 {
		if r.cancels[key]--; r.cancels[key] == 0 {
			delete(r.cancels, key)
		}
		return nil
	}
	if r.cancels[key] > 0 {
		r.st.Cancelled++
		return nil
	}
	data, err := r.read(f.Blkno, f.Len)
	if err != nil {
		return err
	}
	if f.Flags&format.BlfInodeBuf != 0 {
		r.inodeBuf(f, it, data)
		r.write(f.Blkno, data)
		return nil
	}
	if blft, lsnOff, crcOff := format.BlockLogInfo(data); lsnOff >= 0 && blft == f.Blft() && lsnOff+8 <= len(data) && crcOff+4 <= len(data) {
		// A newer block is left alone, unless its CRC says a write of
		// it tore: then its LSN means nothing.
		lsn := binary.BigEndian.Uint64(data[lsnOff:])
		if lsn != 0 && lsn != ^uint64(0) && lsn >= uint64(t.LSN) && crcOK(data, crcOff) {
			r.st.Skipped++
			return nil
		}
	}
	for i, run := range f.Runs() {
		copy(data[run[0]*format.BlfChunk:], it.Regions[i+1])
	}
	r.write(f.Blkno, data)
	if !r.touched[key] {
		r.touched[key] = true
		r.order = append(r.order, key)
	}
	r.st.Replayed++
	return nil
}

// checkDquotItem checks a dquot item before anything is replayed, as the
// kernel does: its record must be a dquot of the id it is logged for and
// lie inside its block.
func checkDquotItem(g *format.Geometry, it Item) error {
	f, err := format.DecodeDqLogFormat(it.Regions[0])
	if err != nil {
		return err
	}
	if len(it.Regions) != 2 || len(it.Regions[1]) < format.DiskDquotSize || len(it.Regions[1]) > format.DqblkSize {
		return format.Corrupt("dquot log item", fmt.Sprintf("id %d", f.ID), "%d regions, dquot of %d bytes", len(it.Regions), len(it.Regions[1]))
	}
	if int(f.Boffset)+format.DqblkSize > int(f.Len)*g.BlockSize {
		return format.Corrupt("dquot log item", fmt.Sprintf("id %d", f.ID), "record at byte %d of a %d-block buffer", f.Boffset, f.Len)
	}
	dq := it.Regions[1]
	if m, id := binary.BigEndian.Uint16(dq), binary.BigEndian.Uint32(dq[4:]); m != format.DquotMagic || dq[2] != 1 || id != f.ID {
		return format.Corrupt("dquot log item", fmt.Sprintf("id %d", f.ID), "logged record has magic %#x, version %d, id %d", m, dq[2], id)
	}
	return nil
}

// dquot replays a dquot item over its record.
func (r *replayer) dquot(t *Trans, it Item) error {
	f, _ := format.DecodeDqLogFormat(it.Regions[0])
	bbs := uint16(int(f.Len) * r.g.BlockSize / format.BBSize)
	data, err := r.read(f.Blkno, bbs)
	if err != nil {
		return err
	}
	rec := data[f.Boffset : f.Boffset+format.DqblkSize]
	if lsn := binary.BigEndian.Uint64(rec[format.DqblkLSNOff:]); lsn != 0 && lsn != ^uint64(0) && lsn >= uint64(t.LSN) && crcOK(rec, format.DqblkCRCOff) {
		r.st.Skipped++
		return nil
	}
	copy(rec, it.Regions[1])
	format.SetCRC(rec, format.DqblkCRCOff)
	r.write(f.Blkno, data)
	r.st.Replayed++
	return nil
}

// inodeBuf replays an inode buffer logged for unlinked-list changes: only
// the di_next_unlinked fields inside the logged chunks are taken, and the
// inodes they belong to get a fresh CRC.
func (r *replayer) inodeBuf(f *format.BufLogFormat, it Item, data []byte) {
	isize := r.g.InodeSize
	for i, run := range f.Runs() {
		lo, reg := run[0]*format.BlfChunk, it.Regions[i+1]
		for ino := lo / isize * isize; ino < lo+len(reg) && ino+isize <= len(data); ino += isize {
			off := ino + 96 // di_next_unlinked
			if off < lo || off+4 > lo+len(reg) {
				continue
			}
			copy(data[off:off+4], reg[off-lo:])
			format.SetCRC(data[ino:ino+isize], format.InodeCRCOff)
		}
	}
	r.st.Replayed++
}

func (r *replayer) inode(t *Trans, it Item) error {
	f, _ := format.DecodeInodeLogFormat(it.Regions[0])
	where := fmt.Sprintf("inode %d", f.Ino)
	if r.cancels[cancelKey{f.Blkno, uint16(f.Len)}] > 0 {
		r.st.Cancelled++
		return nil
	}
	data, err := r.read(f.Blkno, uint16(f.Len))
	if err != nil {
		return err
	}
	isize := r.g.InodeSize
	if int(f.BOffset)+isize > len(data) {
		return format.Corrupt("inode log item", where, "offset %d outside a %d-byte cluster", f.BOffset, len(data))
	}
	dip := data[f.BOffset : int(f.BOffset)+isize]
	if binary.BigEndian.Uint16(dip) != format.InodeMagic {
		return format.Corrupt("inode log item", where, "no inode at cluster offset %d", f.BOffset)
	}
	if lsn := binary.BigEndian.Uint64(dip[112:]); lsn != 0 && lsn != ^uint64(0) && lsn > uint64(t.LSN) && crcOK(dip, format.InodeCRCOff) {
		r.st.Skipped++
		return nil
	}
	keep := format.LSN(binary.BigEndian.Uint64(dip[112:]))
	if err := format.LogDinodeToDisk(it.Regions[1], dip, keep); err != nil {
		return format.Located(err, where)
	}
	lit := dip[format.InodeCoreSize:]
	split := len(lit)
	if fo := int(dip[82]) * 8; fo > 0 && fo <= len(lit) {
		split = fo
	}
	if f.Fields&format.IlogDev != 0 {
		binary.BigEndian.PutUint32(lit, f.Rdev)
	}
	next := 2
	put := func(flags uint32, fork []byte, broot uint32) error {
		if flags == 0 {
			return nil
		}
		if next >= len(it.Regions) {
			return format.Corrupt("inode log item", where, "fork region missing")
		}
		src := it.Regions[next]
		next++
		if flags == broot {
			return format.BmbtToBmdr(src, fork)
		}
		if len(src) > len(fork) {
			src = src[:len(fork)] // the logged length is rounded up to 4
		}
		copy(fork, src)
		return nil
	}
	if err := put(f.Fields&format.IlogDFork, lit[:split], format.IlogDBroot); err != nil {
		return err
	}
	if err := put(f.Fields&format.IlogAFork, lit[split:], format.IlogABroot); err != nil {
		return err
	}
	format.SetCRC(dip, format.InodeCRCOff)
	r.write(f.Blkno, data)
	r.st.Replayed++
	return nil
}

// icreate initialises a new inode chunk's inodes: magic, version 3,
// generation, no unlinked successor, number, UUID and CRC; the rest zero.
func (r *replayer) icreate(it Item) error {
	c, _ := format.DecodeICreateLog(it.Regions[0])
	g := r.g
	if c.AG >= g.AgCount || uint64(c.AgBno)+uint64(c.Length) > uint64(g.AgSize(format.AgNumber(c.AG))) || int(c.ISize) != g.InodeSize ||
		uint64(c.Count)*uint64(c.ISize) > uint64(c.Length)<<g.BlockLog {
		return format.Corrupt("icreate log item", fmt.Sprintf("AG %d block %d", c.AG, c.AgBno), "does not fit the volume")
	}
	perBlock := g.BlockSize / g.InodeSize
	for blk := uint32(0); blk < c.Length; blk++ {
		daddr := g.AgbToDaddr(format.AgNumber(c.AG), format.AgBlock(c.AgBno+blk))
		bbs := uint16(g.BlockSize / format.BBSize)
		if r.cancels[cancelKey{int64(daddr), bbs}] > 0 {
			continue
		}
		data := make([]byte, g.BlockSize)
		for i := 0; i < perBlock; i++ {
			dip := data[i*g.InodeSize : (i+1)*g.InodeSize]
			agino := g.AgBlockToAgIno(format.AgBlock(c.AgBno+blk)) + format.AgIno(i)
			be := binary.BigEndian
			be.PutUint16(dip[0:], format.InodeMagic)
			dip[4] = 3
			be.PutUint32(dip[92:], c.Gen)
			be.PutUint32(dip[96:], uint32(format.NullAgIno))
			be.PutUint64(dip[152:], uint64(g.AgInoToIno(format.AgNumber(c.AG), agino)))
			copy(dip[160:176], g.UUID[:])
			format.SetCRC(dip, format.InodeCRCOff)
		}
		r.write(int64(daddr), data)
	}
	r.st.Replayed++
	return nil
}

// clearWindow bounds how far past the head Recover restamps blocks: more
// than any single batch the writer issues in practice.
const clearWindow = 16 << 20 / format.BBSize

// Recover replays a dirty log: it scans, replays, flushes, and restamps
// the blocks just past the head with the cycle they must show (so that
// records of a torn batch beyond the head are never found again). The log
// stays dirty: the caller goes on writing from the head (NewWriter after
// FindHead) to finish what recovery needs done in transactions, such as
// freeing unlinked inodes, and marks the log clean at unmount. A crash
// before that simply recovers again.
func (l *Log) Recover(d Device, g *format.Geometry) (*Scan, ReplayStats, error) {
	s, err := l.Scan()
	if err != nil {
		return nil, ReplayStats{}, err
	}
	st, err := Replay(d, g, s.Trans)
	if err != nil {
		return s, st, err
	}
	if err := d.Sync(); err != nil {
		return s, st, err
	}
	if err := l.clearAhead(d, s.Head, s.Tail); err != nil {
		return s, st, err
	}
	return s, st, nil
}

// clearAhead stamps the window after head: blocks still in head's pass get
// the previous cycle, blocks past the log's end (the next pass) get
// head's cycle. It stops short of the tail: the records from the tail to
// the head must survive until the unmount record is down, or a crash in
// between would leave nothing to recover from.
func (l *Log) clearAhead(d Device, head, tail format.LSN) error {
	used := (head.Cycle()-tail.Cycle())*l.Blocks + head.Block() - tail.Block()
	if used >= l.Blocks {
		return corrupt(head.Block(), "tail %d/%d is a whole log behind the head", tail.Cycle(), tail.Block())
	}
	n := min(uint32(clearWindow), l.Blocks-used-1)
	bb, cycle := head.Block(), head.Cycle()-1
	for n > 0 {
		run := min(n, l.Blocks-bb)
		if run == 0 {
			break
		}
		buf := make([]byte, int(run)*format.BBSize)
		for i := 0; i < int(run); i++ {
			binary.BigEndian.PutUint32(buf[i*format.BBSize:], cycle)
		}
		if _, err := d.WriteAt(buf, l.Start+int64(bb)*format.BBSize); err != nil {
			return fmt.Errorf("clear log blocks %d..%d: %w", bb, bb+run, err)
		}
		n -= run
		bb, cycle = 0, cycle+1
		if bb == head.Block() {
			break
		}
	}
	return d.Sync()
}
