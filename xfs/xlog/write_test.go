package xlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
)

// memDev is an in-memory device for the writer.
type memDev struct {
	mu        sync.Mutex
	b         []byte
	syncs     int
	syncDelay time.Duration // a flush's latency
}

func (d *memDev) ReadAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off < 0 || off+int64(len(p)) > int64(len(d.b)) {
		return 0, io.ErrUnexpectedEOF
	}
	return copy(p, d.b[off:]), nil
}

func (d *memDev) WriteAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off < 0 || off+int64(len(p)) > int64(len(d.b)) {
		return 0, io.ErrUnexpectedEOF
	}
	return copy(d.b[off:], p), nil
}

func (d *memDev) Sync() error {
	time.Sleep(d.syncDelay)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.syncs++
	return nil
}

const testLogStart = 8192

// newTestLog returns a device holding a freshly formatted log of blocks BBs
// (unmount record at block 0, cycle 1) and a writer continuing it.
func newTestLog(t testing.TB, blocks uint32) (*memDev, *Log, *Writer) {
	return newTestLogOn(t, blocks, false)
}

// dsyncDev is a memDev that can also make a single write durable.
type dsyncDev struct {
	*memDev
	durableWrites int
}

func (d *dsyncDev) WriteAtDurable(p []byte, off int64) (int, error) {
	n, err := d.WriteAt(p, off)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.durableWrites++
	return n, err
}

// newTestLogOn is newTestLog, whose writer writes through a dsyncDev
// when durable is set.
func newTestLogOn(t testing.TB, blocks uint32, durable bool) (*memDev, *Log, *Writer) {
	d := &memDev{b: make([]byte, testLogStart+int(blocks)*format.BBSize+64<<10)}
	rec, err := format.UnmountRecord([16]byte{1}, 1, 0, format.MakeLSN(1, 0), 0, format.LogMkfsUnmountTid)
	if err != nil {
		t.Fatal(err)
	}
	copy(d.b[testLogStart:], rec)
	l := &Log{R: d, Start: testLogStart, Blocks: blocks}
	head, cycle, err := l.FindHead()
	if err != nil {
		t.Fatal(err)
	}
	var wd Device = d
	if durable {
		wd = &dsyncDev{memDev: d}
	}
	return d, l, NewWriter(wd, l, [16]byte{1}, cycle, head, 0)
}

// randomTrans builds a transaction of buffer items, some larger than a
// record so that their data continues across records.
func randomTrans(rng *rand.Rand) []Item {
	var items []Item
	for i := 0; i < 1+rng.Intn(3); i++ {
		size := 512 << rng.Intn(4)
		if rng.Intn(10) == 0 {
			size = 40960
		}
		data := make([]byte, size)
		rng.Read(data)
		it, _ := BufItem(format.Daddr(rng.Intn(1000)*8), data, nil)
		items = append(items, it)
	}
	return items
}

func sameItems(a, b []Item) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i].Regions) != len(b[i].Regions) {
			return false
		}
		for j := range a[i].Regions {
			if !bytes.Equal(a[i].Regions[j], b[i].Regions[j]) {
				return false
			}
		}
	}
	return true
}

// TestWriterScanRoundTrip writes many transactions through a small log
// (wrapping several times as written-back commits free space), then checks
// that a scan finds exactly the transactions after the last tail, and that
// an unmount record makes the log clean.
func TestWriterScanRoundTrip(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("durable-writes=%v", durable), func(t *testing.T) { testWriterScanRoundTrip(t, durable) })
	}
}

// testWriterScanRoundTrip commits random transactions through a log that
// wraps twice and scans them back. With durable writes the records of a
// commit need no flush, except to move the tail once the log is a quarter
// full.
func testWriterScanRoundTrip(t *testing.T, durable bool) {
	rng := rand.New(rand.NewSource(1))
	d, l, w := newTestLogOn(t, 1500, durable)
	type done struct {
		lsn   format.LSN
		items []Item
	}
	var all []done
	for i := 0; i < 300; i++ {
		items := randomTrans(rng)
		lsn, err := w.Commit(items)
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		all = append(all, done{lsn, items})
	}
	if w.Head().Cycle() < 3 {
		t.Fatalf("the log did not wrap twice (head %d/%d)", w.Head().Cycle(), w.Head().Block())
	}
	s, err := l.Scan()
	if err != nil {
		t.Fatal(err)
	}
	if s.Head != w.Head() {
		t.Fatalf("scan head %d/%d, writer head %d/%d", s.Head.Cycle(), s.Head.Block(), w.Head().Cycle(), w.Head().Block())
	}
	var want []done
	for _, c := range all {
		if c.lsn >= s.Tail {
			want = append(want, c)
		}
	}
	if len(s.Trans) != len(want) || len(want) == 0 {
		t.Fatalf("scan found %d transactions, %d committed after the tail", len(s.Trans), len(want))
	}
	for i, tr := range s.Trans {
		if tr.LSN != want[i].lsn || !sameItems(tr.Items, want[i].items) {
			t.Fatalf("transaction %d differs (LSN %#x, want %#x)", i, uint64(tr.LSN), uint64(want[i].lsn))
		}
	}
	if err := l.CheckClean(); !errors.Is(err, ErrNeedsRecovery) {
		t.Fatalf("dirty log reported %v", err)
	}
	if err := w.Unmount(); err != nil {
		t.Fatal(err)
	}
	if err := l.CheckClean(); err != nil {
		t.Fatalf("after unmount: %v", err)
	}
	st := w.Stats()
	t.Logf("%d commits, %d records, %d writes (%d durable), %d flushes, %d syncs", st.Commits, st.Records, st.Writes, st.DurableWrites, st.Flushes, d.syncs)
	if durable && (st.DurableWrites == 0 || st.Flushes >= st.Commits/2) {
		t.Fatalf("durable writes: %d of %d writes, %d flushes for %d commits", st.DurableWrites, st.Writes, st.Flushes, st.Commits)
	}
	if !durable && st.DurableWrites != 0 {
		t.Fatalf("%d durable writes on a device without them", st.DurableWrites)
	}
}

// commitPinned commits a transaction whose write-back fails, so that its
// log space is never released and recovery keeps seeing it.
func commitPinned(w *Writer, items []Item) error {
	t, err := w.Queue(items, func(own, durable Ticket) error { return errors.New("no write-back") })
	if err != nil {
		return err
	}
	return w.Force(t)
}

// TestScanStopsAtTornRecord: damage in the newest record hides its
// transaction, and only that one.
func TestScanStopsAtTornRecord(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	d, l, w := newTestLog(t, 2000)
	for i := 0; i < 5; i++ {
		if err := commitPinned(w, randomTrans(rng)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := l.Scan()
	if err != nil || len(s.Trans) != 5 {
		t.Fatalf("scan: %d transactions, %v", len(s.Trans), err)
	}
	last := s.LastBlock
	d.b[testLogStart+int(last+1)*format.BBSize+100] ^= 0xFF
	s, err = l.Scan()
	if err != nil || len(s.Trans) != 4 {
		t.Fatalf("scan of a torn log: %d transactions, %v", len(s.Trans), err)
	}
}

// TestGroupCommit: concurrent committers share log writes and flushes.
func TestGroupCommit(t *testing.T) {
	d, _, w := newTestLog(t, 1<<16)
	d.syncDelay = time.Millisecond
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			for i := 0; i < 50; i++ {
				if _, err := w.Commit(randomTrans(rng)); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	st := w.Stats()
	if st.Commits != 800 || st.Writes > st.Commits/4 {
		t.Fatalf("%d commits in %d log writes: no batching", st.Commits, st.Writes)
	}
	t.Logf("%d commits, %d writes, %d flushes", st.Commits, st.Writes, st.Flushes)
}

// TestLeaderGathersRunnableCommitter: a leader yields before it takes the
// queue, so a committer that was ready to run joins its write. With one P
// the second goroutine cannot run before the leader yields, and without
// the yield the two commits take two writes. The race detector's runtime
// may still reschedule at other points, so the best of five attempts
// counts.
func TestLeaderGathersRunnableCommitter(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var writes []int64
	for attempt := 0; attempt < 5; attempt++ {
		_, _, w := newTestLog(t, 1<<16)
		rng := rand.New(rand.NewSource(int64(attempt)))
		first, second := randomTrans(rng), randomTrans(rng)
		done := make(chan error, 1)
		go func() { _, err := w.Commit(second); done <- err }()
		if _, err := w.Commit(first); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		st := w.Stats()
		if st.Commits != 2 {
			t.Fatalf("%d commits, want 2", st.Commits)
		}
		if st.Writes == 1 {
			return
		}
		writes = append(writes, st.Writes)
	}
	t.Errorf("two commits took %v log writes in five attempts; want the runnable committer in the leader's write", writes)
}

// logSeed is a small log holding a few transactions, for the fuzz corpus.
func logSeed(t testing.TB) []byte {
	const blocks = 8 // of a 256-block log: the rest is unused
	d, _, w := newTestLog(t, 256)
	for i := 0; i < 2; i++ {
		data := bytes.Repeat([]byte{byte(i)}, 128)
		it, _ := BufItem(format.Daddr(8*i), data, nil)
		if _, err := w.Commit([]Item{it, CancelItem(64, 4096)}); err != nil {
			t.Fatal(err)
		}
	}
	return d.b[testLogStart : testLogStart+blocks*format.BBSize]
}

// TestWriteFuzzSeed regenerates the committed FuzzScan seed when
// XFS3_WRITE_SEEDS is set.
func TestWriteFuzzSeed(t *testing.T) {
	if os.Getenv("XFS3_WRITE_SEEDS") == "" {
		t.Skip("set XFS3_WRITE_SEEDS=1 to regenerate testdata/fuzz/FuzzScan/writer")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzScan")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "writer"), []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", logSeed(t))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzScan reads arbitrary bytes as a log: scanning and replaying must
// fail cleanly, never panic.
func FuzzScan(f *testing.F) {
	f.Add(logSeed(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 4*format.BBSize {
			return
		}
		b = b[:len(b)/format.BBSize*format.BBSize]
		d := &memDev{b: make([]byte, testLogStart+len(b)+64<<10)}
		copy(d.b[testLogStart:], b)
		l := &Log{R: d, Start: testLogStart, Blocks: uint32(len(b) / format.BBSize)}
		s, err := l.Scan()
		if err == nil {
			g := format.Geometry{InodeSize: 512, BlockSize: 4096, BlockLog: 12, InoPBLog: 3, AgBlocks: 1024, AgBlkLog: 10, AgCount: 1, DBlocks: 1024}
			_, _ = Replay(d, &g, s.Trans)
		}
	})
}

// TestScanWrappedRecord: a record that runs past the end of the log, as
// the kernel writes them (the sectors after the wrap carry the next cycle
// and the CRC covers them that way), is read whole.
func TestScanWrappedRecord(t *testing.T) {
	const blocks, at = 40, 34
	d := &memDev{b: make([]byte, testLogStart+blocks*format.BBSize)}
	l := &Log{R: d, Start: testLogStart, Blocks: blocks}
	for bb := 0; bb < blocks; bb++ {
		binary.BigEndian.PutUint32(d.b[testLogStart+bb*format.BBSize:], 1)
	}
	data := bytes.Repeat([]byte{0xAB}, 4096)
	it, _ := BufItem(80, data, nil)
	var payload []byte
	op := func(flags uint8, b []byte) {
		var h [format.LogOpHeaderSize]byte
		(&format.LogOpHeader{Tid: 5, Len: uint32(len(b)), ClientID: format.LogClientTransaction, Flags: flags}).Encode(h[:])
		payload = append(append(payload, h[:]...), b...)
	}
	var th [format.LogTransHeaderSize]byte
	(&format.LogTransHeader{Magic: format.LogTransMagic, Type: format.LogTransCheckpoint, Tid: 5, NumItems: 1}).Encode(th[:])
	op(format.LogOpStartTrans, nil)
	op(0, th[:])
	for _, r := range it.Regions {
		op(0, r)
	}
	op(format.LogOpCommitTrans, nil)
	payload = append(payload, make([]byte, -len(payload)&(format.BBSize-1))...)
	lsn := format.MakeLSN(1, at)
	h := &format.LogRecHeader{Magic: format.LogHeaderMagic, Cycle: 1, Version: format.LogVersion2, LSN: lsn, TailLSN: lsn,
		PrevBlock: -1, NumLogOps: 5, Fmt: format.LogFmtLinuxLE, Size: format.LogBigRecordSize}
	rec, err := format.EncodeLogRecord(h, payload)
	if err != nil {
		t.Fatal(err)
	}
	n := len(rec) / format.BBSize
	if at+n <= blocks {
		t.Fatalf("record of %d blocks does not wrap", n)
	}
	for i := blocks - at; i < n; i++ {
		binary.BigEndian.PutUint32(rec[i*format.BBSize:], 2)
	}
	binary.LittleEndian.PutUint32(rec[format.LogRecCRCOff:], 0)
	h.CRC = format.LogRecordCRC(rec, 1, rec[format.BBSize:])
	binary.LittleEndian.PutUint32(rec[format.LogRecCRCOff:], h.CRC)
	copy(d.b[testLogStart+at*format.BBSize:], rec[:(blocks-at)*format.BBSize])
	copy(d.b[testLogStart:], rec[(blocks-at)*format.BBSize:])

	s, err := l.Scan()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Trans) != 1 || !sameItems(s.Trans[0].Items, []Item{it}) || s.Head != format.MakeLSN(2, uint32(at+n-blocks)) {
		t.Fatalf("scan: %d transactions, head %d/%d", len(s.Trans), s.Head.Cycle(), s.Head.Block())
	}
}

// TestLogFullWithoutWriteback: commits that are never written back pin
// the log; once it is full, a commit fails (once they are marked failed)
// instead of waiting forever, and written-back ones free space again.
func TestLogFullWithoutWriteback(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	_, _, w := newTestLog(t, 400)
	var err error
	for i := 0; i < 200 && err == nil; i++ {
		err = commitPinned(w, randomTrans(rng)[:1])
	}
	if err == nil {
		t.Fatal("200 pinned commits fit in a 400-block log")
	}
	_, _, w = newTestLog(t, 400)
	for i := 0; i < 200; i++ {
		if _, err := w.Commit(randomTrans(rng)[:1]); err != nil {
			t.Fatalf("commit %d with write-back: %v", i, err)
		}
	}
}

// TestRecordsNearTheEnd starts writing at every position close to the end
// of the log with transactions that fill whole records: records must end
// exactly at the end or leave room for another, and scan back whole.
func TestRecordsNearTheEnd(t *testing.T) {
	const blocks = 600
	for left := uint32(2); left < 140; left++ {
		d, l, _ := newTestLog(t, blocks)
		// Stamp everything with cycle 1 so that the head is where we say.
		for bb := 2; bb < blocks; bb++ {
			binary.BigEndian.PutUint32(d.b[testLogStart+bb*format.BBSize:], 1)
		}
		w := NewWriter(d, l, [16]byte{1}, 1, blocks-left, 0)
		data := bytes.Repeat([]byte{7}, 40960)
		it, _ := BufItem(8, data, nil)
		for i := 0; i < 3; i++ {
			if _, err := w.Commit([]Item{it}); err != nil {
				t.Fatalf("%d blocks before the end, commit %d: %v", left, i, err)
			}
		}
		s, err := l.Scan()
		if err != nil {
			t.Fatalf("%d blocks before the end: %v", left, err)
		}
		if n := len(s.Trans); n == 0 || !sameItems(s.Trans[n-1].Items, []Item{it}) {
			t.Fatalf("%d blocks before the end: %d transactions scanned", left, n)
		}
	}
}

// TestReplayRefusesUnfinishedIntents: an extent-free intent without its
// done item is replayed and its extents returned for the caller to free;
// a finished pair returns nothing. Intents this recovery cannot finish
// (rmap: the engine has no rmapbt) are refused before any block is
// written, as is an EFI naming blocks outside the volume.
func TestReplayRefusesUnfinishedIntents(t *testing.T) {
	intent := func(typ uint16, id uint64) Item {
		b := make([]byte, 16)
		binary.LittleEndian.PutUint16(b, typ)
		binary.LittleEndian.PutUint16(b[2:], 1)
		binary.LittleEndian.PutUint64(b[8:], id)
		return Item{Regions: [][]byte{b}}
	}
	exts := []format.EFIExtent{{Start: 1<<4 | 9, Len: 3}, {Start: 100, Len: 1}}
	efi := func(id uint64, padded bool, e ...format.EFIExtent) Item {
		return Item{Regions: [][]byte{(&format.EFILogFormat{Size: 1, ID: id, Extents: e}).Encode(padded)}}
	}
	data := bytes.Repeat([]byte{9}, 512)
	buf, _ := BufItem(16, data, nil)
	g := format.Geometry{InodeSize: 512, BlockSize: 4096, BlockLog: 12, AgBlocks: 16, AgBlkLog: 4, AgCount: 8, DBlocks: 128}
	for i, tc := range []struct {
		items  []Item
		ok     bool
		unfree []format.EFIExtent
	}{
		{[]Item{buf, efi(7, true, exts[0])}, true, exts[:1]},
		{[]Item{buf, efi(7, false, exts...)}, true, exts},
		{[]Item{buf, efi(7, true, exts[0]), intent(format.LogItemEFD, 7)}, true, nil},
		{[]Item{buf, efi(7, true, exts[0]), efi(8, false, exts[1]), intent(format.LogItemEFD, 7)}, true, exts[1:]},
		{[]Item{buf, intent(format.LogItemRUI, 1)}, false, nil},
		{[]Item{buf, efi(7, true, exts[0]), intent(format.LogItemRUI, 1)}, false, nil},
		{[]Item{buf, efi(7, true, format.EFIExtent{Start: 1<<4 | 15, Len: 2})}, false, nil}, // crosses an AG
		{[]Item{buf, efi(7, true, format.EFIExtent{Start: 1 << 4, Len: 1})}, false, nil},    // AG header
	} {
		d := &memDev{b: make([]byte, 64<<10)}
		st, err := Replay(d, &g, []*Trans{{Tid: 1, LSN: format.MakeLSN(1, 2), Items: tc.items}})
		written := d.b[16*format.BBSize] == 9
		if tc.ok != (err == nil) || written != tc.ok || (!tc.ok && i < 6 && !errors.Is(err, ErrUnsupportedItem)) {
			t.Errorf("case %d: err %v, block written %v", i, err, written)
		}
		if !reflect.DeepEqual(st.Unfree, tc.unfree) {
			t.Errorf("case %d: unfree %v, want %v", i, st.Unfree, tc.unfree)
		}
	}
}

// TestReplayBufferOutsideFilesystem: a logged buffer past the end of the
// filesystem fails replay as corruption, before anything is written (the
// fuzzer found it failing as a read past the device).
func TestReplayBufferOutsideFilesystem(t *testing.T) {
	g := format.Geometry{InodeSize: 512, BlockSize: 4096, BlockLog: 12, AgBlocks: 16, AgBlkLog: 4, AgCount: 8, DBlocks: 128}
	data := bytes.Repeat([]byte{9}, 512)
	inside, _ := BufItem(16, data, nil)
	for _, daddr := range []format.Daddr{1024, 1 << 50} {
		outside, _ := BufItem(daddr, data, nil)
		d := &memDev{b: make([]byte, 64<<10)}
		_, err := Replay(d, &g, []*Trans{{Tid: 1, LSN: format.MakeLSN(1, 2), Items: []Item{inside, outside}}})
		if !errors.Is(err, format.ErrCorrupt) || d.b[16*format.BBSize] == 9 {
			t.Errorf("buffer at daddr %d: %v, block written %v", daddr, err, d.b[16*format.BBSize] == 9)
		}
	}
}

// TestWriteBackOrder: write-backs run once each, in ticket order, only
// after their transaction is durable, while committers queue and force
// concurrently; Force returns only once its ticket is durable.
func TestWriteBackOrder(t *testing.T) {
	_, _, w := newTestLog(t, 1<<14)
	var mu sync.Mutex
	var order []Ticket
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			for i := 0; i < 100; i++ {
				tk, err := w.Queue(randomTrans(rng)[:1], func(own, durable Ticket) error {
					if own > durable {
						t.Errorf("write-back of %d with only %d durable", own, durable)
					}
					mu.Lock()
					order = append(order, own)
					mu.Unlock()
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				if rng.Intn(3) == 0 { // some leave it to others' forces
					continue
				}
				if err := w.Force(tk); err != nil {
					t.Error(err)
					return
				}
				if d := w.Durable(); d < tk {
					t.Errorf("Force(%d) returned with %d durable", tk, d)
				}
			}
		}(g)
	}
	wg.Wait()
	if err := w.ForceAll(); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil { // waits for the last leader's write-backs
		t.Fatal(err)
	}
	if len(order) != 800 {
		t.Fatalf("%d write-backs for 800 transactions", len(order))
	}
	for i, tk := range order {
		if tk != Ticket(i+1) {
			t.Fatalf("write-back %d was ticket %d", i, tk)
		}
	}
	if st := w.Stats(); st.Pending != 0 {
		t.Fatalf("%d transactions pending after ForceAll", st.Pending)
	}
}

// TestForceAllFlushesData: file data written after the last transaction
// was queued is flushed by ForceAll (a barrier, no log record), and data
// already covered by a flush costs nothing more.
func TestForceAllFlushesData(t *testing.T) {
	d, _, w := newTestLog(t, 1<<12)
	w.DataWritten()
	if err := w.ForceAll(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if d.syncs != 1 || st.DataFlushes != 1 || st.Records != 0 {
		t.Fatalf("data only: %d syncs, %+v", d.syncs, st)
	}
	if err := w.ForceAll(); err != nil {
		t.Fatal(err)
	}
	if d.syncs != 1 {
		t.Fatalf("a second ForceAll flushed again (%d syncs)", d.syncs)
	}
	// Data then a transaction: one batch flushes the data before its
	// record, then the record.
	w.DataWritten()
	if _, err := w.Queue(randomTrans(rand.New(rand.NewSource(1)))[:1], nil); err != nil {
		t.Fatal(err)
	}
	if err := w.ForceAll(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); d.syncs != 3 || st.DataFlushes != 2 || st.Writes != 1 {
		t.Fatalf("data and a transaction: %d syncs, %+v", d.syncs, st)
	}
}

// TestWriteBackBacklog: write-backs wait in a backlog until it holds more
// than its limit of log bytes, then run in ticket order, each told the
// newest durable ticket; OnDurable hears of every batch in order; Sync
// and Unmount run what is left. With a limit far
// past what the log holds (only a test can set one), the leader that
// needs room writes the backlog back itself rather than fail.
func TestWriteBackBacklog(t *testing.T) {
	for _, tc := range []struct {
		name   string
		blocks uint32
		limit  int
		trans  int
	}{
		{"limit", 1 << 14, 64 << 10, 300},
		{"none", 1 << 14, 0, 100},
		{"room", 800, 1 << 30, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(tc.blocks) + int64(tc.limit)))
			_, _, w := newTestLog(t, tc.blocks)
			w.SetBacklogLimit(tc.limit)
			w.SetIdleWriteBack(0) // only the limit runs the backlog here
			if tc.limit > w.backlogMax() {
				w.mu.Lock()
				w.backlogLimit = tc.limit
				w.mu.Unlock()
			}
			var mu sync.Mutex
			var order []Ticket
			var heard Ticket
			mostWaiting := 0
			w.OnDurable(func(d Ticket) {
				mu.Lock()
				defer mu.Unlock()
				if d < heard {
					t.Errorf("OnDurable(%d) after OnDurable(%d)", d, heard)
				}
				heard = d
			})
			for i := 0; i < tc.trans; i++ {
				items := randomTrans(rng)[:1]
				tk, err := w.Queue(items, func(own, durable Ticket) error {
					mu.Lock()
					defer mu.Unlock()
					if own > durable {
						t.Errorf("write-back of %d with %d durable", own, durable)
					}
					if w := Ticket(len(order) + 1); own != w {
						t.Errorf("write-back of %d, want %d", own, w)
					}
					order = append(order, own)
					return nil
				})
				if err != nil {
					t.Fatalf("transaction %d: %v", i, err)
				}
				if err := w.Force(tk); err != nil {
					t.Fatalf("force %d: %v", i, err)
				}
				w.mu.Lock()
				for w.pushing || w.pushStarted { // a pass started by the force
					w.cond.Wait()
				}
				backlog, bytes := len(w.backlog), w.backlogBytes
				w.mu.Unlock()
				mu.Lock()
				done := len(order)
				mu.Unlock()
				if done+backlog != int(tk) {
					t.Fatalf("after %d: %d written back, %d waiting", tk, done, backlog)
				}
				if bytes > tc.limit {
					t.Fatalf("after %d: %d bytes wait, limit %d", tk, bytes, tc.limit)
				}
				mostWaiting = max(mostWaiting, backlog)
			}
			if (tc.limit > 0) != (mostWaiting > 0) {
				t.Fatalf("limit %d: at most %d write-backs waited", tc.limit, mostWaiting)
			}
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			if len(order) != tc.trans {
				t.Fatalf("%d of %d written back after Sync", len(order), tc.trans)
			}
			if err := w.Unmount(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestIdleWriteBack: once the log goes quiet, a backlog below its limit
// is still written back, within about the idle delay.
func TestIdleWriteBack(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	_, _, w := newTestLog(t, 1<<14)
	w.SetIdleWriteBack(20 * time.Millisecond)
	var written atomic.Int32
	for range 3 {
		tk, err := w.Queue(randomTrans(rng)[:1], func(own, durable Ticket) error {
			written.Add(1)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Force(tk); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for written.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 write-backs ran within 5 s of a quiet log", written.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := w.Unmount(); err != nil {
		t.Fatal(err)
	}
}

// TestPushThresholds: a queue is Pushable past PushBytes (or a quarter of
// a small log) and Backlogged at twice that, and neither once forced.
func TestPushThresholds(t *testing.T) {
	for _, blocks := range []uint32{64 << 10, 4096} { // 32 MiB: PushBytes; 2 MiB: a quarter of it
		t.Run(fmt.Sprintf("log-%d-BBs", blocks), func(t *testing.T) {
			_, _, w := newTestLog(t, blocks)
			threshold := min(PushBytes, int(blocks)*format.BBSize/4)
			data := make([]byte, 4096)
			queued := 0
			for i := 0; !w.Backlogged(); i++ {
				if w.Pushable() != (queued >= threshold) {
					t.Fatalf("after %d bytes queued: Pushable %v with a threshold of %d", queued, w.Pushable(), threshold)
				}
				if queued >= 2*threshold {
					t.Fatalf("not Backlogged after %d bytes queued (threshold %d)", queued, threshold)
				}
				data[0] = byte(i)
				it, _ := BufItem(format.Daddr(i%512*8), data, nil)
				if _, err := w.Queue([]Item{it}, nil); err != nil {
					t.Fatal(err)
				}
				queued += transBytes([]Item{it}, false)
			}
			if queued < 2*threshold {
				t.Fatalf("Backlogged after only %d bytes queued (threshold %d)", queued, threshold)
			}
			if err := w.ForceAll(); err != nil {
				t.Fatal(err)
			}
			if w.Pushable() || w.Backlogged() {
				t.Errorf("after a force: Pushable %v, Backlogged %v", w.Pushable(), w.Backlogged())
			}
		})
	}
}

// TestPassHooks: every write-back runs inside a pass, between the
// owner's Start and End, and a failed End leaves the pass's commits
// unwritten: their log space stays pinned, the failure is the writer's,
// and Sync reports it.
func TestPassHooks(t *testing.T) {
	for _, failEnd := range []bool{false, true} {
		_, _, w := newTestLog(t, 1<<14)
		w.SetIdleWriteBack(0)
		var inPass, passes int
		w.OnPass(PassHooks{
			Start: func(durable Ticket) {
				inPass++
				if d := w.durable; durable != d {
					t.Errorf("pass started with durable %d, the writer's is %d", durable, d)
				}
			},
			End: func() error {
				inPass--
				passes++
				if failEnd {
					return errors.New("injected pass failure")
				}
				return nil
			},
		})
		const commits = 5
		for i := 0; i < commits; i++ {
			tk, err := w.Queue(randomTrans(rand.New(rand.NewSource(int64(i))))[:1], func(own, durable Ticket) error {
				if inPass != 1 {
					t.Errorf("write-back of %d outside a pass", own)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Force(tk); err != nil {
				t.Fatal(err)
			}
		}
		syncErr := w.Sync()
		if passes == 0 || inPass != 0 {
			t.Fatalf("failEnd %v: %d passes, %d still open", failEnd, passes, inPass)
		}
		w.mu.Lock()
		unwritten := 0
		for _, c := range w.live {
			unwritten += c.unwritten
		}
		failed := w.failed
		w.mu.Unlock()
		if failEnd && (failed == nil || unwritten != commits || syncErr == nil) {
			t.Fatalf("failed pass: writer failure %v, %d of %d commits still unwritten (Sync: %v)", failed, unwritten, commits, syncErr)
		}
		if !failEnd && (failed != nil || unwritten != 0 || syncErr != nil) {
			t.Fatalf("pass: writer failure %v, %d commits unwritten, Sync: %v", failed, unwritten, syncErr)
		}
	}
}

// TestHalt: Halt waits for the background pass under way, then refuses
// every later write, so that an abandoned volume's device can be closed
// with nothing writing to it.
func TestHalt(t *testing.T) {
	_, _, w := newTestLog(t, 1<<14)
	w.SetIdleWriteBack(0)
	release := make(chan struct{})
	var passEnded atomic.Bool
	w.OnPass(PassHooks{End: func() error {
		<-release
		passEnded.Store(true)
		return nil
	}})
	items := randomTrans(rand.New(rand.NewSource(1)))[:1]
	// One commit past the limit but within twice it: the leader hands
	// the pass to a goroutine of its own and returns.
	w.SetBacklogLimit(transBytes(items, false) - 1)
	var written atomic.Int32
	writeBack := func(own, durable Ticket) error { written.Add(1); return nil }
	tk, err := w.Queue(items, writeBack)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Force(tk); err != nil {
		t.Fatal(err)
	}
	halted := make(chan struct{})
	go func() { w.Halt(); close(halted) }()
	select {
	case <-halted:
		t.Fatal("Halt returned while a write-back pass was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-halted
	if !passEnded.Load() || written.Load() != 1 {
		t.Fatalf("after Halt: pass ended %v, %d of 1 write-backs ran", passEnded.Load(), written.Load())
	}
	tk, err = w.Queue(items, writeBack)
	if err == nil {
		err = w.Force(tk)
	}
	if !errors.Is(err, ErrHalted) {
		t.Fatalf("a commit after Halt: %v, want ErrHalted", err)
	}
	if written.Load() != 1 {
		t.Fatalf("%d write-backs ran, one of them after Halt", written.Load())
	}
}
