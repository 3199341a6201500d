package xfs

import (
	"fmt"
	"sync"

	"github.com/xfs3/xfs3/xfs/format"
)

// Fork selects an inode's data or attribute fork.
type Fork int

const (
	DataFork Fork = iota
	AttrFork
)

func (f Fork) String() string {
	if f == AttrFork {
		return "attr fork"
	}
	return "data fork"
}

// inode is the in-memory form of an on-disk inode: its verified core and
// raw bytes, plus fork mappings loaded on first use. Immutable once cached
// (read-only volumes); the write path will add a lock here.
type inode struct {
	ino  format.Ino
	core *format.Dinode
	raw  []byte

	maps [2]struct {
		once sync.Once
		ext  []format.Extent
		err  error
	}
}

// fork returns the raw bytes of a fork inside the inode's literal area.
func (ip *inode) fork(f Fork) []byte {
	data, attr := ip.core.Forks(ip.raw)
	if f == AttrFork {
		return attr
	}
	return data
}

func (ip *inode) format(f Fork) int8 {
	if f == AttrFork {
		return ip.core.AFormat
	}
	return ip.core.Format
}

func (ip *inode) nextents(f Fork) uint64 {
	if f == AttrFork {
		return ip.core.AttrExtents()
	}
	return ip.core.DataExtents()
}

func (ip *inode) isDir() bool  { return ip.core.Mode&format.SIFMT == format.SIFDIR }
func (ip *inode) isReg() bool  { return ip.core.Mode&format.SIFMT == format.SIFREG }
func (ip *inode) isLink() bool { return ip.core.Mode&format.SIFMT == format.SIFLNK }

// inodeCache bounds the number of decoded inodes kept in memory.
type inodeCache struct {
	mu    sync.Mutex // guards m
	m     map[format.Ino]*inode
	limit int
}

func (c *inodeCache) init() {
	c.m = make(map[format.Ino]*inode)
	c.limit = 1 << 14
}

func (c *inodeCache) get(ino format.Ino) *inode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[ino]
}

func (c *inodeCache) put(ip *inode) *inode {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[ip.ino]; ok {
		return old
	}
	if len(c.m) >= c.limit {
		// Evict an arbitrary eighth; map order is random enough for a
		// read cache and keeps this O(1) amortised.
		n := c.limit / 8
		for k := range c.m {
			delete(c.m, k)
			if n--; n == 0 {
				break
			}
		}
	}
	c.m[ip.ino] = ip
	return ip
}

// iget returns the verified in-use inode ino.
func (v *Volume) iget(ino format.Ino) (*inode, error) {
	if ip := v.icache.get(ino); ip != nil {
		return ip, nil
	}
	off, err := v.geo.InoLocation(ino)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, v.geo.InodeSize)
	if _, err := v.dev.ReadAt(raw, off); err != nil {
		return nil, fmt.Errorf("read inode %d: %w", ino, err)
	}
	core, err := format.VerifyInode(&v.geo, ino, raw)
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("inode %d", ino))
	}
	if core.Mode == 0 {
		return nil, format.Corrupt("inode", fmt.Sprintf("inode %d", ino), "referenced inode is free")
	}
	return v.icache.put(&inode{ino: ino, core: core, raw: raw}), nil
}
