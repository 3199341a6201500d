package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/xfs3/xfs3/config"
)

const benchUsage = `Usage: xfs3 bench [flags]

Measure a running S3 endpoint (xfs3 serve, or any S3 server) with the
minio-go client. For each object size and each concurrency these phases run
one after the other, every phase with that many parallel clients:

  PUT     distinct keys RUN/SIZE-cN/SEQ, one single-part PUT each
  GET     those keys round robin, each body read to its end and its length
          checked
  HEAD    those keys round robin, one HeadObject each, its size checked
  LIST    ListObjectsV2 over those keys in pages of 1000, first page to
          last and again; an operation is a page, and each full pass
          checks the key count
  LIST/   the same with delimiter "/"
  DELETE  every key the PUT phase wrote, one DeleteObject each, however
          long that takes

Then --big puts one large object in a single PUT and gets it back, both in
one stream, and the raw directory (--raw-dir, or the directory of --volume)
gets a plain file of the same size: written with buffered writes and fsync,
dropped from the page cache, read back. The engine/raw column divides the
S3 speed by the raw one: the raw sequential speed of the volume's disk,
measured in the same run.

The bucket is a fresh xfs3-bench-RANDOM, removed at the end with everything
in it, also after errors or Ctrl-C (a second Ctrl-C quits without cleaning
up). A --bucket that already exists is kept; only the keys the run wrote
are deleted.

Flags:
  --endpoint URL        S3 endpoint (default http://127.0.0.1:9000)
  --access-key KEY      access key (default $XFS3_ACCESS_KEY)
  --secret-key KEY      secret key (default $XFS3_SECRET_KEY)
  --bucket NAME         bucket to use (default a fresh one)
  --sizes LIST          object sizes, comma-separated (default 4KiB,1MiB);
                        K, M, G suffixes are powers of 1024
  --concurrency LIST    parallel clients, comma-separated (default 1,8,32)
  --duration D          how long each phase runs (default 5s); operations
                        under way at the end are finished and counted
  --ops N               operations per phase instead of --duration
  --big SIZE            size of the single-stream object (default 1GiB;
                        0 skips it and the raw measurement)
  --raw-dir DIR         directory for the raw file (default: none, no raw
                        measurement)
  --volume PATH         the server's volume file: its directory is the raw
                        directory unless --raw-dir says otherwise, its
                        credentials.json (written by 'xfs3 serve') supplies
                        keys not given, and its page cache is dropped
                        before the big GET so that both GETs read the disk
  --server-pid PID      the server's process, on this machine (Linux
                        only): its CPU time is read before and after
                        every phase, and so is this process's own; the
                        table gets srv-µs/op and gen-µs/op
  --server-profile URL  the server's profiling listener ('xfs3 serve
                        --debug-listen'), e.g. http://127.0.0.1:6061: CPU
                        profiles taken during each phase split srv-µs/op
                        into edge-µs/op, store-µs/op and rt-µs/op; needs
                        --server-pid
  --json                print one JSON document instead of the tables

ops/s and MB/s (10^6 bytes) count successful operations over a phase's wall
time; p50, p99 and max are latencies of single operations (a GET ends
when its last byte is read). Over http, PUT bodies are signed in 64 KiB
chunks (SHA-256 on both sides): minio-go's default, which mc uses too.

srv-µs/op is the server's CPU time over a phase (user and system, every
thread, from /proc/PID/stat in clock ticks of 10 ms) over its successful
operations; gen-µs/op is the same for this process, the load generator,
counted apart. Whatever the server runs during a phase counts, background
work included (freeing the space of the last DELETEs, trim). With
--server-profile the profiles divide srv-µs/op by who asked for the
work each sample caught: the innermost function of xfs3 on its stack
decides, the store's (store-µs/op) in package store (but store/checksum),
gc, xfs or below (the engine and its background workers), the edge's
(edge-µs/op: HTTP, signatures, checksums, XML, s3api, the request log)
otherwise, so an upload's body read is the edge's though the store pulls
it. A sample with no function of xfs3 is the runtime's (rt-µs/op) when
every frame is the Go runtime's (the collector's workers, the sweeper,
the scheduler: they serve both sides), the edge's otherwise. A phase of
known length gets one profile of its whole seconds less 250 ms; DELETE,
and every phase under --ops, back-to-back profiles of a second, the one
under way at the end dropped. A phase too short for a
profile shows "-". The split is sampled; the time it divides is measured
whole. The columns say nothing of the big object.

A failed operation is counted under errors and does not stop the run; the
first error of each phase is printed on stderr and the exit status is 1.
So is a phase whose CPU time could not be read or profiled.
A failed setup (endpoint unreachable, credentials refused) ends the run
with one line on stderr and status 1.
`

// benchOptions is the parsed command line.
type benchOptions struct {
	endpoint     *url.URL
	accessKey    string
	secretKey    string
	bucket       string // "" for a fresh one
	sizes        []int64
	concurrency  []int
	duration     time.Duration // per phase, when ops is 0
	ops          int64         // per phase, 0 for duration
	big          int64
	rawDir       string
	volume       string
	json         bool
	setupTimeout time.Duration
	// serverPID is the server's process, whose CPU time is read around
	// every phase (0: none); serverProfile is its profiling listener.
	serverPID     int
	serverProfile *url.URL
}

func runBench(args []string, e *env) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A second Ctrl-C kills at once, without the cleanup the first allows.
	go func() { <-ctx.Done(); stop() }()
	return finish(benchCommand(ctx, args, e), "bench", benchUsage, e)
}

func benchCommand(ctx context.Context, args []string, e *env) error {
	o, err := parseBenchFlags(args, os.Getenv)
	if err != nil {
		return err
	}
	b, err := newBencher(o)
	if err != nil {
		return err
	}
	if err := b.setup(ctx); err != nil {
		return err
	}
	out := newBenchOutput(e, o)
	out.header(b.bucket)
	failed := b.runAll(ctx, out)
	cleanupErr := b.cleanup(ctx)
	out.footer()
	switch {
	case cleanupErr != nil:
		return cleanupErr
	case ctx.Err() != nil:
		return errors.New("interrupted")
	case failed > 0:
		return fmt.Errorf("%d operations failed", failed)
	case b.cpuFailed > 0:
		return fmt.Errorf("%d phases' CPU not measured", b.cpuFailed)
	}
	return nil
}

// parseBenchFlags turns args into options; getenv supplies the default keys.
func parseBenchFlags(args []string, getenv func(string) string) (benchOptions, error) {
	o := benchOptions{setupTimeout: 15 * time.Second}
	flags := newFlags("bench")
	endpoint := flags.String("endpoint", "http://127.0.0.1:9000", "")
	flags.StringVar(&o.accessKey, "access-key", "", "")
	flags.StringVar(&o.secretKey, "secret-key", "", "")
	flags.StringVar(&o.bucket, "bucket", "", "")
	sizes := flags.String("sizes", "4KiB,1MiB", "")
	conc := flags.String("concurrency", "1,8,32", "")
	flags.DurationVar(&o.duration, "duration", 5*time.Second, "")
	flags.Int64Var(&o.ops, "ops", 0, "")
	big := sizeFlag(1 << 30)
	flags.Var(&big, "big", "")
	flags.StringVar(&o.rawDir, "raw-dir", "", "")
	flags.StringVar(&o.volume, "volume", "", "")
	flags.BoolVar(&o.json, "json", false, "")
	flags.IntVar(&o.serverPID, "server-pid", 0, "")
	serverProfile := flags.String("server-profile", "", "")
	pos, err := parseFlags(flags, args)
	if err != nil {
		return o, err
	}
	if len(pos) != 0 {
		return o, usagef("unexpected argument %q", pos[0])
	}
	set := map[string]bool{}
	flags.Visit(func(f *flag.Flag) { set[f.Name] = true })

	if o.endpoint, err = parseEndpoint(*endpoint); err != nil {
		return o, usagef("--endpoint: %v", err)
	}
	if o.sizes, err = parseSizes(*sizes); err != nil {
		return o, usagef("--sizes: %v", err)
	}
	if o.concurrency, err = parseConcurrency(*conc); err != nil {
		return o, usagef("--concurrency: %v", err)
	}
	switch {
	case set["ops"] && set["duration"]:
		return o, usagef("give --ops or --duration, not both")
	case o.ops < 0 || set["ops"] && o.ops == 0:
		return o, usagef("--ops must be positive")
	case o.ops == 0 && o.duration <= 0:
		return o, usagef("--duration must be positive")
	}
	o.big = int64(big)
	if o.big < 0 {
		return o, usagef("--big must not be negative")
	}
	if o.rawDir == "" && o.volume != "" {
		o.rawDir = filepath.Dir(o.volume)
	}
	if set["raw-dir"] && o.big == 0 {
		return o, usagef("--raw-dir measures a file of the --big size; --big is 0")
	}
	if set["server-pid"] && o.serverPID <= 0 {
		return o, usagef("--server-pid must be a process id above 0")
	}
	if *serverProfile != "" {
		if o.serverPID == 0 {
			return o, usagef("--server-profile splits the CPU time --server-pid measures: give both")
		}
		if o.serverProfile, err = parseEndpoint(*serverProfile); err != nil {
			return o, usagef("--server-profile: %v (want the listener's base, e.g. http://127.0.0.1:6061)", err)
		}
	}
	if o.bucket != "" && !validBucketName(o.bucket) {
		return o, usagef("--bucket %q is not a valid bucket name", o.bucket)
	}

	if o.accessKey == "" {
		o.accessKey = getenv("XFS3_ACCESS_KEY")
	}
	if o.secretKey == "" {
		o.secretKey = getenv("XFS3_SECRET_KEY")
	}
	if (o.accessKey == "" || o.secretKey == "") && o.volume != "" {
		if a, sk, err := readCredentialsFile(o.volume); err == nil {
			o.accessKey, o.secretKey = a, sk
		}
	}
	if o.accessKey == "" || o.secretKey == "" {
		return o, usagef("no credentials: give --access-key and --secret-key, or set XFS3_ACCESS_KEY and XFS3_SECRET_KEY")
	}
	return o, nil
}

// parseEndpoint accepts http(s)://host[:port] and a bare host:port (http).
func parseEndpoint(s string) (*url.URL, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("scheme %q: want http or https", u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", s)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return nil, fmt.Errorf("%q: want no path or query, the client speaks to the root", s)
	}
	return u, nil
}

func parseSizes(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		n, err := config.ParseSize(f)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return nil, fmt.Errorf("size %q: must be positive", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// maxConcurrency bounds the clients one process runs sensibly.
const maxConcurrency = 4096

func parseConcurrency(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxConcurrency {
			return nil, fmt.Errorf("%q: want a number from 1 to %d", f, maxConcurrency)
		}
		out = append(out, n)
	}
	return out, nil
}

// validBucketName is S3's rule, checked here so that a typo is a usage
// error rather than a setup failure.
func validBucketName(s string) bool {
	if len(s) < 3 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
			(c == '-' || c == '.') && i > 0 && i < len(s)-1
		if !ok {
			return false
		}
	}
	return true
}

// readCredentialsFile reads the keys 'xfs3 serve' keeps beside volume,
// without ever creating them.
func readCredentialsFile(volume string) (access, secret string, err error) {
	var c struct {
		AccessKey string `json:"access_key"`
		SecretKey string `json:"secret_key"`
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(volume), "credentials.json"))
	if err != nil {
		return "", "", err
	}
	err = json.Unmarshal(data, &c)
	return c.AccessKey, c.SecretKey, err
}

// bencher holds one run's client and the state cleanup needs.
type bencher struct {
	o       benchOptions
	client  *minio.Client
	core    minio.Core
	bucket  string
	run     string // key prefix of this run, ending in "/"
	created bool   // the bucket is ours to remove
	// cpuFailed counts the phases' CPU readings and profiles that
	// failed (each reported on stderr).
	cpuFailed int64
}

func newBencher(o benchOptions) (*bencher, error) {
	secure := o.endpoint.Scheme == "https"
	tr, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, err
	}
	// minio-go keeps 16 idle connections per host; more clients than that
	// would reconnect all the time and measure TCP handshakes.
	most := slices.Max(o.concurrency)
	tr.MaxIdleConns = most + 16
	tr.MaxIdleConnsPerHost = most + 16
	client, err := minio.New(o.endpoint.Host, &minio.Options{
		Creds:     miniocreds.NewStaticV4(o.accessKey, o.secretKey, ""),
		Secure:    secure,
		Transport: tr,
		// A fixed region spares a GetBucketLocation before the first
		// request to each bucket.
		Region:       "us-east-1",
		BucketLookup: minio.BucketLookupPath,
		// Retries would hide failures and stretch latencies.
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", o.endpoint, err)
	}
	id := strings.ToLower(rand.Text()[:10])
	b := &bencher{o: o, client: client, core: minio.Core{Client: client}, bucket: o.bucket, run: "bench-" + id + "/"}
	if b.bucket == "" {
		b.bucket = "xfs3-bench-" + id
	}
	return b, nil
}

// setup makes sure the bucket exists; its errors say in one line whether
// the endpoint could not be reached or refused the credentials.
func (b *bencher) setup(ctx context.Context) error {
	// Found out now rather than after minutes of measuring.
	if b.o.big > 0 && b.o.rawDir != "" {
		if fi, err := os.Stat(b.o.rawDir); err != nil {
			return fmt.Errorf("raw directory: %w", err)
		} else if !fi.IsDir() {
			return fmt.Errorf("raw directory %s is not a directory", b.o.rawDir)
		}
	}
	if err := b.setupCPU(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, b.o.setupTimeout)
	defer cancel()
	if b.o.bucket != "" {
		ok, err := b.client.BucketExists(ctx, b.bucket)
		if err != nil {
			return b.setupError(err)
		}
		if ok {
			return nil
		}
	}
	if err := b.client.MakeBucket(ctx, b.bucket, minio.MakeBucketOptions{}); err != nil {
		return b.setupError(err)
	}
	b.created = true
	return nil
}

func (b *bencher) setupError(err error) error {
	ep := b.o.endpoint.String()
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "":
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "AuthorizationHeaderMalformed", "InvalidSecurity":
		return fmt.Errorf("%s refused the credentials of access key %q: %s", ep, b.o.accessKey, resp.Code)
	default:
		return fmt.Errorf("%s: bucket %s: %s: %s", ep, b.bucket, resp.Code, resp.Message)
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return fmt.Errorf("cannot reach %s: %v", ep, op)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("cannot reach %s: no answer within %v", ep, b.o.setupTimeout)
	}
	return fmt.Errorf("%s: %v", ep, err)
}

// cleanup deletes whatever keys of the run are left (after an error or an
// interruption) and the bucket if the run created it. It runs after
// Ctrl-C too, so it uses its own context.
func (b *bencher) cleanup(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	var left []string
	for obj := range b.client.ListObjects(ctx, b.bucket, minio.ListObjectsOptions{Prefix: b.run, Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("cleanup: list %s/%s: %w", b.bucket, b.run, obj.Err)
		}
		left = append(left, obj.Key)
	}
	if len(left) > 0 {
		st := runPhase(ctx, slices.Max(b.o.concurrency), phaseLimit{ops: int64(len(left))}, b.deleteOp(left))
		if st.errors > 0 {
			return fmt.Errorf("cleanup: %d keys of %s/%s not deleted, first: %v", st.errors, b.bucket, b.run, st.firstErr)
		}
	}
	if !b.created {
		return nil
	}
	if err := b.client.RemoveBucket(ctx, b.bucket); err != nil {
		return fmt.Errorf("cleanup: remove bucket %s: %w", b.bucket, err)
	}
	return nil
}
