package mkfs

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
)

// Result reports the geometry of a freshly formatted filesystem.
type Result struct {
	UUID         [16]byte
	BlockSize    int
	SectorSize   int
	InodeSize    int
	DirBlockSize int
	DBlocks      uint64 // data blocks (the filesystem size in blocks)
	AgCount      uint32
	AgBlocks     uint32 // blocks per AG (the last AG may be shorter)
	IMaxPct      int
	LogStart     format.FsBlock // first block of the internal log
	LogOffset    int64          // byte offset of the log on the device
	LogBlocks    uint32
	LogAg        uint32 // the AG that holds the log
	MinLogBlocks uint32 // the smallest log the kernel accepts for this geometry
	RootIno      format.Ino
	Inodes       uint64 // sb_icount
	FreeInodes   uint64 // sb_ifree
	FreeBlocks   uint64 // sb_fdblocks
	Reflink      bool   // every AG has a refcount btree (shared extents allowed)
}

// String summarises the geometry in two lines, like mkfs.xfs does.
func (r *Result) String() string {
	reflink := 0
	if r.Reflink {
		reflink = 1
	}
	return fmt.Sprintf("meta-data: isize=%d agcount=%d agsize=%d blks sectsz=%d reflink=%d uuid=%s\n"+
		"data: bsize=%d blocks=%d imaxpct=%d dirbsize=%d; log: internal blocks=%d start=%d (AG %d)",
		r.InodeSize, r.AgCount, r.AgBlocks, r.SectorSize, reflink, uuidString(r.UUID),
		r.BlockSize, r.DBlocks, r.IMaxPct, r.DirBlockSize, r.LogBlocks, r.LogStart, r.LogAg)
}

func uuidString(u [16]byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// Plan computes, without touching any device, the geometry and counters
// Format would produce on a file of devBytes bytes (ignored when o.Size is
// set). The reported UUID is o.UUID, all zeros when Format would pick a
// random one; the sector size is o.SectorSize or 512.
func Plan(o Options, devBytes int64) (*Result, error) {
	g, err := plan(o, devBytes)
	if err != nil {
		return nil, err
	}
	_, c, err := g.layoutAll()
	if err != nil {
		return nil, err
	}
	return g.result(o.UUID, c), nil
}

func (g *geometry) result(uuid [16]byte, c counts) *Result {
	o := g.opts
	return &Result{
		UUID: uuid, BlockSize: o.BlockSize, SectorSize: o.SectorSize, InodeSize: o.InodeSize,
		DirBlockSize: o.DirBlockSize, DBlocks: g.dblocks, AgCount: g.agcount, AgBlocks: g.agblocks,
		IMaxPct: g.imaxpct, LogStart: g.logStart, LogBlocks: g.logBlocks, LogAg: g.logAg,
		LogOffset:    (int64(g.logAg)*int64(g.agblocks) + int64(g.prealloc)) << g.blockLog,
		MinLogBlocks: g.minLogBlocks, RootIno: g.rootIno(),
		Inodes: c.icount, FreeInodes: c.ifree, FreeBlocks: c.fdblocks, Reflink: g.reflink(),
	}
}

// layoutAll lays out every AG and sums the counters. Only AG 0 and the log
// AG differ from the rest, so the others share one layout per AG length.
func (g *geometry) layoutAll() (func(ag uint32) (*agLayout, error), counts, error) {
	cache := map[uint32]*agLayout{}
	get := func(ag uint32) (*agLayout, error) {
		if ag == 0 || ag == g.logAg {
			return g.layoutAG(ag)
		}
		a, ok := cache[g.agSize(ag)]
		if !ok {
			var err error
			if a, err = g.layoutAG(ag); err != nil {
				return nil, err
			}
			cache[a.length] = a
		}
		c := *a
		c.ag = ag
		return &c, nil
	}
	var c counts
	for ag := uint32(0); ag < g.agcount; ag++ {
		a, err := get(ag)
		if err != nil {
			return nil, counts{}, err
		}
		c.add(a)
	}
	return get, c, nil
}

// Format formats the file or block device at path. A missing path is
// created as a sparse file of o.Size bytes; an existing file is grown to
// o.Size if it is smaller, and o.Size 0 means its current size. Nothing is
// created or changed when the options are invalid.
func Format(path string, o Options) (*Result, error) {
	if _, err := o.withDefaults(); err != nil {
		return nil, err
	}
	created := false
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if o.Size == 0 {
			return nil, invalid("%s does not exist: a size is needed to create it", path)
		}
		if _, err := plan(o, o.Size); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, err
		}
		created = true
		err = f.Truncate(o.Size)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
	case err != nil:
		return nil, err
	case st.Mode().IsRegular():
		if _, err := plan(o, max(o.Size, st.Size())); err != nil {
			return nil, err
		}
		if o.Size > st.Size() {
			if err := os.Truncate(path, o.Size); err != nil {
				return nil, fmt.Errorf("grow %s to %d bytes: %w", path, o.Size, err)
			}
		}
	case st.Mode()&fs.ModeDevice != 0 && st.Mode()&fs.ModeCharDevice == 0:
		// A block device: its size comes from the device.
	default:
		return nil, invalid("%s is neither a regular file nor a block device", path)
	}

	d, err := dev.Open(path, false)
	if err != nil {
		if created {
			os.Remove(path)
		}
		return nil, err
	}
	res, err := format1(d, o, created)
	if cerr := d.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		if created {
			os.Remove(path)
		}
		return nil, err
	}
	return res, nil
}

// FormatDevice formats d. Whatever d held before is made unreachable: old
// superblock copies and the log area are zeroed, every metadata block the
// new filesystem uses is rewritten.
func FormatDevice(d dev.Device, o Options) (*Result, error) {
	return format1(d, o, false)
}

// zeroer is implemented by devices that can zero a range cheaply.
type zeroer interface {
	ZeroRange(off, length int64) error
}

// fder is implemented by devices backed by a file descriptor.
type fder interface {
	Fd() uintptr
}

const whackSize = 128 << 10 // zeroed at both ends of a reused device

// format1 does the work of Format and FormatDevice. fresh says the device
// reads as zeros everywhere (a sparse file just created), so nothing needs
// clearing.
func format1(d dev.Device, o Options, fresh bool) (*Result, error) {
	ss, err := sectorSize(d, o)
	if err != nil {
		return nil, err
	}
	o.SectorSize = ss
	g, err := plan(o, d.Size())
	if err != nil {
		return nil, err
	}
	uuid := g.opts.UUID
	if uuid == ([16]byte{}) {
		if _, err := rand.Read(uuid[:]); err != nil {
			return nil, fmt.Errorf("uuid: %w", err)
		}
		uuid[6] = uuid[6]&0x0f | 0x40 // version 4
		uuid[8] = uuid[8]&0x3f | 0x80 // RFC 4122 variant
	}
	layout, c, err := g.layoutAll()
	if err != nil {
		return nil, err
	}
	primary := g.superblock(uuid, c)
	geo := format.NewGeometry(primary)
	bs := int64(g.opts.BlockSize)

	if !fresh {
		if err := clearOld(d, ss); err != nil {
			return nil, err
		}
	}
	logOff := format.DaddrToByte(geo.FsbToDaddr(g.logStart))
	logLen := int64(g.logBlocks) * bs
	if !fresh {
		if err := zeroRange(d, logOff, logLen); err != nil {
			return nil, fmt.Errorf("clear log: %w", err)
		}
	}
	recBytes := 0
	if g.logSUnit > 1 {
		recBytes = int(g.logSUnit)
	}
	rec, err := format.UnmountRecord(uuid, 1, 0, format.MakeLSN(1, 0), recBytes, format.LogMkfsUnmountTid)
	if err != nil {
		return nil, err
	}
	if _, err := d.WriteAt(rec, logOff); err != nil {
		return nil, fmt.Errorf("write log: %w", err)
	}

	// AG headers and btree roots: blocks [0, prealloc) of every AG. The
	// primary superblock goes out with the in-progress flag set and is
	// rewritten last.
	buf := make([]byte, int64(g.prealloc)*bs)
	started := *primary
	started.InProgress = 1
	for ag := uint32(0); ag < g.agcount; ag++ {
		a, err := layout(ag)
		if err != nil {
			return nil, err
		}
		sb := &started
		if ag != 0 {
			sb = g.secondary(primary, ag)
		}
		g.agHeaders(buf, sb, a, &geo)
		off := format.DaddrToByte(geo.AgbToDaddr(format.AgNumber(ag), 0))
		if _, err := d.WriteAt(buf, off); err != nil {
			return nil, fmt.Errorf("write AG %d headers: %w", ag, err)
		}
	}

	chunk := make([]byte, int64(g.iallocBlocks)*bs)
	g.encodeInodeChunk(chunk, uuid, time.Now())
	chunkOff := format.DaddrToByte(geo.AgbToDaddr(0, format.AgBlock(g.chunkBno)))
	if _, err := d.WriteAt(chunk, chunkOff); err != nil {
		return nil, fmt.Errorf("write root inode chunk: %w", err)
	}
	if err := d.Sync(); err != nil {
		return nil, err
	}
	sector := make([]byte, ss)
	encodeSuperblock(sector, primary)
	if _, err := d.WriteAt(sector, 0); err != nil {
		return nil, fmt.Errorf("write superblock: %w", err)
	}
	if err := d.Sync(); err != nil {
		return nil, err
	}
	return g.result(uuid, c), nil
}

// clearOld removes what could make tools mistake leftovers for part of the
// new filesystem: the superblock copies of an XFS filesystem that was there
// before (their positions follow the old geometry) and the first and last
// 128 KiB, where other filesystems and RAID keep their signatures.
func clearOld(d dev.Device, ss int) error {
	size := d.Size()
	sector := make([]byte, ss)
	if _, err := d.ReadAt(sector, 0); err == nil {
		if old, err := format.DecodeSuperblock(sector); err == nil && sane(old) {
			zero := make([]byte, ss)
			for i := uint64(1); i < uint64(old.AgCount); i++ {
				off := int64(i*uint64(old.AgBlocks)) << old.BlockLog
				if off < 0 || off+int64(ss) > size {
					break
				}
				if _, err := d.WriteAt(zero, off); err != nil {
					return fmt.Errorf("clear old superblock copy: %w", err)
				}
			}
		}
	}
	head := min(int64(whackSize), size)
	if err := zeroRange(d, 0, head); err != nil {
		return err
	}
	tail := max(size-whackSize, head) &^ (int64(ss) - 1)
	return zeroRange(d, tail, size-tail)
}

// sane accepts an old superblock whose geometry is believable enough to
// locate its copies.
func sane(s *format.Superblock) bool {
	if s.MagicNum != format.SbMagic || s.BlockLog < 9 || s.BlockLog > 16 || s.BlockSize != 1<<s.BlockLog {
		return false
	}
	if s.AgCount == 0 || s.AgBlocks == 0 {
		return false
	}
	return s.DBlocks <= uint64(s.AgCount)*uint64(s.AgBlocks) &&
		s.DBlocks >= uint64(s.AgCount-1)*uint64(s.AgBlocks)+64
}

// zeroRange makes [off, off+length) read as zeros: through the device's
// own method, by punching a hole in a file, or by writing zeros.
func zeroRange(d dev.Device, off, length int64) error {
	if length <= 0 {
		return nil
	}
	if z, ok := d.(zeroer); ok {
		return z.ZeroRange(off, length)
	}
	if f, ok := d.(fder); ok {
		const punchHole, keepSize = 0x02, 0x01 // FALLOC_FL_PUNCH_HOLE, FALLOC_FL_KEEP_SIZE
		if err := syscall.Fallocate(int(f.Fd()), punchHole|keepSize, off, length); err == nil {
			return nil
		}
	}
	const chunk = 1 << 20
	zero := make([]byte, min(chunk, length))
	for length > 0 {
		n := min(int64(len(zero)), length)
		if _, err := d.WriteAt(zero[:n], off); err != nil {
			return err
		}
		off += n
		length -= n
	}
	return nil
}

// deviceSectors asks a block device for its logical and physical sector
// sizes; ok is false for files and devices that cannot tell.
func deviceSectors(d dev.Device) (logical, physical int, ok bool) {
	f, isFd := d.(fder)
	if !isFd {
		return 0, 0, false
	}
	const blkSSZGet, blkPBSZGet = 0x1268, 0x127B // BLKSSZGET, BLKPBSZGET
	var l, p int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), blkSSZGet, uintptr(unsafe.Pointer(&l))); e != 0 {
		return 0, 0, false
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), blkPBSZGet, uintptr(unsafe.Pointer(&p))); e != 0 || p <= 0 {
		p = l
	}
	if l <= 0 {
		return 0, 0, false
	}
	return int(l), int(p), true
}

// sectorSize picks the sector size for d the way mkfs.xfs does: the
// physical sector size of a block device, or its logical one when the
// block size is smaller than the physical sector; 512 for files. An
// explicit size smaller than the device's logical sector is refused.
func sectorSize(d dev.Device, o Options) (int, error) {
	logical, physical, ok := deviceSectors(d)
	if !ok {
		if o.SectorSize != 0 {
			return o.SectorSize, nil
		}
		return MinSectSize, nil
	}
	if o.SectorSize != 0 {
		if o.SectorSize < logical {
			return 0, invalid("sector size %d is smaller than the device's %d-byte sectors", o.SectorSize, logical)
		}
		return o.SectorSize, nil
	}
	bs := o.BlockSize
	if bs == 0 {
		bs = 4096
	}
	ss := physical
	if ss > MaxSectSize || !isPow2(ss) {
		ss = logical
	}
	if bs < ss && bs >= logical {
		ss = logical
	}
	return max(ss, MinSectSize), nil
}
