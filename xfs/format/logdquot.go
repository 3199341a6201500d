package format

import "encoding/binary"

// Dquot log item (XFS_LI_DQUOT): the kernel logs a changed dquot as
// itself rather than as its buffer. Two regions: an xfs_dq_logformat
// (host-endian), then the record's xfs_disk_dquot (the first 104 bytes of
// the 136-byte xfs_dqblk, on-disk big-endian). Recovery copies the core
// over the record at DqBoffset of the dquot block and recomputes that
// record's CRC.
const (
	DqLogFormatSize = 24
	// DiskDquotSize is sizeof(struct xfs_disk_dquot): what a dquot item
	// logs of a record (not the fill, CRC, LSN and UUID).
	DiskDquotSize = 104
	// DqblkSize is sizeof(struct xfs_dqblk); a record's CRC and LSN sit
	// at DqblkCRCOff and DqblkLSNOff.
	DqblkSize   = 136
	DqblkCRCOff = 108
	DqblkLSNOff = 112
)

// DqLogFormat is struct xfs_dq_logformat.
type DqLogFormat struct {
	ID      uint32 // qlf_id
	Blkno   int64  // qlf_blkno: daddr of the dquot block
	Len     int32  // qlf_len: the block's length in filesystem blocks (1)
	Boffset uint32 // qlf_boffset: the record's byte offset in the block
}

// Encode writes the format region (type, 2 regions) into 24 bytes.
func (f *DqLogFormat) Encode(b []byte) {
	le := binary.LittleEndian
	le.PutUint16(b[0:], LogItemDquot)
	le.PutUint16(b[2:], 2)
	le.PutUint32(b[4:], f.ID)
	le.PutUint64(b[8:], uint64(f.Blkno))
	le.PutUint32(b[16:], uint32(f.Len))
	le.PutUint32(b[20:], f.Boffset)
}

// DecodeDqLogFormat parses and checks a dquot item's format region.
func DecodeDqLogFormat(b []byte) (*DqLogFormat, error) {
	const what = "dquot log item"
	if len(b) < DqLogFormatSize {
		return nil, Corrupt(what, "", "format of %d bytes is too short", len(b))
	}
	le := binary.LittleEndian
	if t := le.Uint16(b); t != LogItemDquot {
		return nil, Corrupt(what, "", "type %#x", t)
	}
	if n := le.Uint16(b[2:]); n != 2 {
		return nil, Corrupt(what, "", "%d regions, want 2", n)
	}
	f := &DqLogFormat{ID: le.Uint32(b[4:]), Blkno: int64(le.Uint64(b[8:])), Len: int32(le.Uint32(b[16:])), Boffset: le.Uint32(b[20:])}
	if f.Blkno < 0 || f.Len != 1 {
		return nil, Corrupt(what, "", "id %d: block %d of %d filesystem blocks", f.ID, f.Blkno, f.Len)
	}
	return f, nil
}
