package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/store/checksum"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// The copy benchmark drives this checkout's `xfs3 serve` on one volume
// with raw signed requests. Copies share their source's blocks
// (store/clone.go), so a CopyObject should cost about the same whatever
// the object's size, and copies of an object should take next to no
// space. It measures both: CopyObject latency by size against a PUT of
// the same size in the same run, and the space one large object and many
// copies of it take.

const copyBenchBucket = "copybench"

// copyBenchConfig is what the environment asks of the benchmark.
type copyBenchConfig struct {
	sizes  []int64 // object sizes, ascending
	rounds int
	copies int // copies of each size in a round
	puts   int // PUTs of each size in a round
	fanout int // copies of the largest size whose space is measured
	volume string
}

// copyBenchConfigFrom reads the benchmark's settings through getenv.
func copyBenchConfigFrom(getenv func(string) string) (copyBenchConfig, error) {
	c := copyBenchConfig{sizes: []int64{1 << 20, 64 << 20, 1 << 30}, volume: "4G"}
	if s := getenv("XFS3_COPY_BENCH_SIZES"); s != "" {
		c.sizes = nil
		for _, item := range strings.Split(s, ",") {
			n, err := parseByteSize(item)
			if err != nil {
				return c, fmt.Errorf("XFS3_COPY_BENCH_SIZES: %w", err)
			}
			c.sizes = append(c.sizes, n)
		}
		slices.Sort(c.sizes)
		c.sizes = slices.Compact(c.sizes)
	}
	for _, v := range []struct {
		name string
		to   *int
		def  int
	}{
		{"XFS3_BENCH_ROUNDS", &c.rounds, 3},
		{"XFS3_COPY_BENCH_COPIES", &c.copies, 5},
		{"XFS3_COPY_BENCH_PUTS", &c.puts, 2},
		{"XFS3_COPY_BENCH_FANOUT", &c.fanout, 100},
	} {
		n, err := positiveInts(getenv(v.name), []int{v.def})
		if err != nil || len(n) != 1 {
			return c, fmt.Errorf("%s: want one positive count (%v)", v.name, err)
		}
		*v.to = n[0]
	}
	if s := getenv("XFS3_COPY_BENCH_VOLUME"); s != "" {
		if _, err := parseByteSize(s); err != nil {
			return c, fmt.Errorf("XFS3_COPY_BENCH_VOLUME: %w", err)
		}
		c.volume = s
	}
	return c, nil
}

// parseByteSize reads a size such as 1MiB, 64M, 1GiB or 4096: a whole
// number with an optional binary suffix (K, M, G, T, with or without iB).
func parseByteSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	num := strings.TrimRight(s, "KMGTiB")
	shift := 0
	switch strings.TrimSuffix(strings.TrimSuffix(s[len(num):], "B"), "i") {
	case "":
	case "K":
		shift = 10
	case "M":
		shift = 20
	case "G":
		shift = 30
	case "T":
		shift = 40
	default:
		return 0, fmt.Errorf("%q is not a size (1MiB, 64M, 4096)", s)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("%q is not a size (1MiB, 64M, 4096)", s)
	}
	return n << shift, nil
}

// byteSize renders n as the largest binary unit that divides it.
func byteSize(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// cyclicReader streams size bytes that repeat block, so that a client
// can send a GiB without holding it or spending the CPU to make it.
type cyclicReader struct {
	block     []byte
	off, size int64
}

func (r *cyclicReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.size-r.off)]
	n := 0
	for n < len(p) {
		n += copy(p[n:], r.block[(r.off+int64(n))%int64(len(r.block)):])
	}
	r.off += int64(n)
	return n, nil
}

// copyBenchBlock is what every benchmark object repeats; not zeros, so
// that nothing on the way could make them cheap.
var copyBenchBlock = func() []byte {
	b := make([]byte, 1<<20)
	(&patternReader{size: int64(len(b))}).Read(b)
	return b
}()

// copyBenchCRC is the CRC64NVME of size bytes of copyBenchBlock repeated,
// base64 as x-amz-checksum-crc64nvme carries it.
func copyBenchCRC(size int64) string {
	h := checksum.CRC64NVME.New()
	io.Copy(h, &cyclicReader{block: copyBenchBlock, size: size})
	return checksum.CRC64NVME.Encode(h.Sum(nil))
}

// send sends one request signed with an unsigned payload (hashing a GiB
// for the signature would cost the client seconds per PUT), its body of
// size bytes streamed from body, and reads the whole answer.
func (c *benchClient) send(method, pathQuery string, body io.Reader, size int64, header http.Header) (int, []byte, error) {
	req, err := http.NewRequest(method, c.url+pathQuery, body)
	if err != nil {
		return 0, nil, err
	}
	req.ContentLength = size
	if size == 0 {
		req.Body = http.NoBody
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	req = signer.SignV4(*req, accessKey, secretKey, "", region)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// copyBench is one server under the benchmark.
type copyBench struct {
	tb testing.TB
	s  *server
	c  *benchClient
}

// put PUTs size bytes at key, with their CRC64NVME when crc is not ""
// (then a copy keeps it and reads nothing), and answers its latency.
func (b *copyBench) put(key string, size int64, crc string) time.Duration {
	b.tb.Helper()
	h := http.Header{}
	if crc != "" {
		h.Set("X-Amz-Checksum-Crc64nvme", crc)
	}
	start := time.Now()
	code, body, err := b.c.send("PUT", "/"+copyBenchBucket+"/"+key, &cyclicReader{block: copyBenchBlock, size: size}, size, h)
	d := time.Since(start)
	if err != nil || code != http.StatusOK {
		b.tb.Fatalf("PUT %s (%s): %d %v %s", key, byteSize(size), code, err, body)
	}
	return d
}

// copy copies src to dst with CopyObject and answers its latency.
func (b *copyBench) copy(src, dst string) time.Duration {
	b.tb.Helper()
	h := http.Header{"X-Amz-Copy-Source": {"/" + copyBenchBucket + "/" + src}}
	start := time.Now()
	code, body, err := b.c.send("PUT", "/"+copyBenchBucket+"/"+dst, nil, 0, h)
	d := time.Since(start)
	if err != nil || code != http.StatusOK || !strings.Contains(string(body), "<CopyObjectResult") {
		b.tb.Fatalf("copy %s to %s: %d %v %s", src, dst, code, err, body)
	}
	return d
}

// remove deletes key and answers its latency.
func (b *copyBench) remove(key string) time.Duration {
	b.tb.Helper()
	start := time.Now()
	code, body, err := b.c.send("DELETE", "/"+copyBenchBucket+"/"+key, nil, 0, nil)
	d := time.Since(start)
	if err != nil || code != http.StatusNoContent {
		b.tb.Fatalf("DELETE %s: %d %v %s", key, code, err, body)
	}
	return d
}

// volumeInfo is the info document's volume figures: used and saved bytes
// (statfs and the refcount btrees, through the engine), and the volume
// file's allocated bytes as the host's filesystem counts them.
type volumeInfo struct {
	used, saved, allocated int64
}

func (b *copyBench) volume() volumeInfo {
	b.tb.Helper()
	code, body, err := b.c.do("GET", "/minio/admin/v3/xfs3/info", nil)
	var in struct {
		Volume struct {
			UsedBytes  int64 `json:"used_bytes"`
			SavedBytes int64 `json:"saved_bytes"`
		} `json:"volume"`
	}
	if err != nil || code != http.StatusOK {
		b.tb.Fatalf("info: %d %v %s", code, err, body)
	}
	if err := json.Unmarshal(body, &in); err != nil {
		b.tb.Fatalf("info: %v: %s", err, body)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(b.s.Volume, &st); err != nil {
		b.tb.Fatal(err)
	}
	return volumeInfo{used: in.Volume.UsedBytes, saved: in.Volume.SavedBytes, allocated: st.Blocks * 512}
}

// copyBenchResult is what one run of the benchmark measured.
type copyBenchResult struct {
	sizes       []int64
	put, copy   map[int64][]time.Duration // by size, every sample
	uncheckSum  []time.Duration           // copies of the largest size put without a checksum
	fanout      int
	fanSize     int64
	before      volumeInfo // empty volume
	withSource  volumeInfo // the fan-out source put
	withCopies  volumeInfo // and its copies
	afterDelete volumeInfo // the copies deleted
	fanCopy     []time.Duration
	fanDelete   []time.Duration
}

// p50 is the median of ds (0 for none).
func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is "min–max" of ds.
func spread(ds []time.Duration) string {
	return fmt.Sprintf("%v–%v", slices.Min(ds).Round(10*time.Microsecond), slices.Max(ds).Round(10*time.Microsecond))
}

// runCopyBench runs the benchmark on a fresh server: first the space of
// cfg.fanout copies of one object of the largest size, on the empty
// volume so that the volume file's growth is the objects'; then rounds
// of PUTs and copies of every size, the order of the (size, operation)
// pairs rotating from round to round.
func runCopyBench(tb testing.TB, cfg copyBenchConfig, logf func(format string, args ...any)) copyBenchResult {
	s := startBinaryOn(tb, binary, filepath.Join(tb.TempDir(), "volume.xfs"), cfg.volume)
	b := &copyBench{tb: tb, s: s, c: newBenchClient(s.URL, 4)}
	if code, body, err := b.c.do("PUT", "/"+copyBenchBucket, nil); err != nil || code != http.StatusOK {
		tb.Fatalf("create bucket: %d %v %s", code, err, body)
	}
	r := copyBenchResult{sizes: cfg.sizes, put: map[int64][]time.Duration{}, copy: map[int64][]time.Duration{}, fanout: cfg.fanout}
	crc := map[int64]string{}
	for _, size := range cfg.sizes {
		crc[size] = copyBenchCRC(size)
	}
	largest := cfg.sizes[len(cfg.sizes)-1]
	src := func(size int64) string { return fmt.Sprintf("src-%d", size) }

	// Space: the largest object, then its copies.
	r.fanSize = largest
	r.before = b.volume()
	b.put(src(largest), largest, crc[largest])
	r.withSource = b.volume()
	for i := range cfg.fanout {
		r.fanCopy = append(r.fanCopy, b.copy(src(largest), fmt.Sprintf("fan-%03d", i)))
	}
	r.withCopies = b.volume()
	for i := range cfg.fanout {
		r.fanDelete = append(r.fanDelete, b.remove(fmt.Sprintf("fan-%03d", i)))
	}
	r.afterDelete = b.volume()

	// Latency. The largest source is there already.
	for _, size := range cfg.sizes[:len(cfg.sizes)-1] {
		b.put(src(size), size, crc[size])
	}
	b.put("src-nosum", largest, "")
	type step struct {
		size int64
		op   string // "put", "copy", "copy-nosum"
	}
	var steps []step
	for _, size := range cfg.sizes {
		steps = append(steps, step{size, "put"}, step{size, "copy"})
	}
	steps = append(steps, step{largest, "copy-nosum"})
	for round := range cfg.rounds {
		for _, i := range roundOrder(len(steps), round) {
			st := steps[i]
			var ds []time.Duration
			switch st.op {
			case "put":
				for range cfg.puts {
					ds = append(ds, b.put("put", st.size, crc[st.size]))
					b.remove("put")
				}
				r.put[st.size] = append(r.put[st.size], ds...)
			case "copy":
				for j := range cfg.copies {
					ds = append(ds, b.copy(src(st.size), fmt.Sprintf("copy-%d", j)))
				}
				for j := range cfg.copies {
					b.remove(fmt.Sprintf("copy-%d", j))
				}
				r.copy[st.size] = append(r.copy[st.size], ds...)
			case "copy-nosum":
				// Reading a GiB is seconds: one a round.
				ds = append(ds, b.copy("src-nosum", "copy-nosum"))
				b.remove("copy-nosum")
				r.uncheckSum = append(r.uncheckSum, ds...)
			}
			logf("round %d %-10s %8s: p50 %v (%s)\n", round+1, st.op, byteSize(st.size), p50(ds).Round(10*time.Microsecond), spread(ds))
		}
	}
	s.stop(tb)
	return r
}

// spaceLine sums up the fan-out: what the source and its copies added to
// the volume (statfs and the volume file), against the target of 1.1
// times the source.
func (r copyBenchResult) spaceLine() string {
	mib := func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
	grown := r.withCopies.used - r.before.used
	verdict := "met"
	if float64(grown) >= 1.1*float64(r.fanSize) {
		verdict = "NOT met"
	}
	return fmt.Sprintf("a %s source and %d copies (%s logical): used +%s (the source +%s, the copies +%d KiB), volume file allocated +%s, saved %s; "+
		"copy p50 %v (%s), delete of a copy p50 %v, used after deleting the copies +%s; target < 1.1 × the source: %s",
		byteSize(r.fanSize), r.fanout, byteSize(r.fanSize*int64(r.fanout+1)),
		mib(grown), mib(r.withSource.used-r.before.used), (r.withCopies.used-r.withSource.used)>>10,
		mib(r.withCopies.allocated-r.before.allocated), mib(r.withCopies.saved),
		p50(r.fanCopy).Round(10*time.Microsecond), spread(r.fanCopy), p50(r.fanDelete).Round(10*time.Microsecond),
		mib(r.afterDelete.used-r.before.used), verdict)
}

// summary is a table of p50 by size, then the copy ratio of the largest
// size to the smallest against its target (3×).
func (r copyBenchResult) summary() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%10s %12s %12s %10s\n", "size", "PUT p50", "copy p50", "copy/PUT")
	for _, size := range r.sizes {
		put, cp := p50(r.put[size]), p50(r.copy[size])
		fmt.Fprintf(&sb, "%10s %12v %12v %10.4f\n", byteSize(size), put.Round(10*time.Microsecond), cp.Round(10*time.Microsecond), float64(cp)/float64(put))
	}
	small, large := r.sizes[0], r.sizes[len(r.sizes)-1]
	ratio := r.copyRatio()
	verdict := "met"
	if ratio > 3 {
		verdict = "NOT met"
	}
	fmt.Fprintf(&sb, "copy(%s)/copy(%s) = %.2f (target ≤ 3: %s)\n", byteSize(large), byteSize(small), ratio, verdict)
	fmt.Fprintf(&sb, "copy of a %s source put without a checksum (its bytes read once for the copy's CRC64NVME): p50 %v (%s)\n",
		byteSize(large), p50(r.uncheckSum).Round(10*time.Microsecond), spread(r.uncheckSum))
	fmt.Fprintf(&sb, "space: %s\n", r.spaceLine())
	fmt.Fprintf(&sb, "load average at the end: %s\n", oracle.LoadAverage())
	return sb.String()
}

// copyRatio is the p50 copy latency of the largest size over the
// smallest's.
func (r copyBenchResult) copyRatio() float64 {
	return float64(p50(r.copy[r.sizes[len(r.sizes)-1]])) / float64(p50(r.copy[r.sizes[0]]))
}

// BenchmarkHTTPCopyObject measures CopyObject through the real binary on
// a reflink volume: p50 latency of copies of each size (1 MiB, 64 MiB and
// 1 GiB by default) against PUTs of the same size in the same run, the
// ratio of the largest copy to the smallest (copies share blocks: the
// target is 3× at most), and the space 100 copies of the largest object
// take (target: with its source, under 1.1 times the source). Sources
// are put with a CRC64NVME, which a copy keeps, so a copy reads none of
// their bytes; copies of a source put without one are timed apart.
func BenchmarkHTTPCopyObject(b *testing.B) {
	cfg, err := copyBenchConfigFrom(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("load average at the start: %s\n", oracle.LoadAverage())
	for range b.N {
		r := runCopyBench(b, cfg, func(format string, args ...any) { fmt.Printf(format, args...) })
		fmt.Print(r.summary())
		b.ReportMetric(r.copyRatio(), "copy-ratio")
		b.ReportMetric(float64(r.withCopies.used-r.before.used)/float64(r.fanSize), "fanout-used/source")
	}
}

// TestHTTPCopyObjectSmoke runs the copy benchmark's driver small: every
// request succeeds, copies of a few hundred KiB save their blocks, and the
// copies' space comes back when they are deleted.
func TestHTTPCopyObjectSmoke(t *testing.T) {
	cfg := copyBenchConfig{sizes: []int64{256 << 10, 4 << 20}, rounds: 2, copies: 2, puts: 1, fanout: 5, volume: "512M"}
	r := runCopyBench(t, cfg, t.Logf)
	t.Log(r.spaceLine())
	if want := int64(r.fanout) * r.fanSize; r.withCopies.saved != want {
		t.Errorf("%d copies of %s saved %d bytes, want %d", r.fanout, byteSize(r.fanSize), r.withCopies.saved, want)
	}
	if grown := r.withCopies.used - r.withSource.used; grown > r.fanSize/2 {
		t.Errorf("%d copies of %s took %d bytes", r.fanout, byteSize(r.fanSize), grown)
	}
	if r.afterDelete.saved != 0 || r.afterDelete.used > r.withCopies.used {
		t.Errorf("after deleting the copies: %+v (with them %+v)", r.afterDelete, r.withCopies)
	}
	for _, size := range r.sizes {
		if len(r.put[size]) != 2 || len(r.copy[size]) != 4 {
			t.Errorf("%s: %d PUTs and %d copies timed", byteSize(size), len(r.put[size]), len(r.copy[size]))
		}
	}
}

// TestCopyBenchConfig: defaults, and sizes and counts from the
// environment.
func TestCopyBenchConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	c, err := copyBenchConfigFrom(env())
	if err != nil || !slices.Equal(c.sizes, []int64{1 << 20, 64 << 20, 1 << 30}) || c.rounds != 3 || c.copies != 5 || c.puts != 2 || c.fanout != 100 || c.volume != "4G" {
		t.Errorf("defaults: %+v %v", c, err)
	}
	c, err = copyBenchConfigFrom(env("XFS3_COPY_BENCH_SIZES", "64M,1MiB,4096,1MiB", "XFS3_BENCH_ROUNDS", "5", "XFS3_COPY_BENCH_FANOUT", "10", "XFS3_COPY_BENCH_VOLUME", "8G"))
	if err != nil || !slices.Equal(c.sizes, []int64{4096, 1 << 20, 64 << 20}) || c.rounds != 5 || c.fanout != 10 || c.volume != "8G" {
		t.Errorf("from the environment: %+v %v", c, err)
	}
	for _, bad := range [][]string{{"XFS3_COPY_BENCH_SIZES", "1X"}, {"XFS3_COPY_BENCH_SIZES", "0"}, {"XFS3_COPY_BENCH_SIZES", "MiB"},
		{"XFS3_COPY_BENCH_COPIES", "0"}, {"XFS3_COPY_BENCH_VOLUME", "big"}} {
		if _, err := copyBenchConfigFrom(env(bad...)); err == nil {
			t.Errorf("%s=%s accepted", bad[0], bad[1])
		}
	}
}
