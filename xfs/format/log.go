package format

import (
	"encoding/binary"
	"fmt"
)

// The XFS log is a circular run of 512-byte basic blocks (BBs) holding
// records. A record is one or more header sectors followed by its payload:
//
//	| rec header (1 BB) | ext header (1 BB) ... | payload BB 0 | payload BB 1 | ...
//	  h_cycle_data[i] keeps the first word of payload BB i (i < 64); ext
//	  header k keeps the words of payload BBs 64k..64k+63. On disk the
//	  first word of every payload BB is overwritten with the record's
//	  cycle, so a reader can find the head by looking at cycle numbers.
//
// Everything in the header is big-endian except h_crc (little-endian).
// The payload holds op headers (big-endian) and item formats (host-endian,
// little-endian on the machines Linux XFS runs on).

// Log record constants.
const (
	// MinLogBlocks is XFS_MIN_LOG_BLOCKS: the kernel mounts no v5
	// filesystem whose log has fewer blocks (its minimum, computed from
	// the transaction reservations, is never below this).
	MinLogBlocks = 512

	LogHeaderMagic = 0xFEEDBABE // h_magicno
	LogVersion2    = 2          // h_version of a v2 log
	LogFmtLinuxLE  = 1          // h_fmt: little-endian Linux

	// LogRecHeaderSize is sizeof(struct xlog_rec_header) on the 64-bit
	// machines the kernel runs on: 324 bytes of fields plus 4 bytes of
	// tail padding. The record CRC covers exactly this many bytes.
	LogRecHeaderSize = 328
	LogRecCRCOff     = 32
	// LogExtHeaderSize is sizeof(struct xlog_rec_ext_header): xh_cycle
	// and 64 words of cycle data.
	LogExtHeaderSize = 4 + 4*LogCycleDataWords

	// LogHeaderCycleSize is the payload one header sector can describe.
	LogHeaderCycleSize = 32 * 1024
	// LogCycleDataWords is the number of h_cycle_data words per header.
	LogCycleDataWords = LogHeaderCycleSize / BBSize
	// LogBigRecordSize is the smallest h_size the kernel writes (the
	// size of an in-core log buffer for a v2 log).
	LogBigRecordSize = 32 * 1024

	// LogOpHeaderSize is sizeof(struct xlog_op_header).
	LogOpHeaderSize = 12

	// Op header client IDs and flags.
	LogClientTransaction = 0x69
	LogClientLog         = 0xAA
	LogOpStartTrans      = 0x01
	LogOpCommitTrans     = 0x02
	LogOpContinueTrans   = 0x04
	LogOpWasContTrans    = 0x08
	LogOpEndTrans        = 0x10
	LogOpUnmountTrans    = 0x20

	// LogUnmountMagic is the magic of xfs_unmount_log_format ("Un").
	LogUnmountMagic = 0x556E
	// LogUnmountFormatSize is sizeof(struct xfs_unmount_log_format).
	LogUnmountFormatSize = 8
	// LogMkfsUnmountTid is the transaction ID mkfs.xfs and xfs_repair put
	// in the unmount record of a freshly formatted log.
	LogMkfsUnmountTid = 0xB0C0D0D0
)

// MakeLSN builds a log sequence number from a cycle and a BB offset.
func MakeLSN(cycle, block uint32) LSN { return LSN(uint64(cycle)<<32 | uint64(block)) }

// Cycle is the wrap count of the log position.
func (l LSN) Cycle() uint32 { return uint32(l >> 32) }

// Block is the BB offset from the start of the log.
func (l LSN) Block() uint32 { return uint32(l) }

// LogRecHeader is struct xlog_rec_header in disk order.
type LogRecHeader struct {
	Magic     uint32                    // h_magicno
	Cycle     uint32                    // h_cycle
	Version   uint32                    // h_version
	Len       uint32                    // h_len: payload bytes
	LSN       LSN                       // h_lsn
	TailLSN   LSN                       // h_tail_lsn
	CRC       uint32                    // h_crc (little-endian)
	PrevBlock int32                     // h_prev_block, -1 for none
	NumLogOps uint32                    // h_num_logops
	CycleData [LogCycleDataWords]uint32 // h_cycle_data
	Fmt       uint32                    // h_fmt
	FsUUID    [16]byte                  // h_fs_uuid
	Size      uint32                    // h_size: in-core log buffer size
}

// Encode writes the header into the first LogRecHeaderSize bytes of b.
func (h *LogRecHeader) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b[0:], h.Magic)
	be.PutUint32(b[4:], h.Cycle)
	be.PutUint32(b[8:], h.Version)
	be.PutUint32(b[12:], h.Len)
	be.PutUint64(b[16:], uint64(h.LSN))
	be.PutUint64(b[24:], uint64(h.TailLSN))
	binary.LittleEndian.PutUint32(b[32:], h.CRC)
	be.PutUint32(b[36:], uint32(h.PrevBlock))
	be.PutUint32(b[40:], h.NumLogOps)
	for i, w := range h.CycleData {
		be.PutUint32(b[44+4*i:], w)
	}
	be.PutUint32(b[300:], h.Fmt)
	copy(b[304:320], h.FsUUID[:])
	be.PutUint32(b[320:], h.Size)
	be.PutUint32(b[324:], 0)
}

// DecodeLogRecHeader parses a record header sector without verifying it.
func DecodeLogRecHeader(b []byte) (*LogRecHeader, error) {
	if len(b) < LogRecHeaderSize {
		return nil, Corrupt("log record header", "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	h := &LogRecHeader{
		Magic: be.Uint32(b[0:]), Cycle: be.Uint32(b[4:]), Version: be.Uint32(b[8:]), Len: be.Uint32(b[12:]),
		LSN: LSN(be.Uint64(b[16:])), TailLSN: LSN(be.Uint64(b[24:])), CRC: binary.LittleEndian.Uint32(b[32:]),
		PrevBlock: int32(be.Uint32(b[36:])), NumLogOps: be.Uint32(b[40:]),
		Fmt: be.Uint32(b[300:]), Size: be.Uint32(b[320:]),
	}
	for i := range h.CycleData {
		h.CycleData[i] = be.Uint32(b[44+4*i:])
	}
	copy(h.FsUUID[:], b[304:320])
	return h, nil
}

// LogRecHeaderSectors is the number of header BBs (the record header plus
// extended headers) in front of a record whose h_size is size: a v2 record
// needs one header per 32 KiB of in-core buffer.
func LogRecHeaderSectors(size uint32) int {
	if size <= LogHeaderCycleSize {
		return 1
	}
	return int((size + LogHeaderCycleSize - 1) / LogHeaderCycleSize)
}

// EncodeLogRecord lays out a complete record: header sectors followed by
// the payload, with the cycle stamped into every payload BB, the displaced
// words saved in the headers, and h_crc computed. h.Len is set from the
// payload, which must be a whole number of BBs; payload is not modified.
func EncodeLogRecord(h *LogRecHeader, payload []byte) ([]byte, error) {
	hdrs := LogRecHeaderSectors(h.Size)
	out := make([]byte, hdrs*BBSize+len(payload))
	copy(out[hdrs*BBSize:], payload)
	if err := SealLogRecord(h, out); err != nil {
		return nil, err
	}
	return out, nil
}

// SealLogRecord is EncodeLogRecord in place: rec holds room for the header
// sectors followed by the payload, which it stamps; the header sectors are
// overwritten whole. The log writer lays whole batches out in one reused
// buffer this way, with no copy per record.
func SealLogRecord(h *LogRecHeader, rec []byte) error {
	hdrs := LogRecHeaderSectors(h.Size)
	payloadLen := len(rec) - hdrs*BBSize
	if payloadLen <= 0 || payloadLen%BBSize != 0 {
		return fmt.Errorf("log record payload of %d bytes is not a whole number of basic blocks", payloadLen)
	}
	nsect := payloadLen / BBSize
	if nsect > hdrs*LogCycleDataWords {
		return fmt.Errorf("log record payload of %d bytes needs more than %d header sectors", payloadLen, hdrs)
	}
	clear(rec[:hdrs*BBSize])
	data := rec[hdrs*BBSize:]
	h.Len = uint32(payloadLen)
	be := binary.BigEndian
	for i := 0; i < nsect; i++ {
		word := be.Uint32(data[i*BBSize:])
		if i < LogCycleDataWords {
			h.CycleData[i] = word
		} else {
			ext := rec[(i/LogCycleDataWords)*BBSize:]
			be.PutUint32(ext[4+4*(i%LogCycleDataWords):], word)
		}
		be.PutUint32(data[i*BBSize:], h.Cycle)
	}
	for k := 1; k < hdrs; k++ {
		be.PutUint32(rec[k*BBSize:], h.Cycle) // xh_cycle
	}
	h.CRC = 0
	h.Encode(rec)
	h.CRC = LogRecordCRC(rec, hdrs, data)
	binary.LittleEndian.PutUint32(rec[LogRecCRCOff:], h.CRC)
	return nil
}

// LogRecordCRC computes h_crc the way the kernel does: over the record
// header (with h_crc taken as zero), the extended headers that the payload
// length calls for, and the payload as written (already cycle-stamped).
// rec holds the header sectors; hdrs is how many there are.
func LogRecordCRC(rec []byte, hdrs int, payload []byte) uint32 {
	var zero [4]byte
	// CRC32c chains like hash/crc32.Update: seed 0 here is the kernel's
	// ~0 seed, and the result is already inverted.
	c := CRC32c(0, rec[:LogRecCRCOff])
	c = CRC32c(c, zero[:])
	c = CRC32c(c, rec[LogRecCRCOff+4:LogRecHeaderSize])
	xheads := (len(payload) + LogHeaderCycleSize - 1) / LogHeaderCycleSize
	for k := 1; k < xheads && k < hdrs; k++ {
		c = CRC32c(c, rec[k*BBSize:k*BBSize+LogExtHeaderSize])
	}
	return CRC32c(c, payload)
}

// LogOpHeader is struct xlog_op_header (big-endian).
type LogOpHeader struct {
	Tid      uint32 // oh_tid
	Len      uint32 // oh_len: bytes of region data after this header
	ClientID uint8  // oh_clientid
	Flags    uint8  // oh_flags
	Res2     uint16 // oh_res2
}

// Encode writes the op header into 12 bytes.
func (o *LogOpHeader) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b[0:], o.Tid)
	be.PutUint32(b[4:], o.Len)
	b[8], b[9] = o.ClientID, o.Flags
	be.PutUint16(b[10:], o.Res2)
}

// DecodeLogOpHeader parses a 12-byte op header.
func DecodeLogOpHeader(b []byte) LogOpHeader {
	be := binary.BigEndian
	return LogOpHeader{Tid: be.Uint32(b[0:]), Len: be.Uint32(b[4:]), ClientID: b[8], Flags: b[9], Res2: be.Uint16(b[10:])}
}

// UnmountRecord builds the record that marks a log clean: one op of the
// log client with the UNMOUNT flag, carrying xfs_unmount_log_format (whose
// magic is host-endian, so little-endian). The record is placed at BB
// block of the log with the given cycle and tail, padded to recBytes (the
// log stripe unit in bytes, or 0 for the 1 KiB minimum), and carries a
// valid CRC.
func UnmountRecord(uuid [16]byte, cycle, block uint32, tail LSN, recBytes int, tid uint32) ([]byte, error) {
	if recBytes < 2*BBSize {
		recBytes = 2 * BBSize
	}
	if recBytes%BBSize != 0 {
		return nil, fmt.Errorf("log record size %d is not a multiple of %d", recBytes, BBSize)
	}
	size := uint32(LogBigRecordSize)
	if uint32(recBytes) > size {
		size = uint32(recBytes)
	}
	hdrs := LogRecHeaderSectors(size)
	if recBytes <= hdrs*BBSize {
		return nil, fmt.Errorf("log record size %d leaves no room after %d header sectors", recBytes, hdrs)
	}
	payload := make([]byte, recBytes-hdrs*BBSize)
	op := LogOpHeader{Tid: tid, Len: LogUnmountFormatSize, ClientID: LogClientLog, Flags: LogOpUnmountTrans}
	op.Encode(payload)
	binary.LittleEndian.PutUint16(payload[LogOpHeaderSize:], LogUnmountMagic)
	h := &LogRecHeader{
		Magic: LogHeaderMagic, Cycle: cycle, Version: LogVersion2,
		LSN: MakeLSN(cycle, block), TailLSN: tail, PrevBlock: -1, NumLogOps: 1,
		Fmt: LogFmtLinuxLE, FsUUID: uuid, Size: size,
	}
	return EncodeLogRecord(h, payload)
}
