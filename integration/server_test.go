package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// binary is the xfs3 command built once for the package's tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "xfs3-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "xfs3")
	build := exec.Command("go", "build", "-o", binary, module+"/cmd/xfs3")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build xfs3:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Credentials every test server uses.
const (
	accessKey = "XFS3TESTACCESSKEY"
	secretKey = "xfs3-test-secret-key-0123456789"
	region    = "us-east-1"
)

// server is a running `xfs3 serve` process on its own volume.
type server struct {
	Host   string // 127.0.0.1:port
	URL    string // http://Host
	Volume string
	cmd    *exec.Cmd
	logs   *lockedBuffer
	done   chan error
}

// startServer starts the real binary on a fresh volume of size bytes and a
// random loopback port. The test's cleanup kills it if it still runs.
func startServer(t *testing.T, size string, flags ...string) *server {
	t.Helper()
	return startServerOn(t, filepath.Join(t.TempDir(), "data", "volume.xfs"), size, flags...)
}

// startServerOn starts the binary on the volume at path, created with size
// bytes when missing, with the serve flags given.
func startServerOn(t *testing.T, path, size string, flags ...string) *server {
	t.Helper()
	return startBinaryOn(t, binary, path, size, flags...)
}

// startBinaryOn is startServerOn with the xfs3 binary at bin, which may be
// a build of another commit: it is given only flags every version knows
// (plus the ones in flags) and is expected to print the same "serving"
// line.
func startBinaryOn(t testing.TB, bin, path, size string, flags ...string) *server {
	t.Helper()
	return startPinnedBinaryOn(t, nil, bin, path, size, flags...)
}

// startPinnedBinaryOn is startBinaryOn with the server restricted to cpus
// from its start (through taskset, so that the Go runtime sizes itself
// to them), or free to use any CPU when cpus is empty.
func startPinnedBinaryOn(t testing.TB, cpus []int, bin, path, size string, flags ...string) *server {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--volume", path, "--size", size, "--log-format", "json"}, flags...)
	cmd := exec.Command(bin, args...)
	if len(cpus) > 0 {
		cmd = exec.Command("taskset", append([]string{"--cpu-list", cpuListString(cpus), bin}, args...)...)
	}
	cmd.Env = binaryEnv()
	return startCommand(t, path, cmd)
}

// startCommand starts cmd, an xfs3 serve on the volume at path, and waits
// for the URL it announces (s.URL; s.Host without the scheme). The test's
// cleanup kills the server if it still runs.
func startCommand(t testing.TB, path string, cmd *exec.Cmd) *server {
	t.Helper()
	s := &server{Volume: path, logs: &lockedBuffer{}, done: make(chan error, 1), cmd: cmd}
	s.cmd.Stderr = s.logs
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("server log (last 8 KiB):\n%s", s.logs.tail(8<<10))
		}
		if dir := os.Getenv("XFS3_SERVER_LOGS"); dir != "" {
			// The whole log, for debugging a failure.
			name := strings.NewReplacer("/", "_").Replace(t.Name()) + ".log"
			os.WriteFile(filepath.Join(dir, name), []byte(s.logs.String()), 0o644)
		}
	})
	announced := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "xfs3: serving S3 on "); ok {
				announced <- u
			}
		}
		io.Copy(io.Discard, stdout)
		s.done <- s.cmd.Wait()
	}()
	select {
	case u := <-announced:
		s.URL = u
		_, s.Host, _ = strings.Cut(u, "://")
	case err := <-s.done:
		s.done <- err
		t.Fatalf("xfs3 serve exited before listening: %v\n%s", err, s.logs.tail(4<<10))
	case <-time.After(60 * time.Second):
		t.Fatalf("xfs3 serve did not start listening in 60 s\n%s", s.logs.tail(4<<10))
	}
	return s
}

// stop sends SIGTERM and expects a clean exit.
func (s *server) stop(t testing.TB) {
	t.Helper()
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("xfs3 serve exited with %v after SIGTERM\n%s", err, s.logs.tail(4<<10))
		}
	case <-time.After(60 * time.Second):
		t.Fatal("xfs3 serve did not stop within 60 s of SIGTERM")
	}
	logs := s.logs.String()
	if !strings.Contains(logs, "volume closed cleanly") {
		t.Errorf("no clean close in the server log:\n%s", s.logs.tail(4<<10))
	}
	// No test here provokes a server fault: an InternalError is a bug even
	// when the client retried past it.
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"error_code":"InternalError"`) {
			t.Errorf("the server answered InternalError: %s", line)
		}
	}
}

// client returns a minio-go client for the server.
func (s *server) client(t *testing.T) *minio.Client {
	t.Helper()
	c, err := minio.New(s.Host, &minio.Options{
		Creds:  credentials.NewStaticV4(accessKey, secretKey, ""),
		Region: region,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// apiObject is an object as the S3 API describes it.
type apiObject struct {
	sha256 string
	size   int64
	attrs  map[string]string // xattrs the store must have written
}

// apiView lists every bucket and object through the S3 API and reads every
// object whole: what our API says is on the volume.
func (s *server) apiView(t *testing.T) map[string]apiObject {
	t.Helper()
	c := s.client(t)
	ctx := context.Background()
	buckets, err := c.ListBuckets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	view := map[string]apiObject{}
	for _, b := range buckets {
		for o := range c.ListObjects(ctx, b.Name, minio.ListObjectsOptions{Recursive: true}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			obj, err := c.GetObject(ctx, b.Name, o.Key, minio.GetObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			n, err := io.Copy(h, obj)
			if err != nil {
				t.Fatalf("read %s/%s: %v", b.Name, o.Key, err)
			}
			st, err := obj.Stat()
			if err != nil {
				t.Fatal(err)
			}
			obj.Close()
			attrs := map[string]string{"user.xfs3.etag": strings.Trim(st.ETag, `"`)}
			if st.ContentType != "" && st.ContentType != "binary/octet-stream" && st.ContentType != "application/octet-stream" {
				attrs["user.xfs3.content-type"] = st.ContentType
			}
			for k, v := range st.UserMetadata {
				attrs["user.meta."+strings.ToLower(k)] = v
			}
			view[b.Name+"/"+o.Key] = apiObject{sha256: hex.EncodeToString(h.Sum(nil)), size: n, attrs: attrs}
		}
		view[b.Name+"/"] = apiObject{size: -1} // the bucket itself
	}
	return view
}

// checkKernelView stops the server, checks the volume with xfs_repair -n,
// mounts it read-only and requires the kernel to show exactly the objects
// want (from apiView): same bytes, the store's xattrs, nothing more.
func (s *server) checkKernelView(t *testing.T, want map[string]apiObject) {
	t.Helper()
	s.stop(t)
	oracle.Repair(t, s.Volume)
	mnt := oracle.Mount(t, s.Volume, true)
	snap, err := oracle.SnapshotDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range snap {
		if e.Path == "." || e.Path == ".xfs3" || strings.HasPrefix(e.Path, ".xfs3/") {
			continue
		}
		switch e.Type {
		case oracle.TypeDir:
			if !strings.Contains(e.Path, "/") {
				if _, ok := want[e.Path+"/"]; !ok {
					t.Errorf("kernel shows bucket %s the API does not list", e.Path)
				}
				got[e.Path+"/"] = true
			}
			continue
		case oracle.TypeFile:
		default:
			t.Errorf("kernel shows %s, a %s", e.Path, e.Type)
			continue
		}
		got[e.Path] = true
		w, ok := want[e.Path]
		if !ok {
			t.Errorf("kernel shows %s (%d bytes), which the API does not list", e.Path, e.Size)
			continue
		}
		if e.Size != w.size || e.SHA256 != w.sha256 {
			t.Errorf("%s: kernel sees %d bytes sha256 %s, API gave %d bytes sha256 %s", e.Path, e.Size, e.SHA256, w.size, w.sha256)
		}
		for k, v := range w.attrs {
			if e.Xattrs[k] != v {
				t.Errorf("%s: xattr %s = %q on the kernel mount, want %q", e.Path, k, e.Xattrs[k], v)
			}
		}
	}
	var missing []string
	for k := range want {
		if !got[k] && !strings.HasSuffix(k, "/") {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the kernel does not show %d objects the API lists, e.g. %q", len(missing), missing[:min(5, len(missing))])
	}
	t.Logf("kernel mount matches the API: %d entries", len(want))
}

// binaryEnv is the environment of an xfs3 binary a test runs: this
// process's without the XFS3_* settings a developer's shell may hold
// (XFS3_GC_MODE or XFS3_DURABILITY would change what is tested), plus the
// test servers' credentials.
func binaryEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XFS3_") {
			env = append(env, kv)
		}
	}
	return append(env, "XFS3_ACCESS_KEY="+accessKey, "XFS3_SECRET_KEY="+secretKey)
}

// runCLI runs the xfs3 binary with the test servers' credentials in its
// environment and returns its standard output; it fails the test when the
// command fails.
func runCLI(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = binaryEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xfs3 %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

// lockedBuffer collects a process's output safely across goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// tail returns at most the last n bytes written.
func (b *lockedBuffer) tail(n int) string {
	s := b.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}
