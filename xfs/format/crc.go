package format

import (
	"encoding/binary"
	"hash/crc32"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// zeroCRC stands for the CRC field while the CRC is computed; a local
// array would escape through crc32's function values, an allocation per
// call.
var zeroCRC [4]byte

// ComputeCRC returns the CRC32c of buf as if the 4 bytes at crcOff were zero.
func ComputeCRC(buf []byte, crcOff int) uint32 {
	c := crc32.Update(0, castagnoli, buf[:crcOff])
	c = crc32.Update(c, castagnoli, zeroCRC[:])
	return crc32.Update(c, castagnoli, buf[crcOff+4:])
}

// CRCOK reports whether the little-endian CRC stored at crcOff matches buf.
func CRCOK(buf []byte, crcOff int) bool {
	if len(buf) < crcOff+4 {
		return false
	}
	return binary.LittleEndian.Uint32(buf[crcOff:]) == ComputeCRC(buf, crcOff)
}

// SetCRC stores the CRC32c of buf at crcOff.
func SetCRC(buf []byte, crcOff int) {
	binary.LittleEndian.PutUint32(buf[crcOff:], ComputeCRC(buf, crcOff))
}

// CRC32c is the plain checksum, for the log and anything else that needs it.
func CRC32c(seed uint32, b []byte) uint32 { return crc32.Update(seed, castagnoli, b) }

// checkCRC returns a CorruptError when the CRC at crcOff does not match.
func checkCRC(structure string, buf []byte, crcOff int) error {
	if len(buf) < crcOff+4 {
		return Corrupt(structure, "", "%d bytes is too short", len(buf))
	}
	if !CRCOK(buf, crcOff) {
		return Corrupt(structure, "", "bad CRC (stored %#08x, computed %#08x)",
			binary.LittleEndian.Uint32(buf[crcOff:]), ComputeCRC(buf, crcOff))
	}
	return nil
}
