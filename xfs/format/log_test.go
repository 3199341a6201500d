package format

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
)

// testdata/log/kernel-unmount-record.bin is the unmount record Linux 6.18
// wrote when it unmounted a filesystem: one header sector and one payload
// sector, with a CRC computed by the kernel.
func TestLogRecordCRCMatchesKernel(t *testing.T) {
	rec, err := os.ReadFile("testdata/log/kernel-unmount-record.bin")
	if err != nil {
		t.Fatal(err)
	}
	h, err := DecodeLogRecHeader(rec)
	if err != nil {
		t.Fatal(err)
	}
	if h.Magic != LogHeaderMagic || h.Version != LogVersion2 || h.NumLogOps != 1 || h.Len != BBSize {
		t.Fatalf("unexpected header %+v", h)
	}
	hdrs := LogRecHeaderSectors(h.Size)
	if got := LogRecordCRC(rec, hdrs, rec[hdrs*BBSize:hdrs*BBSize+int(h.Len)]); got != h.CRC {
		t.Errorf("LogRecordCRC = %#x, the kernel stored %#x", got, h.CRC)
	}
	// Re-encoding the unstamped payload must give back the kernel's bytes.
	payload := append([]byte(nil), rec[BBSize:2*BBSize]...)
	binary.BigEndian.PutUint32(payload, h.CycleData[0])
	h2 := *h
	out, err := EncodeLogRecord(&h2, payload)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, rec) {
		t.Errorf("EncodeLogRecord does not reproduce the kernel's record")
	}
	op := DecodeLogOpHeader(payload)
	if op.ClientID != LogClientLog || op.Flags != LogOpUnmountTrans {
		t.Errorf("op header %+v is not an unmount op", op)
	}
}

func TestUnmountRecord(t *testing.T) {
	uuid := [16]byte{0xde, 0xad, 0xbe, 0xef}
	for _, c := range []struct {
		recBytes, hdrs, total int
	}{
		{0, 1, 1024},      // 512-byte log sectors, no stripe unit
		{4096, 1, 4096},   // 4 KiB log stripe unit
		{65536, 2, 65536}, // stripe unit over 32 KiB: an extended header
		{256 << 10, 8, 256 << 10},
	} {
		rec, err := UnmountRecord(uuid, 1, 0, MakeLSN(1, 0), c.recBytes, LogMkfsUnmountTid)
		if err != nil {
			t.Fatal(err)
		}
		if len(rec) != c.total {
			t.Errorf("recBytes %d: record of %d bytes, want %d", c.recBytes, len(rec), c.total)
			continue
		}
		h, _ := DecodeLogRecHeader(rec)
		if got := LogRecHeaderSectors(h.Size); got != c.hdrs {
			t.Errorf("recBytes %d: %d header sectors, want %d", c.recBytes, got, c.hdrs)
		}
		if h.LSN != MakeLSN(1, 0) || h.TailLSN != MakeLSN(1, 0) || h.PrevBlock != -1 || h.Fmt != LogFmtLinuxLE ||
			h.FsUUID != uuid || int(h.Len) != c.total-c.hdrs*BBSize {
			t.Errorf("recBytes %d: header %+v", c.recBytes, h)
		}
		data := rec[c.hdrs*BBSize:]
		if got := LogRecordCRC(rec, c.hdrs, data); got != h.CRC {
			t.Errorf("recBytes %d: stored CRC %#x, recomputed %#x", c.recBytes, h.CRC, got)
		}
		// Every payload sector starts with the cycle; the displaced word
		// of the first one is the op header's transaction ID.
		for i := 0; i < len(data); i += BBSize {
			if binary.BigEndian.Uint32(data[i:]) != 1 {
				t.Errorf("recBytes %d: payload sector %d not stamped with the cycle", c.recBytes, i/BBSize)
				break
			}
		}
		for k := 1; k < c.hdrs; k++ {
			if binary.BigEndian.Uint32(rec[k*BBSize:]) != 1 {
				t.Errorf("recBytes %d: extended header %d has no cycle", c.recBytes, k)
			}
		}
		if h.CycleData[0] != LogMkfsUnmountTid {
			t.Errorf("recBytes %d: cycle data %#x, want the tid", c.recBytes, h.CycleData[0])
		}
		op := DecodeLogOpHeader(data)
		if op.Len != LogUnmountFormatSize || op.ClientID != LogClientLog || op.Flags != LogOpUnmountTrans {
			t.Errorf("recBytes %d: op header %+v", c.recBytes, op)
		}
		if binary.LittleEndian.Uint16(data[LogOpHeaderSize:]) != LogUnmountMagic {
			t.Errorf("recBytes %d: no unmount magic", c.recBytes)
		}
	}
	if _, err := UnmountRecord(uuid, 1, 0, 0, 1500, 1); err == nil {
		t.Errorf("a record size that is not a multiple of 512 was accepted")
	}
}

func TestLogRecHeaderLayout(t *testing.T) {
	h := &LogRecHeader{Magic: 0x11111111, Cycle: 0x22222222, Version: 0x33333333, Len: 0x44444444,
		LSN: 0x5555555555555555, TailLSN: 0x6666666666666666, CRC: 0x77777777, PrevBlock: 0x08888888,
		NumLogOps: 0x09999999, Fmt: 0x0AAAAAAA, Size: 0x0BBBBBBB}
	h.CycleData[0], h.CycleData[63] = 0x0CCCCCCC, 0x0DDDDDDD
	h.FsUUID[0], h.FsUUID[15] = 0xE1, 0xE2
	b := make([]byte, LogRecHeaderSize)
	h.Encode(b)
	be := binary.BigEndian
	for _, f := range []struct {
		name string
		off  int
		got  uint64
		want uint64
	}{
		{"h_magicno", 0, uint64(be.Uint32(b[0:])), 0x11111111},
		{"h_cycle", 4, uint64(be.Uint32(b[4:])), 0x22222222},
		{"h_version", 8, uint64(be.Uint32(b[8:])), 0x33333333},
		{"h_len", 12, uint64(be.Uint32(b[12:])), 0x44444444},
		{"h_lsn", 16, be.Uint64(b[16:]), 0x5555555555555555},
		{"h_tail_lsn", 24, be.Uint64(b[24:]), 0x6666666666666666},
		{"h_crc (LE)", 32, uint64(binary.LittleEndian.Uint32(b[32:])), 0x77777777},
		{"h_prev_block", 36, uint64(be.Uint32(b[36:])), 0x08888888},
		{"h_num_logops", 40, uint64(be.Uint32(b[40:])), 0x09999999},
		{"h_cycle_data[0]", 44, uint64(be.Uint32(b[44:])), 0x0CCCCCCC},
		{"h_cycle_data[63]", 296, uint64(be.Uint32(b[296:])), 0x0DDDDDDD},
		{"h_fmt", 300, uint64(be.Uint32(b[300:])), 0x0AAAAAAA},
		{"h_fs_uuid[0]", 304, uint64(b[304]), 0xE1},
		{"h_fs_uuid[15]", 319, uint64(b[319]), 0xE2},
		{"h_size", 320, uint64(be.Uint32(b[320:])), 0x0BBBBBBB},
	} {
		if f.got != f.want {
			t.Errorf("%s at %d: %#x, want %#x", f.name, f.off, f.got, f.want)
		}
	}
	d, err := DecodeLogRecHeader(b)
	if err != nil || *d != *h {
		t.Errorf("decode(encode(h)) = %+v, %v", d, err)
	}
}
