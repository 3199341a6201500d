package xfs

import (
	"fmt"
	"io"
	"math"

	"github.com/xfs3/xfs3/xfs/format"
)

// ReadAt reads file data at byte offset off. Holes and unwritten extents
// read as zeros. It returns io.EOF when off+len(p) passes the end of file,
// like io.ReaderAt.
func (v *Volume) ReadAt(ino format.Ino, p []byte, off int64) (int, error) {
	defer v.rlock(ino)()
	ip, err := v.iget(ino)
	if err != nil {
		return 0, err
	}
	if ip.isDir() {
		return 0, fmt.Errorf("inode %d: %w", ino, ErrIsDir)
	}
	if !ip.isReg() {
		return 0, fmt.Errorf("inode %d is a %s: %w", ino, format.FileType(ip.core.Mode), ErrInvalid)
	}
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d: %w", off, ErrInvalid)
	}
	size := ip.core.Size
	if off >= size {
		return 0, io.EOF
	}
	want := p
	if int64(len(p)) > size-off {
		want = p[:size-off]
	}
	ext, err := v.extents(ip, DataFork)
	if err != nil {
		return 0, err
	}
	if err := v.readMapped(ext, want, off); err != nil {
		return 0, fmt.Errorf("inode %d: %w", ino, err)
	}
	if len(want) < len(p) {
		return len(want), io.EOF
	}
	return len(p), nil
}

// readMapped fills p with the bytes at byte offset off of a mapped fork,
// reading each contiguous run of blocks with one device read.
func (v *Volume) readMapped(ext []format.Extent, p []byte, off int64) error {
	bs := int64(v.geo.BlockSize)
	for len(p) > 0 {
		fb := format.FileOff(off >> v.geo.BlockLog)
		inBlock := off & (bs - 1)
		fsb, run, ok, unwritten := mapBlock(ext, fb)
		if !ok {
			// A hole: zeros up to the next extent.
			n := int64(len(p))
			// The next extent starts after off; one starting beyond
			// the largest byte offset cannot end the hole early (and
			// its byte offset would overflow).
			if i := lookupExtent(ext, fb); i < len(ext) && uint64(ext[i].StartOff) <= math.MaxInt64>>v.geo.BlockLog {
				if gap := int64(ext[i].StartOff)<<v.geo.BlockLog - off; gap < n {
					n = gap
				}
			}
			clear(p[:n])
			p, off = p[n:], off+n
			continue
		}
		n := int64(run)<<v.geo.BlockLog - inBlock
		if n > int64(len(p)) {
			n = int64(len(p))
		}
		if unwritten {
			clear(p[:n])
		} else if _, err := v.dev.ReadAt(p[:n], format.DaddrToByte(v.geo.FsbToDaddr(fsb))+inBlock); err != nil {
			return err
		}
		p, off = p[n:], off+n
	}
	return nil
}

// readForkBlocks reads count consecutive fork blocks starting at file block
// off into one buffer; every block must be mapped (metadata has no holes).
// It also returns the disk address of the first block, which v5 headers
// record as their own location.
func (v *Volume) readForkBlocks(ext []format.Extent, off format.FileOff, count int) ([]byte, format.Daddr, error) {
	b := make([]byte, count<<v.geo.BlockLog)
	var first format.Daddr
	for done := 0; done < count; {
		fsb, run, ok, _ := mapBlock(ext, off+format.FileOff(done))
		if !ok {
			return nil, 0, format.Corrupt("fork", "", "metadata block %d is a hole", uint64(off)+uint64(done))
		}
		if done == 0 {
			first = v.geo.FsbToDaddr(fsb)
		}
		n := int(min(run, uint64(count-done)))
		if err := v.readAt(b[done<<v.geo.BlockLog:(done+n)<<v.geo.BlockLog], v.geo.FsbToDaddr(fsb)); err != nil {
			return nil, 0, err
		}
		done += n
	}
	return b, first, nil
}

// Readlink returns a symlink's target.
func (v *Volume) Readlink(ino format.Ino) (string, error) {
	defer v.rlock(ino)()
	ip, err := v.iget(ino)
	if err != nil {
		return "", err
	}
	if !ip.isLink() {
		return "", fmt.Errorf("inode %d is not a symlink: %w", ino, ErrInvalid)
	}
	size := ip.core.Size
	where := fmt.Sprintf("inode %d", ino)
	if size <= 0 || size > format.MaxSymlinkLen {
		return "", format.Corrupt("symlink", where, "bad length %d", size)
	}
	if ip.core.Format == format.FmtLocal {
		fork := ip.fork(DataFork)
		if size > int64(len(fork)) {
			return "", format.Corrupt("symlink", where, "inline target of %d bytes overruns the fork", size)
		}
		return string(fork[:size]), nil
	}
	ext, err := v.extents(ip, DataFork)
	if err != nil {
		return "", err
	}
	target, err := v.readSymlinkBlocks(ext, int(size), ino)
	if err != nil {
		return "", format.Located(err, where)
	}
	return string(target), nil
}

// readSymlinkBlocks reads a remote symlink target. Unlike remote xattr
// values, a symlink has one header per extent (the kernel writes each
// mapped extent as one buffer), with the CRC over the whole extent.
func (v *Volume) readSymlinkBlocks(ext []format.Extent, length int, owner format.Ino) ([]byte, error) {
	out := make([]byte, 0, length)
	for _, e := range ext {
		if len(out) >= length {
			break
		}
		if e.Unwritten {
			return nil, format.Corrupt("symlink block", "", "unwritten extent in a symlink")
		}
		if e.BlockCount > uint64(format.MaxSymlinkLen+format.RmtHdrSize)>>v.geo.BlockLog+1 {
			return nil, format.Corrupt("symlink block", "", "extent of %d blocks for a target of %d bytes", e.BlockCount, length)
		}
		b, daddr, err := v.readForkBlocks(ext, e.StartOff, int(e.BlockCount))
		if err != nil {
			return nil, err
		}
		payload, err := format.VerifyRmtBlock(&v.geo, "symlink block", format.SymlinkMagic, b, daddr, owner, uint32(len(out)))
		if err != nil {
			return nil, format.Located(err, fmt.Sprintf("daddr %d", daddr))
		}
		if want := min(len(b)-format.RmtHdrSize, length-len(out)); len(payload) != want {
			return nil, format.Corrupt("symlink block", fmt.Sprintf("daddr %d", daddr), "holds %d bytes, want %d", len(payload), want)
		}
		out = append(out, payload...)
	}
	if len(out) != length {
		return nil, format.Corrupt("symlink", "", "extents hold %d of %d bytes", len(out), length)
	}
	return out, nil
}
