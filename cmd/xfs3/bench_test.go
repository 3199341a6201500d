package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"
)

func TestBenchFlags(t *testing.T) {
	env := map[string]string{"XFS3_ACCESS_KEY": "envkey", "XFS3_SECRET_KEY": "envsecret"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		args []string
		want func(o *benchOptions) // edits the defaults into what args mean
	}{
		{nil, func(o *benchOptions) {}},
		{[]string{"--sizes", "1K, 2MiB,3", "--concurrency", "2,64", "--ops", "7", "--big", "0"}, func(o *benchOptions) {
			o.sizes, o.concurrency, o.ops, o.big = []int64{1 << 10, 2 << 20, 3}, []int{2, 64}, 7, 0
		}},
		{[]string{"--endpoint", "https://s3.example:8443", "--access-key", "a", "--secret-key", "s", "--bucket", "my-bucket", "--json"}, func(o *benchOptions) {
			o.endpoint.Scheme, o.endpoint.Host = "https", "s3.example:8443"
			o.accessKey, o.secretKey, o.bucket, o.json = "a", "s", "my-bucket", true
		}},
		{[]string{"--endpoint", "localhost:9999", "--duration", "250ms", "--raw-dir", "/r"}, func(o *benchOptions) {
			o.endpoint.Host, o.duration, o.rawDir = "localhost:9999", 250*time.Millisecond, "/r"
		}},
		{[]string{"--volume", "/data/v.xfs"}, func(o *benchOptions) { o.volume, o.rawDir = "/data/v.xfs", "/data" }},
		{[]string{"--volume", "/data/v.xfs", "--raw-dir", "/fast"}, func(o *benchOptions) { o.volume, o.rawDir = "/data/v.xfs", "/fast" }},
		{[]string{"--server-pid", "42"}, func(o *benchOptions) { o.serverPID = 42 }},
		{[]string{"--server-pid", "42", "--server-profile", "127.0.0.1:6061"}, func(o *benchOptions) {
			o.serverPID, o.serverProfile = 42, &url.URL{Scheme: "http", Host: "127.0.0.1:6061"}
		}},
	} {
		want, err := parseBenchFlags(nil, getenv)
		if err != nil {
			t.Fatalf("defaults: %v", err)
		}
		tc.want(&want)
		got, err := parseBenchFlags(tc.args, getenv)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.args, got, want)
		}
	}

	d, _ := parseBenchFlags(nil, getenv)
	if d.endpoint.String() != "http://127.0.0.1:9000" || !slices.Equal(d.sizes, []int64{4 << 10, 1 << 20}) ||
		!slices.Equal(d.concurrency, []int{1, 8, 32}) || d.duration != 5*time.Second || d.ops != 0 ||
		d.big != 1<<30 || d.accessKey != "envkey" || d.secretKey != "envsecret" || d.bucket != "" || d.json {
		t.Errorf("defaults: %+v", d)
	}
}

func TestBenchFlagErrors(t *testing.T) {
	env := map[string]string{"XFS3_ACCESS_KEY": "k", "XFS3_SECRET_KEY": "s"}
	for _, args := range [][]string{
		{"extra"},
		{"--sizes", "4Q"},
		{"--sizes", "0"},
		{"--concurrency", "0"},
		{"--concurrency", "1,x"},
		{"--ops", "5", "--duration", "1s"},
		{"--ops", "0"},
		{"--duration", "0s"},
		{"--endpoint", "ftp://h"},
		{"--endpoint", "http://h/some/path"},
		{"--big", "0", "--raw-dir", "/tmp"},
		{"--bucket", "No_Such"},
		{"--server-pid", "0"},
		{"--server-pid", "-3"},
		{"--server-profile", "http://127.0.0.1:6061"},
		{"--server-pid", "42", "--server-profile", "http://127.0.0.1:6061/debug/pprof/"},
		{"--server-pid", "42", "--server-profile", "ftp://127.0.0.1:6061"},
		{"--nope"},
	} {
		_, err := parseBenchFlags(args, func(k string) string { return env[k] })
		if ue := (*usageError)(nil); !errors.As(err, &ue) {
			t.Errorf("%q: got %v, want a usage error", args, err)
		}
	}
	_, err := parseBenchFlags(nil, func(string) string { return "" })
	if ue := (*usageError)(nil); !errors.As(err, &ue) {
		t.Errorf("no credentials: got %v, want a usage error", err)
	}
}

// The credentials 'xfs3 serve' generates beside the volume fill in keys
// neither flags nor environment give.
func TestBenchCredentialsFile(t *testing.T) {
	dir := t.TempDir()
	vol := filepath.Join(dir, "v.xfs")
	data := `{"access_key": "filekey", "secret_key": "filesecret"}`
	if err := os.WriteFile(filepath.Join(dir, "credentials.json"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseBenchFlags([]string{"--volume", vol}, func(string) string { return "" })
	if err != nil || o.accessKey != "filekey" || o.secretKey != "filesecret" {
		t.Errorf("got %q %q, %v", o.accessKey, o.secretKey, err)
	}
	o, err = parseBenchFlags([]string{"--volume", vol, "--access-key", "a", "--secret-key", "b"}, func(string) string { return "" })
	if err != nil || o.accessKey != "a" || o.secretKey != "b" {
		t.Errorf("flags must win: got %q %q, %v", o.accessKey, o.secretKey, err)
	}
}

func TestSizeLabel(t *testing.T) {
	for n, want := range map[int64]string{
		4096: "4KiB", 1 << 20: "1MiB", 3 << 30: "3GiB", 1 << 40: "1TiB", 1536: "1536B", 1000: "1000B",
	} {
		if got := sizeLabel(n); got != want {
			t.Errorf("sizeLabel(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestPercentile(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 200; i++ {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 100 * time.Millisecond}, {0.99, 198 * time.Millisecond}, {1, 200 * time.Millisecond}, {0.001, time.Millisecond}} {
		if got := percentile(lat, tc.p); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if percentile(nil, 0.5) != 0 {
		t.Error("percentile of no samples is not 0")
	}
}

func TestPatternReader(t *testing.T) {
	size := int64(len(payload))*2 + 777
	got, err := io.ReadAll(newPatternReader(size))
	if err != nil || int64(len(got)) != size {
		t.Fatalf("read %d bytes, %v; want %d", len(got), err, size)
	}
	want := slices.Concat(payload, payload, payload[:777])
	if !bytes.Equal(got, want) {
		t.Error("bytes are not the payload repeated")
	}
	r := newPatternReader(size)
	if _, err := r.Seek(int64(len(payload))+5, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 10)
	if n, _ := r.Read(b); n != 10 || !bytes.Equal(b, payload[5:15]) {
		t.Errorf("after a seek read %d bytes %x", n, b)
	}
}

// benchRow is one parsed line of the phase table.
type benchRow struct{ op, size, conc, errors string }

// benchColumns is the number of columns of the phase table without CPU
// columns.
const benchColumns = 9

// benchRows returns the rows of the phase table in out, which has no CPU
// columns.
func benchRows(t *testing.T, out string) []benchRow {
	t.Helper()
	rows, _ := benchRowsCPU(t, out, 0)
	return rows
}

// benchRowsCPU returns the rows of the phase table in out and the cells
// of its extra CPU columns, of which it must have extra.
func benchRowsCPU(t *testing.T, out string, extra int) (rows []benchRow, cpu [][]string) {
	t.Helper()
	in := false
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "op" && !in:
			in = true
		case len(f) == 0 && in:
			return rows, cpu // the single-stream table follows
		case in:
			if len(f) != benchColumns+extra {
				t.Fatalf("row %q has %d columns, want %d", line, len(f), benchColumns+extra)
			}
			rows = append(rows, benchRow{f[0], f[1], f[2], f[8]})
			cpu = append(cpu, f[benchColumns:])
		}
	}
	return rows, cpu
}

// benchOps are the phases of a set, in order.
var benchOps = []string{"PUT", "GET", "HEAD", "LIST", "LIST/", "DELETE"}

// wantBenchRows checks that rows are every phase for size and each
// concurrency, in order, without errors.
func wantBenchRows(t *testing.T, rows []benchRow, size string, conc ...string) {
	t.Helper()
	var want []benchRow
	for _, c := range conc {
		for _, op := range benchOps {
			want = append(want, benchRow{op, size, c, "0"})
		}
	}
	if !slices.Equal(rows, want) {
		t.Errorf("rows:\n got %v\nwant %v", rows, want)
	}
}

func TestBenchFake(t *testing.T) {
	f, url := newFakeS3(t, false)
	raw := t.TempDir()
	r := runCLI(t, "bench", "--endpoint", url, "--access-key", "k", "--secret-key", "secret",
		"--ops", "25", "--sizes", "1KiB", "--concurrency", "1,3", "--big", "3MiB", "--raw-dir", raw)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("status %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	if !strings.HasPrefix(r.stdout, "xfs3 bench: "+url+", bucket xfs3-bench-") {
		t.Errorf("header: %.80q", r.stdout)
	}
	wantBenchRows(t, benchRows(t, r.stdout), "1KiB", "1", "3")
	for _, want := range []string{
		"op        size   seconds      MB/s   raw MB/s engine/raw\n",
		"raw: a 3MiB file in " + raw + ", buffered writes and fsync",
		"GET: may have been served from the page cache",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if b := f.bucketNames(); len(b) != 0 {
		t.Errorf("buckets left: %v", b)
	}
	if left, _ := filepath.Glob(filepath.Join(raw, "*")); len(left) != 0 {
		t.Errorf("raw files left: %v", left)
	}
}

func TestBenchFakeJSON(t *testing.T) {
	f, url := newFakeS3(t, false)
	f.buckets["mine"] = map[string][]byte{"keep": []byte("x")}
	// 25 keys in pages of 10: the LIST phases follow continuation tokens.
	defer func(n int) { listPage = n }(listPage)
	listPage = 10
	r := runCLI(t, "bench", "--endpoint", url, "--access-key", "k", "--secret-key", "secret", "--bucket", "mine",
		"--ops", "25", "--sizes", "10", "--concurrency", "4", "--big", "1MiB", "--json")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("status %d, stderr %q", r.code, r.stderr)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	if rep.Bucket != "mine" || rep.PhaseOps != 25 || len(rep.Phases) != len(benchOps) || len(rep.Big) != 2 || rep.Raw != nil {
		t.Errorf("report: %+v", rep)
	}
	for i, p := range rep.Phases {
		if p.Op != benchOps[i] {
			t.Errorf("phase %d is %s, want %s", i, p.Op, benchOps[i])
		}
		if p.phaseCPURow != (phaseCPURow{}) {
			t.Errorf("phase %s: CPU reported without --server-pid: %+v", p.Op, p.phaseCPURow)
		}
		if p.Ops != 25 || p.Errors != 0 || p.Concurrency != 4 || p.Size != 10 || p.P50ms <= 0 || p.Maxms < p.P99ms {
			t.Errorf("phase %+v", p)
		}
	}
	if rep.Big[1].Op != "GET" || rep.Big[1].Bytes != 1<<20 {
		t.Errorf("big GET %+v", rep.Big[1])
	}
	// A bucket that was there stays, with only its own object.
	if names := f.bucketNames(); !slices.Equal(names, []string{"mine"}) || f.objectCount("mine") != 1 {
		t.Errorf("buckets %v, objects in mine %d", names, f.objectCount("mine"))
	}
}

func TestBenchSetupErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	_, denying := newFakeS3(t, true)
	for _, tc := range []struct{ endpoint, want string }{
		{closed, "xfs3: bench: cannot reach " + closed + ": "},
		{denying, "xfs3: bench: " + denying + " refused the credentials of access key \"k\": InvalidAccessKeyId"},
	} {
		r := runCLI(t, "bench", "--endpoint", tc.endpoint, "--access-key", "k", "--secret-key", "secret", "--ops", "1")
		wantCLIFailure(t, r, exitError, tc.want)
		if strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("want one line, got %q", r.stderr)
		}
	}
}

func TestBenchHelp(t *testing.T) {
	for _, args := range [][]string{{"bench", "-h"}, {"bench", "--help"}, {"help", "bench"}} {
		if r := runCLI(t, args...); r.code != 0 || r.stdout != benchUsage {
			t.Errorf("%q: status %d, stdout %.40q", args, r.code, r.stdout)
		}
	}
}

// TestBenchServe runs a short bench against the real server binary.
func TestBenchServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "xfs3")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const access, secret = "benchaccess", "benchsecret123"
	srv := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--volume", filepath.Join(dir, "v.xfs"), "--size", "1G")
	srv.Env = append(os.Environ(), "XFS3_ACCESS_KEY="+access, "XFS3_SECRET_KEY="+secret)
	var serverErr bytes.Buffer
	srv.Stderr = &serverErr
	// A pipe of our own: exec's StdoutPipe may not be read after Wait.
	pr, pw := io.Pipe()
	srv.Stdout = pw
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait(); pw.Close() }()
	t.Cleanup(func() { srv.Process.Kill(); <-exited }) // only waits after a failure
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "xfs3: serving S3 on "); ok {
				addr <- a
			}
		}
		io.Copy(io.Discard, pr)
	}()
	var endpoint string
	select {
	case endpoint = <-addr:
	case err := <-exited:
		exited <- err
		t.Fatalf("the server exited: %v; stderr:\n%s", err, serverErr.String())
	case <-time.After(15 * time.Second):
		srv.Process.Kill()
		exited <- <-exited
		t.Fatalf("the server did not start within 15 s; stderr:\n%s", serverErr.String())
	}

	r := runCLI(t, "bench", "--endpoint", endpoint, "--access-key", access, "--secret-key", secret,
		"--ops", "20", "--sizes", "4KiB", "--concurrency", "1,4", "--big", "0")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("bench: status %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	wantBenchRows(t, benchRows(t, r.stdout), "4KiB", "1", "4")

	client, err := minio.New(strings.TrimPrefix(endpoint, "http://"), &minio.Options{
		Creds: miniocreds.NewStaticV4(access, secret, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	buckets, err := client.ListBuckets(ctx)
	if err != nil || len(buckets) != 0 {
		t.Errorf("buckets after the run: %v, %v", buckets, err)
	}

	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Errorf("server exit: %v; stderr:\n%s", err, serverErr.String())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("the server did not stop within 10 s of SIGTERM")
	}
}
