package xfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// fragmented holds files written interleaved, a chunk to each in turn, so
// that their extents alternate on disk and deleting every other file
// leaves free space in pieces of one chunk.
type fragmented struct {
	dir   format.Ino
	names []string
	data  map[string][]byte
}

func writeFragmented(t testing.TB, v *xfs.Volume, files, chunks, chunk int, seed int64) *fragmented {
	t.Helper()
	d, err := v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	f := &fragmented{dir: d, data: map[string][]byte{}}
	rng := rand.New(rand.NewSource(seed))
	inos := make([]format.Ino, files)
	for i := range inos {
		name := fmt.Sprintf("f%03d", i)
		if inos[i], err = v.Names().Create(d, name, xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		f.names = append(f.names, name)
		b := make([]byte, chunks*chunk)
		rng.Read(b)
		f.data[name] = b
	}
	for c := 0; c < chunks; c++ {
		for i, ino := range inos {
			off := c * chunk
			if _, err := v.Files().WriteAt(ino, f.data[f.names[i]][off:off+chunk], int64(off)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

// remove unlinks the files whose index i has keep(i) false.
func (f *fragmented) remove(t testing.TB, v *xfs.Volume, keep func(i int) bool) {
	t.Helper()
	var kept []string
	for i, name := range f.names {
		if keep(i) {
			kept = append(kept, name)
			continue
		}
		if err := v.Names().Unlink(f.dir, name); err != nil {
			t.Fatal(err)
		}
		delete(f.data, name)
	}
	f.names = kept
}

// check reads every file through the engine.
func (f *fragmented) check(t testing.TB, v *xfs.Volume) {
	t.Helper()
	for _, name := range f.names {
		ino, err := v.Names().Lookup(f.dir, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := make([]byte, len(f.data[name])+1)
		n, err := v.Files().ReadAt(ino, got, 0)
		if err != nil && n != len(f.data[name]) {
			t.Fatalf("%s: read %d bytes: %v", name, n, err)
		}
		if !bytes.Equal(got[:n], f.data[name]) {
			t.Fatalf("%s: content differs after trim", name)
		}
	}
}

// checkKernel reads every file through a read-only kernel mount.
func (f *fragmented) checkKernel(t testing.TB, img string) {
	t.Helper()
	mnt := oracle.Mount(t, img, true)
	defer oracle.Unmount(t, mnt)
	for _, name := range f.names {
		got, err := os.ReadFile(filepath.Join(mnt, "d", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.data[name]) {
			t.Fatalf("kernel reads %s differently", name)
		}
	}
}

// du is the space the host allocated to path, in bytes.
func du(t testing.TB, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// freeBytes is what Statfs counts free, in bytes.
func freeBytes(t *testing.T, v *xfs.Volume) int64 {
	return int64(freeBlocks(t, v)) * int64(v.Geometry().BlockSize)
}

// formatImage makes a volume of o in a temporary directory of t.
func formatImage(t testing.TB, o mkfs.Options) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "vol.img")
	if _, err := mkfs.Format(img, o); err != nil {
		t.Fatal(err)
	}
	return img
}

// openImage formats a volume of o and opens it for writing.
func openImage(t testing.TB, o mkfs.Options) (string, *xfs.Volume) {
	t.Helper()
	img := formatImage(t, o)
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return img, v
}

// TestTrimReturnsFreedSpace: after deleting every other file of an
// interleaved set, one trim pass gives at least 99% of the freed bytes
// back to the host (du of the volume file drops by that much); the files
// left read back identically through the engine and the kernel, and
// xfs_repair is clean. A second pass over only what was freed since
// finds nothing; after more deletes it finds just those, and discards
// them and not the free space beside them.
func TestTrimReturnsFreedSpace(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	img, v := openImage(t, mkfs.Options{Size: 256 << 20})
	defer v.Close()
	f := writeFragmented(t, v, 48, 64, 16<<10, 1) // 48 MiB in 16 KiB pieces
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	before, free0 := du(t, img), freeBytes(t, v)
	f.remove(t, v, func(i int) bool { return i%2 == 0 })
	freed := freeBytes(t, v) - free0
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := du(t, img); got < before-freed/100 {
		t.Fatalf("the host freed %d bytes before any trim", before-got)
	}
	st, err := v.Space().Trim(context.Background(), xfs.TrimOptions{})
	if errors.Is(err, xfs.ErrDiscardUnsupported) {
		t.Skipf("the test directory's filesystem cannot punch holes: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	after := du(t, img)
	t.Logf("freed %d bytes; du dropped from %d to %d; trim: %+v", freed, before, after, st)
	if drop := before - after; drop*100 < freed*99 {
		t.Fatalf("du dropped by %d bytes, want at least 99%% of the %d freed", drop, freed)
	}
	if st.Errors != 0 || st.Unsupported || st.Next != int64(v.Geometry().DBlocks)*int64(v.Geometry().BlockSize) {
		t.Fatalf("trim stats %+v", st)
	}
	if st.LockHoldMax <= 0 || st.LockHoldP99 > st.LockHoldMax || st.Batches == 0 {
		t.Fatalf("lock hold times %v (p99 %v) over %d batches", st.LockHoldMax, st.LockHoldP99, st.Batches)
	}
	f.check(t, v)

	// Nothing was freed since: a pass over the freed space finds nothing.
	st, err = v.Space().Trim(context.Background(), xfs.TrimOptions{OnlyFreed: true})
	if err != nil || st.DiscardedBytes != 0 || st.ExaminedBytes != 0 {
		t.Fatalf("second pass: %+v, %v", st, err)
	}
	free1 := freeBytes(t, v)
	f.remove(t, v, func(i int) bool { return i%3 != 0 })
	freed = freeBytes(t, v) - free1
	before = du(t, img)
	st, err = v.Space().Trim(context.Background(), xfs.TrimOptions{OnlyFreed: true})
	if err != nil {
		t.Fatal(err)
	}
	drop := before - du(t, img)
	// Only what was freed is discarded again, not the free space beside
	// it that the first pass discarded (what is freed sits between
	// extents freed before).
	if drop*100 < freed*99 || st.DiscardedBytes > freed+freed/100 || st.ExaminedBytes > freed+freed/100 {
		t.Fatalf("pass over the freed space: du dropped by %d of %d freed; %+v", drop, freed, st)
	}
	t.Logf("freed %d more bytes; du dropped by %d; pass over them: %+v", freed, drop, st)
	f.check(t, v)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	f.checkKernel(t, img)
}

// TestTrimRangeAndOptions: a pass stays inside its byte range, MaxBytes
// ends it early with Next saying where, cancellation stops it between
// batches, and a device that cannot discard is reported as such.
func TestTrimRangeAndOptions(t *testing.T) {
	img, v := openImage(t, mkfs.Options{Size: 64 << 20})
	defer v.Close()
	f := writeFragmented(t, v, 8, 32, 8<<10, 2)
	f.remove(t, v, func(i int) bool { return i%2 == 0 })
	size := int64(v.Geometry().DBlocks) * int64(v.Geometry().BlockSize)

	for _, o := range []xfs.TrimOptions{{Offset: -1}, {Offset: size}, {Offset: 4096, Length: 100}, {MinLen: -1}} {
		if _, err := v.Space().Trim(context.Background(), o); !errors.Is(err, xfs.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", o, err)
		}
	}
	half := size / 2
	st, err := v.Space().Trim(context.Background(), xfs.TrimOptions{Offset: half, Length: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if st.Next != half+4<<20 || st.ExaminedBytes > 4<<20 {
		t.Fatalf("ranged pass: %+v", st)
	}
	st, err = v.Space().Trim(context.Background(), xfs.TrimOptions{MaxBytes: 1 << 20, BatchRecords: 4})
	if err != nil {
		t.Fatal(err)
	}
	if st.DiscardedBytes < 1<<20 || st.Next >= size {
		t.Fatalf("budgeted pass: %+v", st)
	}
	rest, err := v.Space().Trim(context.Background(), xfs.TrimOptions{Offset: st.Next})
	if err != nil || rest.Next != size {
		t.Fatalf("resumed pass: %+v, %v", rest, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err = v.Space().Trim(ctx, xfs.TrimOptions{BatchRecords: 1, Progress: func(p xfs.TrimProgress) {
		if p.Stats.Batches == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || st.Batches > 3 || st.Next >= size {
		t.Fatalf("cancelled pass: %+v, %v", st, err)
	}
	f.check(t, v)

	fd, closeBase, err := dev.OpenFault(img)
	if err != nil {
		t.Fatal(err)
	}
	defer closeBase()
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	fd.RefuseDiscard()
	fv, err := xfs.OpenDevice(fd, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer xfs.Abandon(fv)
	st, err = fv.Space().Trim(context.Background(), xfs.TrimOptions{})
	if !errors.Is(err, xfs.ErrDiscardUnsupported) || !st.Unsupported {
		t.Fatalf("device without discard: %+v, %v", st, err)
	}
	ro, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Space().Trim(context.Background(), xfs.TrimOptions{}); !errors.Is(err, xfs.ErrReadOnly) {
		t.Fatalf("trim of a read-only volume: %v", err)
	}
}

// TestTrimWithConcurrentWriters runs trim passes over and over, in small
// batches, while writers create, overwrite and delete files: no block in
// use is ever discarded (every file reads back as written, through the
// engine and after a reopen), and xfs_repair is clean. Run with -race.
func TestTrimWithConcurrentWriters(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	img, v := openImage(t, mkfs.Options{Size: 128 << 20, AgCount: 4})
	f := writeFragmented(t, v, 32, 32, 16<<10, 3)
	f.remove(t, v, func(i int) bool { return i%2 == 0 })

	const writers, rounds = 4, 40
	ctx, stop := context.WithCancel(context.Background())
	var passes []xfs.TrimStats
	trimDone := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			st, err := v.Space().Trim(ctx, xfs.TrimOptions{BatchRecords: 8})
			if err != nil && !errors.Is(err, context.Canceled) {
				trimDone <- err
				return
			}
			passes = append(passes, st)
		}
		trimDone <- nil
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	written := map[string][]byte{}
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs <- writerLoop(v, f.dir, w, rounds, func(name string, data []byte) {
				mu.Lock()
				defer mu.Unlock()
				if data == nil {
					delete(written, name)
				} else {
					written[name] = data
				}
			})
		}(w)
	}
	wg.Wait()
	stop()
	if err := <-trimDone; err != nil {
		t.Fatalf("trim: %v", err)
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var discarded int64
	for _, st := range passes {
		discarded += st.DiscardedBytes
	}
	t.Logf("%d trim passes discarded %d bytes while %d writers ran", len(passes), discarded, writers)
	if len(passes) < 2 || discarded == 0 {
		t.Fatalf("trim did not run beside the writers (%d passes, %d bytes)", len(passes), discarded)
	}
	for name, data := range written {
		f.names = append(f.names, name)
		f.data[name] = data
	}
	f.check(t, v)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	ro, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	f.check(t, ro)
}

// writerLoop creates, overwrites and deletes files named after writer w,
// reporting each file's content (nil once deleted).
func writerLoop(v *xfs.Volume, dir format.Ino, w, rounds int, report func(name string, data []byte)) error {
	rng := rand.New(rand.NewSource(int64(w)))
	var mine []string
	for i := 0; i < rounds; i++ {
		name := fmt.Sprintf("w%d-%d", w, i)
		ino, err := v.Names().Create(dir, name, xfs.Attrs{Mode: 0o644})
		if err != nil {
			return err
		}
		data := make([]byte, (1+rng.Intn(16))*8<<10)
		rng.Read(data)
		for off := 0; off < len(data); off += 8 << 10 {
			if _, err := v.Files().WriteAt(ino, data[off:off+8<<10], int64(off)); err != nil {
				return err
			}
		}
		report(name, data)
		mine = append(mine, name)
		if rng.Intn(3) == 0 {
			k := rng.Intn(len(mine))
			if err := v.Names().Unlink(dir, mine[k]); err != nil {
				return err
			}
			report(mine[k], nil)
			mine = append(mine[:k], mine[k+1:]...)
		}
	}
	return nil
}

// blockingDiscard holds back discards of at least big bytes until
// release is closed, announcing the first on started.
type blockingDiscard struct {
	*dev.File
	big     int64
	once    sync.Once
	started chan struct{}
	release chan struct{}
}

func (d *blockingDiscard) Discard(off, n int64) error {
	if n >= d.big {
		d.once.Do(func() { close(d.started) })
		<-d.release
	}
	return d.File.Discard(off, n)
}

// TestAllocationWaitsForDiscard: on a full volume, the space a delete
// gave back is being discarded (marked busy) when a write needs it; the
// write waits for the discard instead of failing with ErrNoSpace.
func TestAllocationWaitsForDiscard(t *testing.T) {
	img := formatImage(t, mkfs.Options{Size: 64 << 20, AgCount: 2})
	fd, err := dev.Open(img, false)
	if err != nil {
		t.Fatal(err)
	}
	bd := &blockingDiscard{File: fd, big: 512 << 10, started: make(chan struct{}), release: make(chan struct{})}
	v, err := xfs.OpenDevice(bd, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	d, err := v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	fill := func(prefix string, size int) {
		chunk := make([]byte, min(size, 64<<10))
		for i := range chunk {
			chunk[i] = 0x5A
		}
		for i := 0; ; i++ {
			ino, err := v.Names().Create(d, fmt.Sprintf("%s%d", prefix, i), xfs.Attrs{Mode: 0o644})
			for off := 0; err == nil && off < size; off += len(chunk) {
				_, err = v.Files().WriteAt(ino, chunk, int64(off))
			}
			if errors.Is(err, xfs.ErrNoSpace) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	fill("big", 1<<20)
	fill("small", 4<<10)
	if err := v.Names().Unlink(d, "big3"); err != nil {
		t.Fatal(err)
	}
	trimmed := make(chan error, 1)
	go func() {
		_, err := v.Space().Trim(context.Background(), xfs.TrimOptions{})
		trimmed <- err
	}()
	select {
	case <-bd.started:
	case err := <-trimmed:
		t.Fatalf("trim ended (%v) without discarding the deleted file's megabyte", err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		close(bd.release)
	}()
	ino, err := v.Names().Create(d, "after", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte{0xC3}, 512<<10)
	if _, err := v.Files().WriteAt(ino, data, 0); err != nil {
		t.Fatalf("write into space being discarded: %v", err)
	}
	if err := <-trimmed; err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(data))
	if _, err := v.Files().ReadAt(ino, got, 0); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("file written after the discard reads back wrong (%v)", err)
	}
}

// requestLog records the discard requests a device is given.
type requestLog struct {
	*dev.File
	mu   sync.Mutex
	reqs []dev.Range
}

func (d *requestLog) Discard(off, n int64) error {
	d.mu.Lock()
	d.reqs = append(d.reqs, dev.Range{Off: off, Len: n})
	d.mu.Unlock()
	return d.File.Discard(off, n)
}

// TestTrimBoundsRequestsAndBatches: with RequestBytes and BatchBytes set,
// a pass over large free extents and fragmented frees sends no request
// over the bound, walks no batch over its bytes, reports every request to
// AfterRequest with what it discarded no longer busy (a pause there holds
// nothing already discarded), and still discards everything free; what
// was kept reads back identically.
func TestTrimBoundsRequestsAndBatches(t *testing.T) {
	const reqBytes, batchBytes = 192 << 10, 1 << 20
	img := formatImage(t, mkfs.Options{Size: 64 << 20, AgCount: 2})
	fd, err := dev.Open(img, false)
	if err != nil {
		t.Fatal(err)
	}
	rl := &requestLog{File: fd}
	v, err := xfs.OpenDevice(rl, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	f := writeFragmented(t, v, 8, 32, 16<<10, 7)
	f.remove(t, v, func(i int) bool { return i%2 == 1 })
	var after []int64
	var examined []int64
	var stillBusy []dev.Range
	st, err := v.Space().Trim(context.Background(), xfs.TrimOptions{RequestBytes: reqBytes, BatchBytes: batchBytes,
		AfterRequest: func(n int64, took time.Duration, err error) {
			rl.mu.Lock()
			r := rl.reqs[len(rl.reqs)-1]
			rl.mu.Unlock()
			// The request's last block ends its extent unless the extent
			// goes on into the next request (cut at the bound).
			if last := (dev.Range{Off: r.End() - 4096, Len: 4096}); err == nil && r.Len < reqBytes && xfs.BusyIn(v, last.Off, last.Len) {
				stillBusy = append(stillBusy, r)
			}
			after = append(after, n)
		},
		Progress: func(p xfs.TrimProgress) { examined = append(examined, p.Stats.ExaminedBytes) }})
	if errors.Is(err, xfs.ErrDiscardUnsupported) {
		t.Skipf("the test directory's filesystem cannot punch holes: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for i, r := range rl.reqs {
		if r.Len > reqBytes || r.Len != after[i] {
			t.Fatalf("request %d of %d bytes (reported %d), bound %d", i, r.Len, after[i], reqBytes)
		}
		sum += r.Len
	}
	if int64(len(rl.reqs)) != st.Requests || len(after) != len(rl.reqs) || sum != st.DiscardedBytes || st.RequestMax <= 0 {
		t.Fatalf("%d requests of %d bytes, %d reported; stats %+v", len(rl.reqs), sum, len(after), st)
	}
	if len(stillBusy) > 0 {
		t.Fatalf("%d requests (first %v) still busy once done", len(stillBusy), stillBusy[0])
	}
	prev := int64(0)
	for _, e := range examined {
		if e-prev > batchBytes {
			t.Fatalf("a batch walked %d bytes, bound %d", e-prev, batchBytes)
		}
		prev = e
	}
	free := freeBytes(t, v)
	if st.DiscardedBytes*100 < free*99 || st.Batches < free/batchBytes {
		t.Fatalf("discarded %d of %d free bytes in %d batches", st.DiscardedBytes, free, st.Batches)
	}
	f.check(t, v)
}
