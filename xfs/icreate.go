package xfs

import (
	"fmt"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/ialloc"
)

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
	*d = *ialloc.FreeInodeCore(&v.geo, d.Ino)
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

// allocInode takes a free inode near parent (see ialloc.Tx.Alloc) and
// returns its free version to initialise.
func (t *txn) allocInode(parent format.Ino, isDir bool) (*inode, error) {
	ino, err := t.ialloc.Alloc(parent, isDir)
	if err != nil {
		return nil, err
	}
	return t.freeInode(ino)
}

// freeInode returns the bytes of a free inode (from this transaction's new
// chunk, or as committed) as a version to initialise. It does not lock the
// inode's block: blocks of inodes are locked only while a commit copies
// inodes into them, in address order, so they never take part in a
// deadlock with the AG headers.
func (t *txn) freeInode(ino format.Ino) (*inode, error) {
	g := &t.v.geo
	ag, agino := g.InoToAg(ino)
	bno, slot := g.AgInoToAgBlock(agino)
	d := g.AgbToDaddr(ag, bno)
	b, held := t.Held(d)
	if !held {
		var err error
		if b, err = t.v.w.cache.Read(d, g.BlockSize, ialloc.BufOps); err != nil {
			return nil, err
		}
	}
	raw := append([]byte(nil), b[slot*g.InodeSize:(slot+1)*g.InodeSize]...)
	core, err := format.VerifyInode(g, ino, raw)
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("inode %d", ino))
	}
	if core.Mode != 0 {
		return nil, format.Corrupt("inode", fmt.Sprintf("inode %d", ino), "the inode btree says free, the inode is in use")
	}
	return &inode{ino: ino, core: core, raw: raw}, nil
}
