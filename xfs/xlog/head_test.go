package xlog

import (
	"bytes"
	"errors"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// logImage is an in-memory log of n basic blocks.
type logImage []byte

func (l logImage) ReadAt(p []byte, off int64) (int, error) { return copy(p, l[off:]), nil }

// put writes rec at BB block, wrapping at the end like the kernel does:
// the sectors written after the wrap carry the next cycle number.
func (l logImage) put(block int, rec []byte) {
	n := len(l) / 512
	for i := 0; i < len(rec); i += 512 {
		bb := block + i/512
		copy(l[(bb%n)*512:], rec[i:i+512])
		if bb >= n {
			w := l[(bb%n)*512:]
			c := uint32(w[0])<<24 | uint32(w[1])<<16 | uint32(w[2])<<8 | uint32(w[3]) + 1
			w[0], w[1], w[2], w[3] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
		}
	}
}

// fill stamps every BB in [from, to) with cycle, like old records would.
func (l logImage) fill(from, to int, cycle uint32) {
	for bb := from; bb < to; bb++ {
		b := l[bb*512 : bb*512+512]
		clear(b)
		b[0], b[1], b[2], b[3] = byte(cycle>>24), byte(cycle>>16), byte(cycle>>8), byte(cycle)
	}
}

func unmountRec(t *testing.T, cycle uint32, block int, recBytes int) []byte {
	t.Helper()
	rec, err := format.UnmountRecord([16]byte{1}, cycle, uint32(block), format.MakeLSN(cycle, uint32(block)), recBytes, 1)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func transRec(t *testing.T, cycle uint32, block int) []byte {
	t.Helper()
	payload := make([]byte, 1024)
	op := format.LogOpHeader{Tid: 7, ClientID: format.LogClientTransaction, Flags: format.LogOpStartTrans}
	op.Encode(payload)
	h := &format.LogRecHeader{Magic: format.LogHeaderMagic, Cycle: cycle, Version: format.LogVersion2,
		LSN: format.MakeLSN(cycle, uint32(block)), NumLogOps: 1, Size: format.LogBigRecordSize}
	rec, err := format.EncodeLogRecord(h, payload)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestCheckClean(t *testing.T) {
	const blocks = 4096
	tests := []struct {
		name  string
		build func(l logImage)
		clean bool
	}{
		{"mkfs: unmount record at 0, rest zero", func(l logImage) {
			l.put(0, unmountRec(t, 1, 0, 0))
		}, true},
		{"unmount record after older records", func(l logImage) {
			l.put(0, transRec(t, 1, 0))
			l.put(3, unmountRec(t, 1, 3, 0))
		}, true},
		{"transaction after the unmount record", func(l logImage) {
			l.put(0, unmountRec(t, 1, 0, 0))
			l.put(2, transRec(t, 1, 2))
		}, false},
		{"wrapped: unmount record in cycle 2 over cycle 1", func(l logImage) {
			l.fill(0, blocks, 1)
			l.put(0, transRec(t, 2, 0))
			l.put(3, unmountRec(t, 2, 3, 0))
		}, true},
		{"unmount record straddling the end of the log", func(l logImage) {
			l.fill(0, blocks, 1)
			l.put(blocks-1, unmountRec(t, 1, blocks-1, 0))
		}, true},
		{"64 KiB record with an extended header", func(l logImage) {
			l.put(0, unmountRec(t, 1, 0, 64<<10))
		}, true},
		{"torn: header without its payload", func(l logImage) {
			rec := unmountRec(t, 1, 0, 0)
			l.put(0, rec[:512])
		}, false},
		{"empty log", func(l logImage) {}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img := make(logImage, blocks*512)
			tc.build(img)
			err := (&Log{R: img, Blocks: blocks}).CheckClean()
			if tc.clean && err != nil {
				t.Fatalf("want clean, got %v", err)
			}
			if !tc.clean && !errors.Is(err, ErrNeedsRecovery) {
				t.Fatalf("want ErrNeedsRecovery, got %v", err)
			}
		})
	}
}

func TestKernelUnmountRecordIsClean(t *testing.T) {
	// A record the 6.18 kernel wrote at a clean unmount, kept by the
	// format tests.
	rec, err := readTestdata("../format/testdata/log/kernel-unmount-record.bin")
	if err != nil {
		t.Skip(err)
	}
	h, err := format.DecodeLogRecHeader(rec)
	if err != nil {
		t.Fatal(err)
	}
	img := make(logImage, 8192*512)
	img.put(int(h.LSN.Block()), rec)
	for bb := 0; bb < int(h.LSN.Block()); bb++ {
		img.fill(bb, bb+1, h.Cycle)
	}
	if !bytes.Equal(rec[:4], []byte{0xFE, 0xED, 0xBA, 0xBE}) {
		t.Fatalf("testdata is not a log record")
	}
	if err := (&Log{R: img, Blocks: 8192}).CheckClean(); err != nil {
		t.Fatalf("kernel unmount record not seen as clean: %v", err)
	}
}
