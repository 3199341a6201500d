package xfs

import (
	"math/rand/v2"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
)

// freeInodeCore is what an unused inode slot of an allocated chunk holds:
// a valid v3 inode with mode 0, as mkfs.xfs and the kernel write them.
func (v *Volume) freeInodeCore(ino format.Ino) *format.Dinode {
	d := &format.Dinode{
		Magic: format.InodeMagic, Version: 3, Format: format.FmtExtents,
		NextUnlinked: format.NullAgIno, Ino: ino, UUID: v.geo.UUID,
		Gen: rand.Uint32(),
	}
	if v.geo.Bigtime {
		d.Flags2 |= format.Diflag2Bigtime
	}
	return d
}

// encodeFreeChunkBlock fills one block of a new inode chunk with free
// inodes starting at first.
func (v *Volume) encodeFreeChunkBlock(b []byte, first format.Ino) {
	for i := 0; i < v.geo.InoPBlock; i++ {
		raw := b[i*v.geo.InodeSize : (i+1)*v.geo.InodeSize]
		clear(raw)
		v.freeInodeCore(first + format.Ino(i)).Encode(raw)
		format.SetCRC(raw, format.InodeCRCOff)
	}
}

// newInodeAttrs are the caller's choices for a new inode.
type newInodeAttrs struct {
	Mode     uint16 // type and permission bits
	UID, GID uint32
	Nlink    uint32
	Now      time.Time
}

// initInodeCore turns a free inode's core into a new in-use inode, taking
// the project ID (and, for directories, the inherit flag) from the parent
// like the kernel does for a parent with PROJINHERIT.
func (v *Volume) initInodeCore(d *format.Dinode, a newInodeAttrs, parent *format.Dinode) {
	gen := d.Gen
	*d = *v.freeInodeCore(d.Ino)
	d.Gen = gen + 1
	d.Mode, d.UID, d.GID, d.Nlink = a.Mode, a.UID, a.GID, a.Nlink
	ts := format.TimestampOf(a.Now)
	d.Atime, d.Mtime, d.Ctime, d.Crtime = ts, ts, ts, ts
	d.ChangeCount = 1
	if parent != nil && parent.Flags&format.DiflagProjInherit != 0 {
		d.SetProjID(parent.ProjID())
		if a.Mode&format.SIFMT == format.SIFDIR {
			d.Flags |= format.DiflagProjInherit
		}
	}
	switch a.Mode & format.SIFMT {
	case format.SIFDIR, format.SIFLNK:
		d.Format = format.FmtLocal
	default:
		d.Format = format.FmtExtents
	}
	d.AFormat = format.FmtExtents
}
