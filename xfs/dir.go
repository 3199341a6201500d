package xfs

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/xfs3/xfs3/xfs/format"
)

// DirEntry is one name in a directory.
type DirEntry struct {
	Name string
	Ino  format.Ino
	// Type is the entry's file type (format.FT*), from the ftype byte.
	Type uint8
}

// dirForm tells which of the four directory formats an inode uses.
type dirForm int

const (
	dirShort dirForm = iota
	dirBlock
	dirLeafOrNode
)

// dirForm decides like the kernel: a directory whose mapping ends after
// its first directory block is in block form (a leaf directory with one
// data block has the same size, but also maps a leaf block at 32 GiB).
func (v *Volume) dirForm(ip *inode) (dirForm, error) {
	if ip.core.Format == format.FmtLocal {
		return dirShort, nil
	}
	ext, err := v.extents(ip, DataFork)
	if err != nil {
		return 0, err
	}
	if len(ext) > 0 && ext[len(ext)-1].End() == format.FileOff(v.geo.DirBlockFsbs()) {
		return dirBlock, nil
	}
	return dirLeafOrNode, nil
}

func (v *Volume) getDir(ino format.Ino) (*inode, error) {
	ip, err := v.iget(ino)
	if err != nil {
		return nil, err
	}
	if !ip.isDir() {
		return nil, fmt.Errorf("inode %d: %w", ino, ErrNotDir)
	}
	return ip, nil
}

// ReadDir lists a directory in on-disk order, without "." and "..".
func (v *Volume) ReadDir(ino format.Ino) ([]DirEntry, error) {
	defer v.rlock(ino)()
	ip, err := v.getDir(ino)
	if err != nil {
		return nil, err
	}
	var out []DirEntry
	err = v.walkDir(ip, func(e format.DirEntry) error {
		if isDot(e.Name) {
			return nil
		}
		if !v.geo.ValidIno(e.Ino) {
			return format.Corrupt("directory entry", "", "%q points at invalid inode %d", e.Name, e.Ino)
		}
		out = append(out, DirEntry{Name: string(e.Name), Ino: e.Ino, Type: e.FType})
		return nil
	})
	return out, format.Located(err, fmt.Sprintf("inode %d", ino))
}

func isDot(name []byte) bool {
	return len(name) == 1 && name[0] == '.' || len(name) == 2 && name[0] == '.' && name[1] == '.'
}

// walkDir calls fn for every entry of every format, including the "." and
// ".." entries of block, leaf and node directories.
func (v *Volume) walkDir(ip *inode, fn func(format.DirEntry) error) error {
	if ip.core.Format == format.FmtLocal {
		sf, err := format.DecodeSFDir(ip.fork(DataFork), ip.core.Size, v.geo.FType)
		if err != nil {
			return err
		}
		for _, e := range sf.Entries {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}
	ext, err := v.extents(ip, DataFork)
	if err != nil {
		return err
	}
	for _, db := range v.dataBlocks(ext) {
		b, hdr, err := v.readDirData(ip, ext, db)
		if err != nil {
			return err
		}
		end := len(b)
		if hdr.Magic == format.Dir3BlockMagic {
			if _, end, err = format.DirBlockLeaf(b); err != nil {
				return format.Located(err, fmt.Sprintf("dir block %d", db))
			}
		}
		if err := format.DecodeDirData(b, end, uint64(db)*uint64(v.geo.DirBlkSize), v.geo.FType, fn); err != nil {
			return format.Located(err, fmt.Sprintf("dir block %d", db))
		}
	}
	return nil
}

// dataBlocks lists the directory blocks mapped in the data space, in order.
func (v *Volume) dataBlocks(ext []format.Extent) []uint32 {
	per := format.FileOff(v.geo.DirBlockFsbs())
	leafStart := format.FileOff(uint64(format.DirLeafOffset) >> v.geo.BlockLog)
	var dbs []uint32
	for _, e := range ext {
		for off := (e.StartOff + per - 1) / per * per; off < e.End() && off < leafStart; off += per {
			if db := uint32(off / per); len(dbs) == 0 || dbs[len(dbs)-1] != db {
				dbs = append(dbs, db)
			}
		}
	}
	return dbs
}

// readDirData reads and verifies directory data block db.
func (v *Volume) readDirData(ip *inode, ext []format.Extent, db uint32) ([]byte, *format.DirDataHdr, error) {
	per := v.geo.DirBlockFsbs()
	b, daddr, err := v.readForkBlocks(ext, format.FileOff(db)*format.FileOff(per), per)
	if err != nil {
		return nil, nil, format.Located(err, fmt.Sprintf("dir block %d", db))
	}
	hdr, err := format.VerifyDirDataBlock(&v.geo, b, daddr, ip.ino)
	if err != nil {
		return nil, nil, format.Located(err, fmt.Sprintf("dir block %d (daddr %d)", db, daddr))
	}
	return b, hdr, nil
}

// Lookup finds name in directory dir. "." and ".." work in every format.
func (v *Volume) Lookup(dir format.Ino, name string) (format.Ino, error) {
	defer v.rlock(dir)()
	ip, err := v.getDir(dir)
	if err != nil {
		return 0, err
	}
	if len(name) > format.MaxNameLen {
		return 0, fmt.Errorf("%q: %w", name, ErrNameTooLong)
	}
	if name == "" {
		return 0, fmt.Errorf("empty name: %w", ErrInvalid)
	}
	if name == "." {
		return dir, nil
	}
	ino, err := v.lookup(ip, []byte(name))
	if err != nil {
		return 0, format.Located(err, fmt.Sprintf("inode %d", dir))
	}
	if !v.geo.ValidIno(ino) {
		return 0, format.Corrupt("directory entry", fmt.Sprintf("inode %d", dir), "%q points at invalid inode %d", name, ino)
	}
	return ino, nil
}

func (v *Volume) lookup(ip *inode, name []byte) (format.Ino, error) {
	form, err := v.dirForm(ip)
	if err != nil {
		return 0, err
	}
	switch form {
	case dirShort:
		sf, err := format.DecodeSFDir(ip.fork(DataFork), ip.core.Size, v.geo.FType)
		if err != nil {
			return 0, err
		}
		if string(name) == ".." {
			return sf.Parent, nil
		}
		for _, e := range sf.Entries {
			if bytes.Equal(e.Name, name) {
				return e.Ino, nil
			}
		}
		return 0, ErrNotFound
	case dirBlock:
		return v.lookupBlock(ip, name)
	}
	return v.lookupLeaf(ip, name)
}

func (v *Volume) lookupBlock(ip *inode, name []byte) (format.Ino, error) {
	ext, err := v.extents(ip, DataFork)
	if err != nil {
		return 0, err
	}
	b, hdr, err := v.readDirData(ip, ext, 0)
	if err != nil {
		return 0, err
	}
	if hdr.Magic != format.Dir3BlockMagic {
		return 0, format.Corrupt("dir3 block", "dir block 0", "magic %#x in a single-block directory", hdr.Magic)
	}
	leaf, end, err := format.DirBlockLeaf(b)
	if err != nil {
		return 0, err
	}
	hash := format.DaHashName(name)
	for i := sort.Search(len(leaf), func(i int) bool { return leaf[i].HashVal >= hash }); i < len(leaf) && leaf[i].HashVal == hash; i++ {
		if leaf[i].Address == format.NullDataptr {
			continue
		}
		off := int(format.DirAddrToOffset(leaf[i].Address))
		if ino, ok, err := v.entryAt(b, end, off, name); err != nil || ok {
			return ino, err
		}
	}
	return 0, ErrNotFound
}

// entryAt decodes the data entry at byte off of a directory block and
// reports whether it carries name.
func (v *Volume) entryAt(b []byte, end, off int, name []byte) (format.Ino, bool, error) {
	if off < format.Dir3DataHdrSize || off+11 > end || off%8 != 0 {
		return 0, false, format.Corrupt("dir3 leaf entry", "", "address of offset %d outside the data area", off)
	}
	nl := int(b[off+8])
	size := format.DirDataEntrySize(nl, v.geo.FType)
	if off+size > end {
		return 0, false, format.Corrupt("dir3 data entry", "", "entry at %d overruns the block", off)
	}
	if !bytes.Equal(b[off+9:off+9+nl], name) {
		return 0, false, nil
	}
	return format.Ino(uint64(b[off])<<56 | uint64(b[off+1])<<48 | uint64(b[off+2])<<40 | uint64(b[off+3])<<32 |
		uint64(b[off+4])<<24 | uint64(b[off+5])<<16 | uint64(b[off+6])<<8 | uint64(b[off+7])), true, nil
}

func (v *Volume) lookupLeaf(ip *inode, name []byte) (format.Ino, error) {
	ext, err := v.extents(ip, DataFork)
	if err != nil {
		return 0, err
	}
	t := &daTree{v: v, ext: ext, fsbs: v.geo.DirBlockFsbs(), owner: ip.ino, what: "dir3 leaf",
		leafMagics: []uint16{format.Dir3Leaf1Magic, format.Dir3LeafNMagic}}
	root := uint32(uint64(format.DirLeafOffset) >> v.geo.BlockLog)
	hash := format.DaHashName(name)
	da, b, info, err := t.descend(root, hash, false)
	if err != nil {
		return 0, err
	}
	seen := map[uint32]bool{}
	for {
		seen[da] = true
		_, ents, err := format.DecodeDirLeaf(b, info)
		if err != nil {
			return 0, format.Located(err, fmt.Sprintf("dir3 leaf block %d", da))
		}
		i := sort.Search(len(ents), func(i int) bool { return ents[i].HashVal >= hash })
		for ; i < len(ents) && ents[i].HashVal == hash; i++ {
			if ents[i].Address == format.NullDataptr {
				continue
			}
			off := format.DirAddrToOffset(ents[i].Address)
			db := uint32(off / uint64(v.geo.DirBlkSize))
			data, _, err := v.readDirData(ip, ext, db)
			if err != nil {
				return 0, err
			}
			if ino, ok, err := v.entryAt(data, len(data), int(off%uint64(v.geo.DirBlkSize)), name); err != nil || ok {
				return ino, err
			}
		}
		// Equal hashes may continue in the next leaf.
		if i < len(ents) || info.Forw == 0 {
			return 0, ErrNotFound
		}
		prev := da
		da = info.Forw
		where := fmt.Sprintf("%s block %d", t.what, da)
		if seen[da] {
			return 0, format.Corrupt(t.what, where, "leaf sibling chain loops (forward pointer of block %d)", prev)
		}
		if b, info, err = t.read(da); err != nil {
			return 0, err
		}
		if info.Magic != format.Dir3LeafNMagic {
			return 0, format.Corrupt(t.what, where, "leaf sibling has magic %#x", info.Magic)
		}
		if info.Back != prev {
			return 0, format.Corrupt(t.what, where, "back pointer %d, want %d", info.Back, prev)
		}
	}
}
