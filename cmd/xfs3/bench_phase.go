package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
)

// listPage is the page size of the LIST phases, S3's largest; a variable
// so that tests can cross pages with few keys.
var listPage = 1000

// phaseLimit says when a phase ends: after ops operations in all when ops
// is positive, otherwise once d has passed since it began.
type phaseLimit struct {
	ops int64
	d   time.Duration
}

// opFunc performs operation i of a phase (numbered from 0 across all
// clients) as client w, and returns the payload bytes it moved.
type opFunc func(ctx context.Context, w int, i int64) (int64, error)

// phaseStats is what one phase measured.
type phaseStats struct {
	ops      int64 // successful operations
	bytes    int64 // payload of those
	errors   int64
	firstErr error
	elapsed  time.Duration
	lat      []time.Duration // of the successful operations, sorted
	cpu      *phaseCPU       // nil without --server-pid
}

// runPhase runs op from clients goroutines until lim is reached or ctx is
// cancelled. Each client keeps its own samples, so the clients share
// nothing but the operation counter.
//
// Cancelling ctx starts no new operations but lets those under way finish:
// a PUT the client gave up on may still land on the server, after cleanup
// has listed what to delete.
func runPhase(ctx context.Context, clients int, lim phaseLimit, op opFunc) phaseStats {
	opCtx := context.WithoutCancel(ctx)
	var next atomic.Int64
	start := time.Now()
	deadline := start.Add(lim.d)
	per := make([]phaseStats, clients)
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			st := &per[w]
			for ctx.Err() == nil {
				if lim.ops <= 0 && !time.Now().Before(deadline) {
					return
				}
				i := next.Add(1) - 1
				if lim.ops > 0 && i >= lim.ops {
					return
				}
				t0 := time.Now()
				n, err := op(opCtx, w, i)
				d := time.Since(t0)
				if err != nil {
					st.errors++
					if st.firstErr == nil {
						st.firstErr = err
					}
					continue
				}
				st.ops++
				st.bytes += n
				st.lat = append(st.lat, d)
			}
		})
	}
	wg.Wait()
	all := phaseStats{elapsed: time.Since(start)}
	for _, st := range per {
		all.ops += st.ops
		all.bytes += st.bytes
		all.errors += st.errors
		if all.firstErr == nil {
			all.firstErr = st.firstErr
		}
		all.lat = append(all.lat, st.lat...)
	}
	slices.Sort(all.lat)
	return all
}

// percentile is the nearest-rank p-th percentile (0 < p ≤ 1) of sorted
// samples, 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// runAll runs the phases of every size and concurrency and then the big
// object, and returns the number of failed operations.
func (b *bencher) runAll(ctx context.Context, out *benchOutput) (failed int64) {
	for _, size := range b.o.sizes {
		for _, c := range b.o.concurrency {
			failed += b.runSet(ctx, out, size, c)
			if ctx.Err() != nil {
				return failed
			}
		}
	}
	if b.o.big > 0 {
		failed += b.runBig(ctx, out)
	}
	return failed
}

// runSet runs PUT, GET, HEAD, LIST, LIST/ and DELETE for one size and
// concurrency, on keys of their own.
func (b *bencher) runSet(ctx context.Context, out *benchOutput, size int64, clients int) (failed int64) {
	prefix := fmt.Sprintf("%s%s-c%d/", b.run, sizeLabel(size), clients)
	lim := phaseLimit{ops: b.o.ops, d: b.o.duration}
	report := func(op string, st phaseStats) {
		failed += st.errors
		b.cpuFailed += st.cpu.failures()
		out.phase(op, size, clients, st)
	}

	perClient := make([][]string, clients)
	report("PUT", b.measuredPhase(ctx, clients, lim, b.putOp(prefix, size, perClient)))
	keys := slices.Concat(perClient...)
	slices.Sort(keys)
	if len(keys) == 0 || ctx.Err() != nil {
		return failed // nothing to read, list or delete; cleanup sweeps the rest
	}
	for _, ph := range []struct {
		op string
		f  opFunc
	}{
		{"GET", b.getOp(keys, size, clients)},
		{"HEAD", b.headOp(keys, size)},
		{"LIST", b.listOp(prefix, "", len(keys), clients)},
		{"LIST/", b.listOp(prefix, "/", len(keys), clients)},
	} {
		report(ph.op, b.measuredPhase(ctx, clients, lim, ph.f))
		if ctx.Err() != nil {
			return failed
		}
	}
	// Every key goes, however long it takes: the next set should start
	// on a volume as empty as the first did.
	report("DELETE", b.measuredPhase(ctx, clients, phaseLimit{ops: int64(len(keys))}, b.deleteOp(keys)))
	return failed
}

// putOp writes key prefix+SEQ for operation SEQ and records it in
// written[client], which only that client touches.
func (b *bencher) putOp(prefix string, size int64, written [][]string) opFunc {
	return func(ctx context.Context, w int, i int64) (int64, error) {
		key := fmt.Sprintf("%s%08d", prefix, i)
		if err := b.put(ctx, key, size); err != nil {
			return 0, err
		}
		written[w] = append(written[w], key)
		return size, nil
	}
}

// put uploads size pattern bytes as key in one PUT: multipart would
// measure a different path and is not what a single stream means.
func (b *bencher) put(ctx context.Context, key string, size int64) error {
	_, err := b.client.PutObject(ctx, b.bucket, key, newPatternReader(size), size,
		minio.PutObjectOptions{DisableMultipart: true})
	return err
}

// getOp reads keys round robin.
func (b *bencher) getOp(keys []string, size int64, clients int) opFunc {
	bufs := make([][]byte, clients)
	return func(ctx context.Context, w int, i int64) (int64, error) {
		if bufs[w] == nil {
			bufs[w] = make([]byte, 256<<10)
		}
		return b.get(ctx, keys[i%int64(len(keys))], size, bufs[w])
	}
}

// get reads key to its end through buf and checks that it had size bytes.
func (b *bencher) get(ctx context.Context, key string, size int64, buf []byte) (int64, error) {
	body, _, _, err := b.core.GetObject(ctx, b.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return 0, err
	}
	defer body.Close()
	var n int64
	for {
		m, err := body.Read(buf)
		n += int64(m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, fmt.Errorf("GET %s: after %d bytes: %w", key, n, err)
		}
	}
	if n != size {
		return n, fmt.Errorf("GET %s: %d bytes, want %d", key, n, size)
	}
	return n, nil
}

// headOp asks for keys' metadata round robin; each answer must carry the
// size the PUT wrote.
func (b *bencher) headOp(keys []string, size int64) opFunc {
	return func(ctx context.Context, _ int, i int64) (int64, error) {
		key := keys[i%int64(len(keys))]
		info, err := b.client.StatObject(ctx, b.bucket, key, minio.StatObjectOptions{})
		if err != nil {
			return 0, err
		}
		if info.Size != size {
			return 0, fmt.Errorf("HEAD %s: size %d, want %d", key, info.Size, size)
		}
		return 0, nil
	}
}

// listOp has every client page through prefix from start to end and again;
// one operation is one page, and a finished pass must have seen want keys.
func (b *bencher) listOp(prefix, delimiter string, want, clients int) opFunc {
	type cursor struct {
		token string
		seen  int
	}
	cur := make([]cursor, clients)
	return func(_ context.Context, w int, _ int64) (int64, error) {
		c := &cur[w]
		// Core's ListObjectsV2 takes no context; a page is short enough
		// that Ctrl-C waits for it.
		res, err := b.core.ListObjectsV2(b.bucket, prefix, "", c.token, delimiter, listPage)
		if err != nil {
			*c = cursor{}
			return 0, err
		}
		c.seen += len(res.Contents) + len(res.CommonPrefixes)
		if res.IsTruncated {
			if res.NextContinuationToken == "" {
				*c = cursor{}
				return 0, fmt.Errorf("LIST %s: truncated page without a continuation token", prefix)
			}
			c.token = res.NextContinuationToken
			return 0, nil
		}
		seen := c.seen
		*c = cursor{}
		if seen != want {
			return 0, fmt.Errorf("LIST %s (delimiter %q): a full pass found %d keys, want %d", prefix, delimiter, seen, want)
		}
		return 0, nil
	}
}

// deleteOp deletes keys[i] for operation i.
func (b *bencher) deleteOp(keys []string) opFunc {
	return func(ctx context.Context, _ int, i int64) (int64, error) {
		return 0, b.client.RemoveObject(ctx, b.bucket, keys[i], minio.RemoveObjectOptions{})
	}
}

// runBig puts and gets one object of the --big size in single streams,
// then measures the raw file; it returns the failed operations.
func (b *bencher) runBig(ctx context.Context, out *benchOutput) int64 {
	size := b.o.big
	key := b.run + "big-" + sizeLabel(size)
	one := phaseLimit{ops: 1}
	put := runPhase(ctx, 1, one, func(ctx context.Context, _ int, _ int64) (int64, error) {
		return size, b.put(ctx, key, size)
	})
	var cold error = errNotDropped
	if b.o.volume != "" && put.errors == 0 {
		cold = dropFileCache(b.o.volume)
	}
	get := runPhase(ctx, 1, one, b.getOp([]string{key}, size, 1))
	// A failure here is left to cleanup, which reports it.
	b.client.RemoveObject(ctx, b.bucket, key, minio.RemoveObjectOptions{})

	var raw *rawResult
	var rawErr error
	if b.o.rawDir != "" && ctx.Err() == nil {
		raw, rawErr = measureRaw(ctx, b.o.rawDir, size)
	}
	out.big(size, put, get, cold, raw, rawErr)
	failed := put.errors + get.errors
	if rawErr != nil {
		failed++
	}
	return failed
}

// errNotDropped says the engine's GET may have been served from the page
// cache: no --volume named the file to drop.
var errNotDropped = errors.New("no --volume given")

// payload is what every object and the raw file are cut from: random, so
// that nothing on the way can compress it, and shared, so that PUTs
// allocate nothing.
var payload = func() []byte {
	p := make([]byte, 1<<20)
	rand.Read(p)
	return p
}()

// patternReader reads size bytes of payload repeated. It seeks, so that
// minio-go can sign it without a copy.
type patternReader struct {
	size, off int64
}

func newPatternReader(size int64) *patternReader { return &patternReader{size: size} }

func (r *patternReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.size-r.off)]
	n := 0
	for n < len(p) {
		n += copy(p[n:], payload[(r.off+int64(n))%int64(len(payload)):])
	}
	r.off += int64(n)
	return n, nil
}

func (r *patternReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return r.off, fmt.Errorf("seek: bad whence %d", whence)
	}
	if offset < 0 {
		return r.off, errors.New("seek: negative offset")
	}
	r.off = offset
	return offset, nil
}

// sizeLabel writes n in the largest binary unit that divides it ("4KiB",
// "1GiB", "1500B").
func sizeLabel(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}
