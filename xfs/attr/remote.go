package attr

import (
	"encoding/binary"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

// Remote values live in attribute-fork blocks of their own, at a hole of
// the fork (xfs_attr_rmt_find_hole). Every filesystem block starts with a
// 56-byte header (xfs_attr3_rmt_hdr):
//
//	magic "XARM" | offset of this piece in the value | bytes in this block | crc
//	uuid | owner | blkno (this block's daddr) | lsn (all ones: never logged)
//
// followed by up to blocksize-56 bytes of the value; the rest of the last
// block is zero.

// nullCommitLSN is what the kernel stamps into remote blocks: they are
// written synchronously, never through the log, and log recovery must
// always replay over them.
const nullCommitLSN = ^uint64(0)

// rmtBlocks is xfs_attr3_rmt_blocks: blocks needed for a value of n bytes.
func rmtBlocks(bs, n int) int {
	per := format.RmtSpace(bs)
	return (n + per - 1) / per
}

// writeRemote stores value in newly mapped blocks at the first hole of
// the fork big enough for it, and returns the first block.
func (o *op) writeRemote(value []byte) (uint32, error) {
	n := rmtBlocks(o.bs, len(value))
	first, err := o.c.FirstUnused(0, n)
	if err != nil {
		return 0, err
	}
	per := format.RmtSpace(o.bs)
	for i := 0; i < n; i++ {
		buf, err := o.c.Alloc(first+uint32(i), rmtOps)
		if err != nil {
			return 0, err
		}
		piece := value[i*per : min(len(value), (i+1)*per)]
		clear(buf.B)
		h := format.RmtHdr{Magic: format.AttrRmtMagic, Offset: uint32(i * per), Bytes: uint32(len(piece)),
			UUID: o.g.UUID, Owner: o.owner, Blkno: buf.Daddr, LSN: format.LSN(nullCommitLSN)}
		h.Encode(buf.B)
		copy(buf.B[format.RmtHdrSize:], piece)
	}
	return first, nil
}

// readRemote reads a remote value of length bytes starting at block blk.
func (o *op) readRemote(blk uint32, length int) ([]byte, error) {
	out := make([]byte, 0, length)
	per := format.RmtSpace(o.bs)
	for no := blk; len(out) < length; no++ {
		b, daddr, err := o.rmtBlock(no)
		if err != nil {
			return nil, err
		}
		want := min(per, length-len(out))
		off, n := binary.BigEndian.Uint32(b[4:]), binary.BigEndian.Uint32(b[8:])
		if int(off) != len(out) || int(n) != want {
			return nil, format.Corrupt("attr remote block", fmt.Sprintf("attr remote block %d (daddr %d)", no, daddr),
				"holds offset %d (%d bytes), want offset %d (%d bytes)", off, n, len(out), want)
		}
		out = append(out, b[format.RmtHdrSize:format.RmtHdrSize+want]...)
	}
	return out, nil
}

// rmtBlock reads remote value block no. A value is read once per
// operation, so its blocks come straight from the fork rather than through
// the operation's block cache.
func (o *op) rmtBlock(no uint32) ([]byte, format.Daddr, error) {
	b, daddr, err := o.r.Read(format.FileOff(no), 1, rmtOps)
	if err == nil {
		err = checkRmtOwner(o.g, b, o.owner)
	}
	if err != nil {
		return nil, 0, format.Located(err, fmt.Sprintf("attr remote block %d", no))
	}
	return b, daddr, nil
}

// freeRemote unmaps the blocks of a remote value of length bytes, one at
// a time like everything else (each block is its own buffer).
func (o *op) freeRemote(blk uint32, length int) error {
	for i := 0; i < rmtBlocks(o.bs, length); i++ {
		if err := o.c.Free(blk + uint32(i)); err != nil {
			return err
		}
	}
	return nil
}
