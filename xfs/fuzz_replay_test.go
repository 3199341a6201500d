package xfs_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// replayBase is a volume left by a crash: its log holds the records of
// creates, writes in many extents, xattrs inline and remote, renames,
// symlinks, truncates, hole punches, unlinks with inodes left on the
// unlinked lists and a partial inactivation, and few of their blocks
// are written in place, so recovery has all of it to replay.
type replayBase struct {
	b       []byte
	records []logRecord
}

// logRecord locates one record of the base's log: its header sectors at
// off, then length bytes of payload.
type logRecord struct {
	off    int64
	hdrs   int
	length int
}

var replayBaseOnce struct {
	sync.Once
	base *replayBase
	err  error
}

func loadReplayBase(tb testing.TB) *replayBase {
	tb.Helper()
	replayBaseOnce.Do(func() {
		replayBaseOnce.base, replayBaseOnce.err = makeReplayBase()
	})
	if replayBaseOnce.err != nil {
		tb.Fatal(replayBaseOnce.err)
	}
	return replayBaseOnce.base
}

func makeReplayBase() (*replayBase, error) {
	dir, err := os.MkdirTemp("", "xfs3-replay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	img := filepath.Join(dir, "crash.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		return nil, err
	}
	v, err := xfs.Open(img, xfs.Options{LazyCommits: true})
	if err != nil {
		return nil, err
	}
	q := &holdQueue{}
	v.Space().SetInactiveQueue(q)
	if err := replayWorkload(v); err != nil {
		v.Close()
		return nil, err
	}
	if inos := q.take(); len(inos) > 0 {
		// One inode freed, the others left on their lists.
		if _, err := v.Space().Inactivate(format.Ino(inos[0])); err != nil {
			return nil, err
		}
	}
	if err := v.Force(); err != nil {
		return nil, err
	}
	if err := xfs.Abandon(v); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(img)
	if err != nil {
		return nil, err
	}
	base := &replayBase{b: b, records: logRecords(b)}
	if len(base.records) < 2 {
		return nil, fmt.Errorf("the crashed volume's log holds %d records", len(base.records))
	}
	return base, nil
}

// replayWorkload makes the changes whose records the base's log holds.
func replayWorkload(v *xfs.Volume) error {
	d, err := v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
	if err != nil {
		return err
	}
	var inos []format.Ino
	for i := range 12 {
		ino, err := v.Names().Create(d, fmt.Sprintf("f%02d", i), xfs.Attrs{Mode: 0o644})
		if err != nil {
			return err
		}
		inos = append(inos, ino)
	}
	// Writes a block at a time in turn: each file gets many extents.
	block := bytes.Repeat([]byte("replay"), 683)[:4096]
	for off := int64(0); off < 24*4096; off += 4096 {
		for _, ino := range inos[:6] {
			if _, err := v.Files().WriteAt(ino, block, off); err != nil {
				return err
			}
		}
	}
	for i, ino := range inos {
		if err := v.Xattrs().Set(ino, "user.small", []byte(fmt.Sprint(i)), 0); err != nil {
			return err
		}
	}
	if err := v.Xattrs().Set(inos[1], "user.remote", bytes.Repeat([]byte{7}, 9000), 0); err != nil {
		return err
	}
	if _, err := v.Names().Symlink(d, "link", "f00", xfs.Attrs{Mode: 0o777}); err != nil {
		return err
	}
	if err := v.Files().Truncate(inos[2], 5000); err != nil {
		return err
	}
	if err := v.Files().PunchHole(inos[3], 4096, 3*4096); err != nil {
		return err
	}
	if err := v.Names().Rename(d, "f04", v.Root(), "moved"); err != nil {
		return err
	}
	for _, name := range []string{"f05", "f06", "f07", "f08"} {
		if err := v.Names().Unlink(d, name); err != nil {
			return err
		}
	}
	return nil
}

// logRecords finds the records of a volume image's internal log, which
// must not wrap.
func logRecords(b []byte) []logRecord {
	sb, err := format.DecodeSuperblock(b)
	if err != nil {
		return nil
	}
	g := format.NewGeometry(sb)
	start := format.DaddrToByte(g.FsbToDaddr(sb.LogStart))
	end := start + int64(sb.LogBlocks)<<g.BlockLog
	var recs []logRecord
	for off := start; off+format.BBSize <= end; {
		h, err := format.DecodeLogRecHeader(b[off : off+format.BBSize])
		if err != nil || h.Magic != format.LogHeaderMagic || h.Len == 0 {
			off += format.BBSize
			continue
		}
		r := logRecord{off: off, hdrs: format.LogRecHeaderSectors(h.Size), length: int(h.Len)}
		if off+int64(r.hdrs*format.BBSize+r.length) > end {
			break
		}
		recs = append(recs, r)
		off += int64(r.hdrs*format.BBSize + r.length)
	}
	return recs
}

// reseal recomputes the CRC of record r in o.
func (r logRecord) reseal(o *overlay) {
	rec := o.read(r.off, r.hdrs*format.BBSize+r.length)
	crc := format.LogRecordCRC(rec, r.hdrs, rec[r.hdrs*format.BBSize:])
	o.write(r.off+format.LogRecCRCOff, binary.LittleEndian.AppendUint32(nil, crc))
}

// FuzzLogReplay damages one record of a crashed volume's log and opens
// the volume writable, which replays the log, finishes its intents and
// frees what the unlinked lists hold; then it changes the volume, closes
// it and walks it read-only. Whatever the bytes, the engine must not
// panic or hang, and every error must be one of its typed kinds.
//
//	go test -run '^$' -fuzz FuzzLogReplay -fuzztime 5m ./xfs/
//
// Inputs: rec picks a record, pos a byte of its payload, data the bytes
// written there (clipped to the record); flags bit 0 recomputes the
// record's CRC afterwards, so that replay sees the damage instead of a
// torn record, bit 1 XORs data into the old bytes instead of replacing
// them.
func FuzzLogReplay(f *testing.F) {
	base := loadReplayBase(f)
	for i := range base.records {
		f.Add(uint16(i), uint32(0), []byte{}, uint8(1))
		f.Add(uint16(i), uint32(100+37*i), []byte{0xff}, uint8(3))
	}
	f.Fuzz(func(t *testing.T, rec uint16, pos uint32, data []byte, flags uint8) {
		o := newOverlay(base.b)
		r := base.records[int(rec)%len(base.records)]
		payload := r.off + int64(r.hdrs*format.BBSize)
		p := int(pos % uint32(r.length))
		if n := r.length - p; len(data) > n {
			data = data[:n]
		}
		if flags&2 != 0 {
			old := o.read(payload+int64(p), len(data))
			for i := range old {
				old[i] ^= data[i]
			}
			data = old
		}
		o.write(payload+int64(p), data)
		if flags&1 != 0 {
			r.reseal(o)
		}
		watchdog := time.AfterFunc(20*time.Second, func() {
			panic(fmt.Sprintf("replay of a log with record at %d patched at %d did not finish in 20s", r.off, p))
		})
		defer watchdog.Stop()
		fuzzChange(t, o)
		fuzzWalk(t, o)
	})
}

// TestReplayBase: the undamaged base recovers, takes the fuzzer's
// changes, and is clean for xfs_repair afterwards; so FuzzLogReplay's
// errors come from its damage.
func TestReplayBase(t *testing.T) {
	base := loadReplayBase(t)
	t.Logf("the crashed volume's log holds %d records", len(base.records))
	o := newOverlay(base.b)
	v, err := xfs.OpenDevice(o, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := v.Recovery()
	if st.Transactions == 0 || st.Unlinked == 0 {
		t.Errorf("recovery replayed %d transactions and freed %d unlinked inodes; the base should need both", st.Transactions, st.Unlinked)
	}
	changeAndRepair(t, v, base.b, o)
}
