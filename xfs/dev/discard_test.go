package dev

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestMergeAndAlign(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []Range
		gran int64
		want []Range // what DiscardRanges issues
		skip int64   // bytes left out by alignment
	}{
		{name: "empty", gran: 4096},
		{name: "one aligned range", in: []Range{{4096, 8192}}, gran: 4096, want: []Range{{4096, 8192}}},
		{name: "touching ranges merge", in: []Range{{8192, 4096}, {4096, 4096}}, gran: 4096,
			want: []Range{{4096, 8192}}},
		{name: "overlapping ranges merge", in: []Range{{0, 6000}, {4096, 8192}}, gran: 4096,
			want: []Range{{0, 12288}}},
		{name: "apart ranges stay apart", in: []Range{{0, 4096}, {8192, 4096}}, gran: 4096,
			want: []Range{{0, 4096}, {8192, 4096}}},
		{name: "shrunk inwards, never outwards", in: []Range{{1000, 10000}}, gran: 4096,
			want: []Range{{4096, 4096}}, skip: 10000 - 4096},
		{name: "no whole granule", in: []Range{{512, 3584}}, gran: 4096, skip: 3584},
		{name: "merging makes a granule whole", in: []Range{{0, 2048}, {2048, 2048}}, gran: 4096,
			want: []Range{{0, 4096}}},
		{name: "empty ranges dropped", in: []Range{{0, 0}, {4096, 4096}}, gran: 512,
			want: []Range{{4096, 4096}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &recorder{gran: c.gran}
			st, err := DiscardRanges(d, c.in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.got, c.want) {
				t.Fatalf("issued %v, want %v", d.got, c.want)
			}
			var bytes int64
			for _, r := range c.want {
				bytes += r.Len
			}
			if st.Requests != int64(len(c.want)) || st.Bytes != bytes || st.Unaligned != c.skip || st.Errors != 0 {
				t.Fatalf("stats %+v, want %d requests of %d bytes, %d unaligned", st, len(c.want), bytes, c.skip)
			}
		})
	}
}

func TestDiscardErrors(t *testing.T) {
	failing := errors.New("I/O error")
	d := &recorder{gran: 512, fail: map[int64]error{4096: failing}}
	st, err := DiscardRanges(d, []Range{{0, 512}, {4096, 512}, {8192, 512}})
	if !errors.Is(err, failing) {
		t.Fatalf("error %v, want the failed request's", err)
	}
	if st.Requests != 3 || st.Errors != 1 || st.Bytes != 1024 {
		t.Fatalf("stats %+v: every request goes out, the failed one counted", st)
	}

	d = &recorder{gran: 512, fail: map[int64]error{0: ErrDiscardUnsupported}}
	st, err = DiscardRanges(d, []Range{{0, 512}, {4096, 512}})
	if !errors.Is(err, ErrDiscardUnsupported) || st.Requests != 1 || st.Errors != 0 {
		t.Fatalf("unsupported: %+v, %v: stops at once, not counted as a failure", st, err)
	}
	if _, err := DiscardRanges(struct{ Device }{}, []Range{{0, 512}}); !errors.Is(err, ErrDiscardUnsupported) {
		t.Fatalf("a device without Discard: %v", err)
	}
	for errno, unsupported := range map[syscall.Errno]bool{
		syscall.EOPNOTSUPP: true, syscall.ENOTTY: true, syscall.ENOSYS: true, syscall.EIO: false, syscall.EINVAL: false,
	} {
		if got := errors.Is(discardError("vol", errno), ErrDiscardUnsupported); got != unsupported {
			t.Errorf("%v: unsupported %v, want %v", errno, got, unsupported)
		}
	}
}

// recorder is a Discarder that records requests, failing those whose
// offset is in fail.
type recorder struct {
	Device
	gran int64
	got  []Range
	fail map[int64]error
}

func (r *recorder) Discard(off, n int64) error {
	r.got = append(r.got, Range{off, n})
	return r.fail[off]
}

func (r *recorder) DiscardGranularity() int64 { return r.gran }

// TestFileDiscardPunchesHoles: a discarded range of a volume file reads
// as zeros, the host frees its blocks (st_blocks drops) and the bytes
// around it are untouched.
func TestFileDiscardPunchesHoles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vol")
	data := bytes.Repeat([]byte{0xA5}, 1<<20)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	before := allocated(t, path)
	gran := d.DiscardGranularity()
	st, err := DiscardRanges(d, []Range{{64 << 10, 256 << 10}, {320 << 10, 128 << 10}})
	if errors.Is(err, ErrDiscardUnsupported) {
		t.Skipf("the filesystem under the test directory cannot punch holes: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if st.Requests != 1 || st.Bytes != 384<<10 {
		t.Fatalf("stats %+v: two touching ranges are one request of 384 KiB", st)
	}
	if freed := before - allocated(t, path); freed < 384<<10-2*gran {
		t.Fatalf("host freed %d bytes, want about %d", freed, 384<<10)
	}
	got := make([]byte, len(data))
	if _, err := d.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	for i, b := range got {
		inside := i >= 64<<10 && i < 448<<10
		if (inside && b != 0) || (!inside && b != 0xA5) {
			t.Fatalf("byte %d is %#x after the discard", i, b)
		}
	}
	if d.Size() != int64(len(data)) {
		t.Fatalf("size changed to %d", d.Size())
	}
	ro, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.Discard(0, 4096); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("discard on a read-only device: %v", err)
	}
	if err := d.Discard(1<<20-4096, 8192); err == nil {
		t.Fatal("discard past the end accepted")
	}
}

// allocated is what du counts for path, in bytes.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// TestFaultDiscard: a discard on the fault device reads as zeros at once,
// is one write (a cut can hit it) and, like any unflushed write, survives
// a crash only if the disk kept it.
func TestFaultDiscard(t *testing.T) {
	base := bytes.Repeat([]byte{7}, 4*4096)
	f := NewFault(bytes.NewReader(base), int64(len(base)))
	if _, err := f.WriteAt(bytes.Repeat([]byte{1}, 4096), 4096); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	// Page 1 whole, half of page 2.
	if err := f.Discard(4096, 4096+2048); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(base))
	f.ReadAt(got, 0)
	for i, want := range map[int]byte{4095: 7, 4096: 0, 8191: 0, 8192: 0, 10239: 0, 10240: 7} {
		if got[i] != want {
			t.Fatalf("byte %d reads %d, want %d", i, got[i], want)
		}
	}
	// A write into a discarded page does not leak into other pages.
	if _, err := f.WriteAt([]byte{9}, 5000); err != nil {
		t.Fatal(err)
	}
	f.ReadAt(got, 0)
	if got[5000] != 9 || got[5001] != 0 || got[8192] != 0 {
		t.Fatal("write into a discarded page")
	}
	if w, _ := f.Stats(); w != 3 {
		t.Fatalf("%d writes, want 3 (the discard is one)", w)
	}
	if r := f.Discarded(); !slices.Equal(r, []Range{{4096, 6144}}) {
		t.Fatalf("recorded %v", r)
	}
	for _, c := range []struct {
		crash Crash
		want  map[int64]byte
	}{
		{Crash{}, map[int64]byte{4096: 1, 8192: 7}},
		{Crash{Keep: 1}, map[int64]byte{4096: 0, 8191: 0, 10239: 0, 10240: 7}},
		{Crash{Keep: 1, Tear: true}, map[int64]byte{4096: 0, 9727: 0, 9728: 7}},
	} {
		checkCrashImage(t, f, base, c.crash, c.want)
	}
	f.CutAt(4)
	if err := f.Discard(0, 4096); !errors.Is(err, ErrPowerCut) {
		t.Fatalf("discard at the cut: %v", err)
	}
	g := NewFault(bytes.NewReader(base), int64(len(base)))
	g.RefuseDiscard()
	if _, err := DiscardRanges(g, []Range{{0, 4096}}); !errors.Is(err, ErrDiscardUnsupported) {
		t.Fatalf("refusing device: %v", err)
	}
}

// TestDiscardSplitsRequests: with MaxRequest set, random ranges go out as
// requests of at most the bound (rounded to granules), in order, that
// cover exactly what the unbounded call covers, each reported to After.
func TestDiscardSplitsRequests(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	for round := range 200 {
		gran := int64(512) << rng.Intn(5)
		limit := rng.Int63n(64 << 10)
		var ranges []Range
		for range rng.Intn(20) {
			ranges = append(ranges, Range{Off: rng.Int63n(1 << 20), Len: rng.Int63n(128 << 10)})
		}
		whole := &recorder{gran: gran}
		wst, err := DiscardRanges(whole, ranges)
		if err != nil {
			t.Fatal(err)
		}
		split := &recorder{gran: gran}
		var after []Range
		st, err := DiscardRangesWith(split, ranges, DiscardOptions{MaxRequest: limit,
			After: func(r Range, took time.Duration, err error) { after = append(after, r) }})
		if err != nil {
			t.Fatal(err)
		}
		bound := max(limit/gran*gran, gran)
		if limit == 0 {
			bound = 1 << 62
		}
		for i, r := range split.got {
			if r.Len > bound || r.Len <= 0 || r.Off%gran != 0 || r.Len%gran != 0 {
				t.Fatalf("round %d: request %v with limit %d, granule %d", round, r, limit, gran)
			}
			if i > 0 && r.Off < split.got[i-1].End() {
				t.Fatalf("round %d: request %v before the end of %v", round, r, split.got[i-1])
			}
		}
		if !slices.Equal(MergeRanges(split.got), MergeRanges(whole.got)) || !slices.Equal(after, split.got) {
			t.Fatalf("round %d: split %v, whole %v, reported %v", round, split.got, whole.got, after)
		}
		if st.Bytes != wst.Bytes || st.Unaligned != wst.Unaligned || st.Requests != int64(len(split.got)) {
			t.Fatalf("round %d: stats %+v, unbounded %+v", round, st, wst)
		}
	}
}

func TestSplitRange(t *testing.T) {
	for _, c := range []struct {
		r           Range
		limit, gran int64
		want        []Range
	}{
		{Range{0, 0}, 4096, 512, nil},
		{Range{4096, 8192}, 0, 512, []Range{{4096, 8192}}},
		{Range{4096, 8192}, 8192, 512, []Range{{4096, 8192}}},
		{Range{0, 10240}, 4096, 512, []Range{{0, 4096}, {4096, 4096}, {8192, 2048}}},
		{Range{0, 8192}, 5000, 4096, []Range{{0, 4096}, {4096, 4096}}}, // rounded down to a granule
		{Range{0, 8192}, 100, 4096, []Range{{0, 4096}, {4096, 4096}}},  // at least a granule
	} {
		if got := SplitRange(c.r, c.limit, c.gran); !slices.Equal(got, c.want) {
			t.Errorf("SplitRange(%v, %d, %d) = %v, want %v", c.r, c.limit, c.gran, got, c.want)
		}
	}
}
