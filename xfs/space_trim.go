package xfs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// TrimOptions say what a trim pass covers. Offsets and lengths are bytes
// of the data device, as the kernel's FITRIM takes them.
type TrimOptions struct {
	// Offset and Length bound the pass (Length 0: to the end).
	Offset, Length int64
	// MinLen skips free extents shorter than this (0: none); it is raised
	// to the device's discard granularity.
	MinLen int64
	// BatchRecords bounds the free-space records examined per hold of an
	// AG's free-space lock (0: alloc.DefaultTrimBatch, 100).
	BatchRecords int
	// BatchBytes bounds the free space one batch walks (0:
	// DefaultTrimBatchBytes): a longer free extent is cut and the next
	// batch resumes inside it. A batch's extents stay busy until its
	// last request is over, so this bounds what allocators must avoid.
	BatchBytes int64
	// RequestBytes bounds one discard request (0:
	// DefaultTrimRequestBytes); it is rounded to the device's granule.
	RequestBytes int64
	// AfterRequest, when set, is called after every discard request with
	// its bytes, how long the device took and its error, on the goroutine
	// that discards and with no lock held: a scheduler may pause in it to
	// leave the storage to the volume's writes between requests.
	AfterRequest func(bytes int64, took time.Duration, err error)
	// OnlyFreed walks only where space was freed since it was last
	// trimmed (TrimBacklog); after open that is all free space.
	OnlyFreed bool
	// MaxBytes ends the pass once it has discarded this many bytes (0: no
	// limit); TrimStats.Next says where to resume.
	MaxBytes int64
	// Progress is called after every batch, on the pass's goroutine and
	// with no lock held: a scheduler may pause in it to pace the pass.
	Progress func(TrimProgress)
}

// Trim's request shape defaults.
const (
	// DefaultTrimRequestBytes: a hole punch holds the volume file's
	// inode lock for its whole length, and every write to the volume
	// waits behind it. On ext4 here a punch of written blocks costs about
	// 0.5 ms plus 0.45 ms a MiB, so 4 MiB requests stall a write by at
	// most about 2.5 ms while still freeing about 1.5 GiB/s, 70% of what
	// one huge punch frees (a 256 MiB punch stalled writes 120 ms).
	DefaultTrimRequestBytes = 4 << 20
	// DefaultTrimBatchBytes: four requests' worth, so a large free
	// extent is busy to allocators for four paced requests at a time.
	DefaultTrimBatchBytes = 4 * DefaultTrimRequestBytes
)

// TrimProgress is where a pass is, after a batch.
type TrimProgress struct {
	AG       format.AgNumber
	Offset   int64 // byte offset the walk has reached
	From, To int64 // the pass's byte range
	Stats    TrimStats
}

// TrimStats count what a trim pass did.
type TrimStats struct {
	// Free space the walk examined (records of the by-block free-space
	// tree, clipped to the range), and of it what it skipped: busy
	// (freed by a change not yet durable, or being discarded by another
	// pass) or in pieces under MinLen.
	ExaminedBytes, ExaminedExtents int64
	BusyBytes, ShortBytes          int64
	// Extents handed to the device and the bytes it took; Unaligned
	// bytes fill no whole discard granule and were left; Requests are
	// the discard requests after merging, Errors the failed ones (the
	// first one's message in FirstError).
	DiscardedBytes, DiscardedExtents int64
	UnalignedBytes, Requests, Errors int64
	FirstError                       string
	// RequestMax is the longest discard request: about the longest a
	// write to the volume waited for trim.
	RequestMax time.Duration
	// Unsupported: the device cannot discard; the pass stopped at once.
	Unsupported bool
	Batches     int64
	// How long batches held an AG's free-space lock.
	LockHoldMax, LockHoldP99 time.Duration
	Elapsed                  time.Duration
	// Next is where the pass stopped: the end of its range when it
	// finished, else the first byte it did not finish.
	Next int64
}

// Trim gives free space back to the storage under the volume: it walks
// the by-block free-space tree of each AG in the range in batches (see
// package alloc), discarding each batch (a hole punched in a volume file,
// BLKDISCARD on a block device) while gathering the next. Allocations go
// on meanwhile: a batch holds its AG's free-space lock for at most
// BatchRecords records, and extents being discarded stay busy until the
// discard completes. Trim stops between batches when ctx is done. Failed
// discards are counted, not fatal; a device that cannot discard ends the
// pass with ErrDiscardUnsupported. Passes run one at a time, and must be
// over before Close.
func (v Space) Trim(ctx context.Context, o TrimOptions) (TrimStats, error) {
	if err := v.checkWritable(); err != nil {
		return TrimStats{}, err
	}
	from, to, err := v.trimRange(o)
	if err != nil {
		return TrimStats{}, err
	}
	p := &trimPass{v: v.mount, o: o, from: from, to: to, started: time.Now()}
	p.st.Next = int64(from) << v.geo.BlockLog
	if _, ok := v.dev.(dev.Discarder); !ok {
		p.st.Unsupported = true
		return p.st, fmt.Errorf("%w: the device has no discard", ErrDiscardUnsupported)
	}
	p.minLen = v.trimMinLen(o.MinLen)
	p.requestBytes = cmp.Or(max(o.RequestBytes, 0), DefaultTrimRequestBytes)
	p.batchBlocks = uint64(max(cmp.Or(max(o.BatchBytes, 0), DefaultTrimBatchBytes)>>v.geo.BlockLog, 1))
	v.w.trimMu.Lock()
	defer v.w.trimMu.Unlock()
	// Frees become trimmable once durable: make every committed one so.
	if err := v.cache.Sync(); err != nil {
		return p.st, err
	}
	err = p.run(ctx)
	return p.finish(), err
}

// trimRange converts the options' byte range to filesystem blocks in the
// linear (AG number × AG size + AG block) space.
func (v Space) trimRange(o TrimOptions) (from, to uint64, err error) {
	g := &v.geo
	size := g.DBlocks << g.BlockLog
	if o.Offset < 0 || o.Length < 0 || o.MinLen < 0 || uint64(o.Offset) >= size {
		return 0, 0, fmt.Errorf("%w: trim of %d bytes at %d (minlen %d) on a %d-byte volume", ErrInvalid, o.Length, o.Offset, o.MinLen, size)
	}
	end := size
	if o.Length > 0 && uint64(o.Offset)+uint64(o.Length) < size {
		end = uint64(o.Offset) + uint64(o.Length)
	}
	bs := uint64(g.BlockSize)
	from, to = (uint64(o.Offset)+bs-1)/bs, end/bs
	if to <= from {
		return 0, 0, fmt.Errorf("%w: trim range of %d bytes at %d holds no whole block", ErrInvalid, o.Length, o.Offset)
	}
	return from, to, nil
}

// trimMinLen is MinLen in blocks, at least the device's granule.
func (v Space) trimMinLen(minLen int64) uint32 {
	bs := int64(v.geo.BlockSize)
	if d, ok := v.dev.(dev.Discarder); ok {
		minLen = max(minLen, d.DiscardGranularity())
	}
	return uint32(min((minLen+bs-1)/bs, int64(v.geo.AgBlocks)))
}

// trimPass is one Trim call's state.
type trimPass struct {
	v        *mount
	o        TrimOptions
	from, to uint64 // linear blocks
	minLen   uint32
	started  time.Time
	// requestBytes bounds a discard request, batchBlocks a batch's walk.
	requestBytes int64
	batchBlocks  uint64

	mu    sync.Mutex // guards st and holds: discards report from their goroutine
	st    TrimStats
	holds []time.Duration
}

// linear returns the linear block of (ag, bno).
func (p *trimPass) linear(ag format.AgNumber, bno format.AgBlock) uint64 {
	return uint64(ag)*uint64(p.v.geo.AgBlocks) + uint64(bno)
}

// run walks every AG the range touches; in each, the windows trim has to
// walk (with OnlyFreed, those freed since trimmed).
func (p *trimPass) run(ctx context.Context) error {
	g := &p.v.geo
	space := p.v.w.space
	inner, stop := context.WithCancel(ctx)
	defer stop()
	budget := func() bool { return p.o.MaxBytes > 0 && p.discarded() >= p.o.MaxBytes }
	for ag := format.AgNumber(p.from / uint64(g.AgBlocks)); uint64(ag) < uint64(g.AgCount); ag++ {
		base := p.linear(ag, 0)
		if base >= p.to {
			break
		}
		start := format.AgBlock(max(p.from, base) - base)
		end := format.AgBlock(min(p.to-base, uint64(g.AgSize(ag))))
		// Either way the range is walked now: forget it as untrimmed.
		walks := joinRuns(space.TakeUntrimmed(ag, start, end))
		if !p.o.OnlyFreed {
			walks = []trimWalk{{start: start, end: end}}
		}
		for i, w := range walks {
			resume, err := p.walk(inner, ag, w, stop, budget)
			if resume < w.end || err != nil {
				// Give back what this pass did not finish.
				w.giveBack(space, ag, resume)
				for _, rest := range walks[i+1:] {
					rest.giveBack(space, ag, 0)
				}
				p.setNext(p.linear(ag, resume))
				if ctx.Err() == nil && budget() && errors.Is(err, context.Canceled) {
					return nil
				}
				return err
			}
		}
		p.setNext(base + uint64(end))
	}
	p.setNext(p.to)
	return nil
}

// trimWalk is one walk of an AG's by-block free-space tree: [start, end),
// discarding only inside runs when they are set.
type trimWalk struct {
	start, end format.AgBlock
	runs       [][2]format.AgBlock
}

// trimJoinGap: untrimmed runs closer than this many blocks share one
// walk. The free-space records in such a gap are few next to the 100 a
// batch examines unless free space there is very fragmented, while a
// walk of its own costs a hold of the AGF, a tree lookup and a batch of
// its own.
const trimJoinGap = 1024

// joinRuns turns untrimmed runs (sorted, apart) into walks.
func joinRuns(runs [][2]format.AgBlock) []trimWalk {
	var walks []trimWalk
	for _, r := range runs {
		if n := len(walks); n > 0 && r[0]-walks[n-1].end < trimJoinGap {
			walks[n-1].end = r[1]
			walks[n-1].runs = append(walks[n-1].runs, r)
			continue
		}
		walks = append(walks, trimWalk{start: r[0], end: r[1], runs: [][2]format.AgBlock{r}})
	}
	return walks
}

// giveBack marks what the walk did not finish, from block resume on,
// untrimmed again.
func (w trimWalk) giveBack(space *alloc.Space, ag format.AgNumber, resume format.AgBlock) {
	if w.runs == nil {
		space.MarkUntrimmed(ag, max(w.start, resume), w.end)
		return
	}
	for _, r := range w.runs {
		if r[1] > resume {
			space.MarkUntrimmed(ag, max(r[0], resume), r[1])
		}
	}
}

// walk trims the walk's range of ag, batch by batch.
func (p *trimPass) walk(ctx context.Context, ag format.AgNumber, w trimWalk, stop func(), budget func() bool) (format.AgBlock, error) {
	v := p.v
	r := alloc.TrimRange{AG: ag, Start: w.start, End: w.end, Only: w.runs, MinLen: p.minLen,
		BatchRecords: p.o.BatchRecords, BatchBlocks: p.batchBlocks}
	discard := func(exts []trans.Extent) error { return p.discard(exts) }
	done := func(b alloc.TrimBatch) {
		p.batchDone(ag, b)
		if budget() {
			stop()
		}
	}
	return v.w.space.Trim(ctx, v.cache, r, discard, done)
}

// discard hands a batch's extents to the device; failures are counted,
// only an unsupported device stops the pass. Requests go out in offset
// order, and once one is over, the extents that end inside what is done
// are no longer busy (the batch's TrimDone clears the rest): a pause
// between requests holds only what is still to be discarded.
func (p *trimPass) discard(exts []trans.Extent) error {
	g := &p.v.geo
	byteRange := func(e trans.Extent) dev.Range {
		return dev.Range{Off: format.DaddrToByte(g.AgbToDaddr(e.AG, e.Start)), Len: int64(e.Len) << g.BlockLog}
	}
	sorted := slices.SortedFunc(slices.Values(exts), func(a, b trans.Extent) int {
		return cmp.Compare(byteRange(a).Off, byteRange(b).Off)
	})
	ranges := make([]dev.Range, len(sorted))
	for i, e := range sorted {
		ranges[i] = byteRange(e)
	}
	cleared := 0
	after := func(r dev.Range, took time.Duration, err error) {
		n := cleared
		for n < len(sorted) && ranges[n].End() <= r.End() {
			n++
		}
		p.v.cache.Busy().ClearDiscarding(sorted[cleared:n])
		cleared = n
		p.requestDone(r, took, err)
	}
	ds, err := dev.DiscardRangesWith(p.v.dev, ranges, dev.DiscardOptions{MaxRequest: p.requestBytes, After: after})
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.Requests += ds.Requests
	p.st.DiscardedBytes += ds.Bytes
	p.st.UnalignedBytes += ds.Unaligned
	p.st.Errors += ds.Errors
	p.st.DiscardedExtents += int64(len(exts))
	if errors.Is(err, dev.ErrDiscardUnsupported) {
		p.st.Unsupported = true
		return err
	}
	if err != nil && p.st.FirstError == "" {
		p.st.FirstError = err.Error()
	}
	return nil
}

// requestDone times a discard request and hands it to AfterRequest.
func (p *trimPass) requestDone(r dev.Range, took time.Duration, err error) {
	p.mu.Lock()
	p.st.RequestMax = max(p.st.RequestMax, took)
	p.mu.Unlock()
	if p.o.AfterRequest != nil {
		p.o.AfterRequest(r.Len, took, err)
	}
}

// batchDone counts a batch once its discard is over and reports progress.
func (p *trimPass) batchDone(ag format.AgNumber, b alloc.TrimBatch) {
	bs := int64(p.v.geo.BlockSize)
	p.mu.Lock()
	p.st.Batches++
	p.st.ExaminedExtents += int64(b.Records)
	p.st.ExaminedBytes += int64(b.Examined) * bs
	p.st.BusyBytes += int64(b.Busy) * bs
	p.st.ShortBytes += int64(b.Short) * bs
	p.holds = append(p.holds, b.Held)
	p.st.LockHoldMax = max(p.st.LockHoldMax, b.Held)
	p.st.Next = int64(p.linear(ag, b.Next)) * bs
	st := p.st
	p.mu.Unlock()
	if p.o.Progress != nil {
		st.Elapsed = time.Since(p.started)
		p.o.Progress(TrimProgress{AG: ag, Offset: st.Next, From: int64(p.from) * bs, To: int64(p.to) * bs, Stats: st})
	}
}

func (p *trimPass) discarded() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.DiscardedBytes
}

func (p *trimPass) setNext(block uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.Next = int64(block) << p.v.geo.BlockLog
}

// finish fills in the pass's timing.
func (p *trimPass) finish() TrimStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.st
	st.Elapsed = time.Since(p.started)
	st.LockHoldP99 = percentile(p.holds, 0.99)
	return st
}

// percentile returns the q-quantile of ds (nearest rank).
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*q+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// TrimBacklog is, per AG, how many bytes lie where space was freed since
// it was last trimmed (whole granules: an upper bound of what a pass with
// OnlyFreed would walk). After open it is every AG's whole size.
func (v Space) TrimBacklog() []int64 {
	if v.w == nil {
		return nil
	}
	out := make([]int64, v.geo.AgCount)
	for ag := range out {
		out[ag] = int64(v.w.space.Untrimmed(format.AgNumber(ag))) << v.geo.BlockLog
	}
	return out
}
