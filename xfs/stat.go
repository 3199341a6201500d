package xfs

import (
	"time"

	"github.com/xfs3/xfs3/xfs/format"
)

// Stat describes an inode.
type Stat struct {
	Ino       format.Ino
	Mode      uint32 // type and permission bits, as in Linux st_mode
	UID, GID  uint32
	Nlink     uint32
	Size      int64
	Blocks    uint64 // filesystem blocks owned, including metadata blocks
	BlockSize int
	Atime     time.Time
	Mtime     time.Time
	Ctime     time.Time
	Crtime    time.Time
	ProjID    uint32
	Flags     uint16 // di_flags (format.Diflag*); see Immutable
	Flags2    uint64 // di_flags2
	Gen       uint32
	// ChangeCount (di_changecount) grows with every change to the inode,
	// including each entry added to or removed from a directory.
	ChangeCount uint64
	DataFormat  string // "local", "extents" or "btree" ("dev" for devices)
	AttrFormat  string // "" when there is no attribute fork
	Extents     uint64 // data fork extent records
	AttrExtents uint64
}

// Type names the file type ("file", "dir", "symlink", ...).
func (s *Stat) Type() string { return format.FileType(uint16(s.Mode)) }

// IsDir reports whether the inode is a directory.
func (s *Stat) IsDir() bool { return s.Mode&format.SIFMT == format.SIFDIR }

// Immutable reports the immutable flag (format.DiflagImmutable): no
// change may touch the inode (see the package doc).
func (s *Stat) Immutable() bool { return s.Flags&format.DiflagImmutable != 0 }

// Stat returns an inode's attributes.
func (v *Volume) Stat(ino format.Ino) (Stat, error) { return v.stat(ino) }

func (v *mount) stat(ino format.Ino) (Stat, error) {
	defer v.rlock(ino)()
	ip, err := v.iget(ino)
	if err != nil {
		return Stat{}, err
	}
	return v.statOf(ip), nil
}

// statOf describes one committed version of an inode.
func (v *mount) statOf(ip *inode) Stat {
	c := &ip.core
	s := Stat{
		Ino: ip.ino, Mode: uint32(c.Mode), UID: c.UID, GID: c.GID, Nlink: c.Nlink, Size: c.Size,
		Blocks: c.NBlocks, BlockSize: v.geo.BlockSize,
		Atime: c.Atime.Time(), Mtime: c.Mtime.Time(), Ctime: c.Ctime.Time(), Crtime: c.Crtime.Time(),
		ProjID: c.ProjID(), Flags: c.Flags, Flags2: c.Flags2, Gen: c.Gen, ChangeCount: c.ChangeCount,
		DataFormat: format.FormatName(c.Format), Extents: c.DataExtents(), AttrExtents: c.AttrExtents(),
	}
	if c.ForkOff != 0 {
		s.AttrFormat = format.FormatName(c.AFormat)
	}
	return s
}

// Version identifies one state of an inode: every change adds to its
// change count, and an inode freed and used again has a new generation.
type Version struct {
	Gen         uint32
	ChangeCount uint64
}

// Version is the state s describes.
func (s *Stat) Version() Version { return Version{s.Gen, s.ChangeCount} }

func versionOf(c *format.Dinode) Version { return Version{c.Gen, c.ChangeCount} }
