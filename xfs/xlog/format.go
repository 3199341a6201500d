// Package xlog owns the XFS metadata log inside the data device: finding
// its head and tail, telling a clean log from one that needs recovery, and
// (in later issues) writing checkpoints and replaying them.
//
// The log is a circular array of 512-byte basic blocks (BB). Each record is
// one header sector followed by h_len bytes of payload; the first word of
// every payload sector is overwritten with the record's cycle number (its
// original word saved in the header), so a block's cycle can be read from
// its first word, or from word 1 of a header sector:
//
//	BB:    0        1..n      n+1       ...      head          size-1
//	       [hdr C]  [data C]  [hdr C]   ...  |  [old C-1 or 0]  ...
//
// The head is where the cycle number drops; a log is clean when the record
// just before the head is an unmount record.
package xlog

import "encoding/binary"

// Record and operation constants (xfs_log_format.h).
const (
	HeaderMagic    = 0xFEEDBABE
	RecHeaderSize  = 328 // bytes of xlog_rec_header that carry data; it owns a whole sector
	CycleDataSlots = 64  // h_cycle_data words in the first header sector

	ClientTransaction = 0x69
	ClientLog         = 0xAA

	OpStart    = 0x01
	OpCommit   = 0x02
	OpContinue = 0x04
	OpWasCont  = 0x08
	OpEnd      = 0x10
	OpUnmount  = 0x20

	OpHeaderSize     = 12
	UnmountMagic     = 0x556E // "Un"
	RecordVersion2   = 2
	FmtLinuxLE       = 1
	DefaultIclogSize = 32768
)

// RecHeader is struct xlog_rec_header.
type RecHeader struct {
	Magic     uint32                 // h_magicno
	Cycle     uint32                 // h_cycle
	Version   uint32                 // h_version
	Len       uint32                 // h_len: payload bytes
	LSN       uint64                 // h_lsn
	TailLSN   uint64                 // h_tail_lsn
	CRC       uint32                 // h_crc (little-endian)
	PrevBlock int32                  // h_prev_block
	NumLogops uint32                 // h_num_logops
	CycleData [CycleDataSlots]uint32 // h_cycle_data
	Fmt       uint32                 // h_fmt
	FsUUID    [16]byte               // h_fs_uuid
	Size      uint32                 // h_size: iclog size
}

// DecodeRecHeader parses a record header sector.
func DecodeRecHeader(b []byte) RecHeader {
	be := binary.BigEndian
	h := RecHeader{Magic: be.Uint32(b), Cycle: be.Uint32(b[4:]), Version: be.Uint32(b[8:]), Len: be.Uint32(b[12:]),
		LSN: be.Uint64(b[16:]), TailLSN: be.Uint64(b[24:]), CRC: binary.LittleEndian.Uint32(b[32:]),
		PrevBlock: int32(be.Uint32(b[36:])), NumLogops: be.Uint32(b[40:]), Fmt: be.Uint32(b[300:]), Size: be.Uint32(b[320:])}
	for i := range h.CycleData {
		h.CycleData[i] = be.Uint32(b[44+4*i:])
	}
	copy(h.FsUUID[:], b[304:320])
	return h
}

// Encode writes the header into a zeroed sector.
func (h *RecHeader) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b, h.Magic)
	be.PutUint32(b[4:], h.Cycle)
	be.PutUint32(b[8:], h.Version)
	be.PutUint32(b[12:], h.Len)
	be.PutUint64(b[16:], h.LSN)
	be.PutUint64(b[24:], h.TailLSN)
	binary.LittleEndian.PutUint32(b[32:], h.CRC)
	be.PutUint32(b[36:], uint32(h.PrevBlock))
	be.PutUint32(b[40:], h.NumLogops)
	for i, v := range h.CycleData {
		be.PutUint32(b[44+4*i:], v)
	}
	be.PutUint32(b[300:], h.Fmt)
	copy(b[304:320], h.FsUUID[:])
	be.PutUint32(b[320:], h.Size)
}

// MakeLSN joins a cycle and a block number.
func MakeLSN(cycle uint32, block uint32) uint64 { return uint64(cycle)<<32 | uint64(block) }
