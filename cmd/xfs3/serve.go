package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/config"
	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/s3api"
	"github.com/xfs3/xfs3/s3api/h1"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/reclaim"
)

const serveUsage = `Usage: xfs3 serve [flags]

Serve the buckets and objects of a volume over the S3 API. With no flags it
uses ./xfs3-data/volume.xfs, creating a sparse 16 GiB volume there if it is
missing, and listens on 127.0.0.1:9000.

Settings come from, each overriding the one before: defaults, a JSON config
file, XFS3_* environment variables, flags.

Flags (environment variable, JSON key):
  --config FILE       JSON config file (XFS3_CONFIG)
  --volume PATH       volume file or block device (XFS3_VOLUME, "volume")
  --size SIZE         size of a volume created on first start, e.g. 16G
                      (XFS3_SIZE, "size")
  --addr HOST:PORT    listen address; port 0 picks a free one
                      (XFS3_ADDR, "addr")
  --certs-dir DIR     serve HTTPS (TLS 1.2 or later) with DIR/public.crt,
                      the PEM certificate chain, and DIR/private.key, its
                      PEM private key; a replaced pair is picked up within
                      a second, without a restart (XFS3_CERTS_DIR,
                      "certs_dir"; default none: plain HTTP)
  --region NAME       the server's S3 region; unset (the default), it is
                      us-east-1 and CreateBucket takes any
                      LocationConstraint, recorded as the bucket's region;
                      set, other regions are refused (XFS3_REGION,
                      "region")
  --log-format FMT    json or console (XFS3_LOG_FORMAT, "log_format")
  --durability WHEN   on-ack (default): a change is durable before it is
                      acknowledged; within-1s: acknowledged first, durable
                      within a second, so a crash may lose up to the last
                      second of acknowledged changes (never the volume's
                      consistency) (XFS3_DURABILITY, "durability")
  --gc-mode MODE      when deleted objects' space is freed: percpu
                      (default; per-CPU background queues, DELETE returns
                      at once), sync (inside the DELETE) or sweep (a
                      background walker per allocation group)
                      (XFS3_GC_MODE, "gc_mode")
  --trim-interval D   how often space freed by deletes is given back to
                      the storage under the volume (holes punched in a
                      volume file, discards on a block device), a Go
                      duration; 0 turns periodic trim off (default 1m)
                      (XFS3_TRIM_INTERVAL, "trim_interval")
  --trim-pass-bytes SIZE  bytes one periodic pass discards at most; the
                      next pass goes on where it stopped (default 4G)
                      (XFS3_TRIM_PASS_BYTES, "trim_pass_bytes")
  --cache-size SIZE   memory for cached metadata blocks (three quarters)
                      and inodes (a quarter); at least 1M (default 128M);
                      Go collects garbage only once the heap reaches this,
                      unless GOGC is set (XFS3_CACHE_SIZE, "cache_size")

Logging:
  --log-level LEVEL   debug, info (default: a line per request), warn or
                      error (XFS3_LOG_LEVEL, "log_level")
  --log-sample N      log one in N successful requests (default 1: all);
                      failed requests are always logged
                      (XFS3_LOG_SAMPLE, "log_sample")
  --log-flush DURATION  longest a line waits in memory before it is
                      written, in batches (default 100ms; 0: each line at
                      once); warnings and errors are written at once
                      (XFS3_LOG_FLUSH, "log_flush")
The first log line names the version, VCS revision and Go version.

Metrics: GET /minio/metrics/v3, the Prometheus text format (series listed
in docs/operations.md).
  --metrics-auth WHO  root (default): a bearer token derived from the
                      credentials ('xfs3 metrics-token' prints it) or a
                      SigV4 signature as admin requests carry; public:
                      no authentication; off: no metrics kept
                      (XFS3_METRICS_AUTH, "metrics_auth")
Info: GET /minio/admin/v3/xfs3/info (signed) or 'xfs3 info'.

Profiling:
  --debug-listen ADDR serve Go's profiles (/debug/pprof/: profile, heap,
                      goroutine, trace, ...) on a second listener at ADDR,
                      for go tool pprof and 'xfs3 bench --server-profile';
                      loopback addresses only (127.0.0.1:PORT, [::1]:PORT,
                      localhost:PORT), because profiles reveal the
                      server's internals and cost CPU while taken; port 0
                      picks a free one (XFS3_DEBUG_LISTEN, "debug_listen";
                      default none)

Credentials: XFS3_ACCESS_KEY and XFS3_SECRET_KEY ("access_key",
"secret_key"). When both are unset the server generates a pair on first
start, prints it, and keeps it in credentials.json (mode 0600) beside the
volume.

Probes: GET /minio/health/live answers 200 while the server runs,
/minio/health/ready 200 while the volume accepts changes and 503 once a
failed write has shut it down (no signature needed). The bucket name
"minio" is reserved for these and the /minio/admin/v3/ endpoints. SIGINT or SIGTERM stops accepting
connections, lets requests in flight finish (for up to 30 s) and closes
the volume cleanly.

Bucket quotas: each bucket's limits are enforced at every write; set them
with 'xfs3 quota' or mc ('mc quota set ALIAS/BUCKET --size 1GiB'). At start
the log has a "bucket quota" line per bucket (usage and limits) and a
"bucket quotas" summary with the grace periods.

Trim: each pass (periodic or on demand: 'xfs3 trim', POST
/minio/admin/v3/xfs3/trim) logs a "trim pass" line with its counters; the
totals are logged as "trim at shutdown".

Lifecycle: each pass over the buckets with lifecycle rules (every
lifecycle_interval, or on demand: POST /minio/admin/v3/xfs3/lifecycle/start)
logs a "lifecycle pass" line with what it expired.
`

// credentialsFile is kept in the data directory: the volume's directory.
const credentialsFile = "credentials.json"

// shutdownGrace bounds how long requests in flight may take to finish
// after a stop signal.
const shutdownGrace = 30 * time.Second

func runServe(args []string, e *env) int {
	for _, a := range args {
		if isHelp(a) {
			fmt.Fprint(e.stdout, serveUsage)
			return exitOK
		}
	}
	cfg, err := config.Load(args, os.LookupEnv, io.Discard)
	if err != nil {
		fmt.Fprintf(e.stderr, "xfs3: serve: %v\n", err)
		fmt.Fprintln(e.stderr, "Run 'xfs3 serve -h' for usage.")
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return finish(serve(ctx, cfg, e), "serve", serveUsage, e)
}

// serve runs the S3 server described by cfg until ctx is cancelled, then
// shuts it down gracefully and closes the volume.
func serve(ctx context.Context, cfg config.Config, e *env) error {
	logs := newLogBuffer(e.stderr, cfg.LogFlush)
	defer logs.Flush() // before finish reports serve's error
	log := newLogger(cfg.LogFormat, cfg.LogLevel, logs)
	version := buildVersion()
	log.Info().Str("version", version.Version).Str("revision", version.Revision).Str("revision_time", version.RevisionTime).
		Bool("modified", version.Modified).Str("go", version.Go).Msg("xfs3 starting")
	// The certificates are checked first: a bad pair stops the start
	// before the volume is created or opened.
	var certs *certReloader
	if cfg.CertsDir != "" {
		var err error
		if certs, err = startTLS(cfg.CertsDir, log); err != nil {
			return err
		}
	}
	created, err := ensureVolume(cfg)
	if err != nil {
		return err
	}
	heapFloor := min(uint64(cfg.CacheSize), maxFloor)
	stopHeapFloor, held := startHeapFloor(heapFloor)
	defer stopHeapFloor()
	if held {
		log.Info().Uint64("heap_floor_bytes", heapFloor).Msg("go's collector waits for the heap to reach the cache size (GOGC overrides)")
	}
	creds, generated, err := loadCredentials(cfg)
	if err != nil {
		return err
	}
	st, err := store.OpenWith(cfg.Volume, store.Options{
		AckBeforeDurable: cfg.Durability == config.DurableWithin1s,
		CacheBytes:       int(cfg.CacheSize),
		GC: gc.Options{Mode: gc.Mode(cfg.GCMode), SlowDrain: func(queue int, took time.Duration, inodes uint64) {
			log.Warn().Int("queue", queue).Dur("took", took).Uint64("inodes", inodes).Msg("inode gc: a backlog took long to drain")
		}},
		Trim: gc.TrimOptions{Interval: cfg.TrimInterval, PassBytes: cfg.TrimPassBytes, PassDone: func(p gc.TrimPass) {
			logTrimPass(log, p)
		}},
		Lifecycle: gc.LifecycleOptions{Interval: cfg.LifecycleInterval, PassDone: func(p gc.LifecyclePass) {
			logLifecyclePass(log, p)
		}},
		LifecycleDay: cfg.LifecycleDay,
		OnSick:       func(x store.SickStructure) { logSick(log, x) },
		Scrub: gc.ScrubOptions{Interval: cfg.ScrubInterval, PassDone: func(p gc.ScrubPass) {
			logScrubPass(log, p)
		}},
	})
	if err != nil {
		return fmt.Errorf("open volume: %w", err) // the store names it
	}
	closeStore := func() error {
		stats := st.GCStats()
		caches := st.Volume().CacheStats()
		err := st.Close()
		logCache(log, "metadata block cache at shutdown", caches.Buffers)
		logCache(log, "inode cache at shutdown", caches.Inodes)
		logTrimCounters(log, st.Trimmer().Status().Counters)
		log.Info().Str("mode", string(stats.Mode)).Uint64("queued", stats.Queued).Uint64("inactivated", stats.Inactivated).
			Uint64("extents_freed", stats.ExtentsFreed).Uint64("errors", stats.Errors).Uint64("backlog_high_water", stats.BacklogHighWater).
			Uint64("throttle_waits", stats.ThrottleWaits).Msg("inode gc at shutdown")
		if err != nil {
			return fmt.Errorf("close volume %s: %w", cfg.Volume, err)
		}
		return nil
	}
	logQuotas(log, st)
	volumePath, _ := filepath.Abs(cfg.Volume) // mc admin info's drive path; a relative one is kept on failure
	if volumePath == "" {
		volumePath = cfg.Volume
	}
	api, err := s3api.New(s3api.Config{
		Store:          st,
		Credentials:    map[string]string{creds.AccessKey: creds.SecretKey},
		Region:         cfg.Region,
		Logger:         log,
		LogSampleEvery: cfg.LogSample,
		Metrics:        s3api.MetricsAccess(cfg.MetricsAuth),
		Version:        version,
		Volume:         volumePath,
		LifecycleDay:   cfg.LifecycleDay,
	})
	if err != nil {
		closeStore()
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		closeStore()
		return fmt.Errorf("listen: %w", err)
	}
	var debug *debugServer
	if cfg.DebugListen != "" {
		if debug, err = startDebug(cfg.DebugListen, log); err != nil {
			ln.Close()
			closeStore()
			return err
		}
		defer debug.close()
	}

	if created {
		fmt.Fprintf(e.stdout, "xfs3: created volume %s (%s, sparse)\n", cfg.Volume, cfg.SizeText)
	} else {
		fmt.Fprintf(e.stdout, "xfs3: opened volume %s\n", cfg.Volume)
	}
	switch {
	case generated:
		fmt.Fprintf(e.stdout, "xfs3: generated credentials, saved in %s (mode 0600):\n", credentialsPath(cfg))
		fmt.Fprintf(e.stdout, "  access key: %s\n  secret key: %s\n", creds.AccessKey, creds.SecretKey)
	case cfg.AccessKey == "":
		fmt.Fprintf(e.stdout, "xfs3: credentials from %s (access key %s)\n", credentialsPath(cfg), creds.AccessKey)
	}
	scheme := "http"
	if certs != nil {
		scheme = "https"
	}
	if debug != nil {
		fmt.Fprintf(e.stdout, "xfs3: profiling on %s (loopback only)\n", debug.url())
	}
	fmt.Fprintf(e.stdout, "xfs3: serving S3 on %s://%s\n", scheme, ln.Addr())
	// The start's lines (version, volume, quotas) are out before the
	// listener is announced, whatever the flush interval.
	logs.Flush()
	if err := e.stdout.Flush(); err != nil {
		ln.Close()
		closeStore()
		return err
	}

	// The S3 handler serves every path itself, /minio/ endpoints included:
	// a front mux would clean paths and redirect keys such as "a//b".
	srv := &h1.Server{
		Handler:           api,
		ReadHeaderTimeout: 30 * time.Second, // bounds a TLS handshake too
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          serverErrorLog(log),
	}
	if certs != nil {
		srv.TLSConfig = certs.tlsConfig() // HTTP/1.1 only, as over plain HTTP
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served: // the listener failed
		closeStore()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info().Msg("stopping: finishing requests in flight")
	grace, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	shutdownErr := srv.Shutdown(grace)
	if shutdownErr != nil {
		// Requests still running past the grace period are cut off so
		// the volume can close.
		srv.Close()
		log.Warn().Err(shutdownErr).Msg("requests still running were cut off")
	}
	if err := closeStore(); err != nil {
		return err
	}
	log.Info().Msg("volume closed cleanly")
	return nil
}

// logTrimPass logs a trim pass that ended: a warning when it failed or
// its device cannot discard.
func logTrimPass(log zerolog.Logger, p gc.TrimPass) {
	ev := log.Info()
	if p.Err != "" || p.Stats.Errors > 0 {
		ev = log.Warn().Str("error", p.Err).Str("first_discard_error", p.Stats.FirstError)
	}
	kind := "on demand"
	if p.Scheduled {
		kind = "scheduled"
	}
	ev.Uint64("pass", p.ID).Str("kind", kind).Bool("canceled", p.Canceled).Bool("unsupported", p.Stats.Unsupported).
		Int64("examined_bytes", p.Stats.ExaminedBytes).Int64("discarded_bytes", p.Stats.DiscardedBytes).
		Int64("discarded_extents", p.Stats.DiscardedExtents).Int64("batches", p.Stats.Batches).
		Int64("errors", p.Stats.Errors).Dur("lock_hold_max", p.Stats.LockHoldMax).Dur("lock_hold_p99", p.Stats.LockHoldP99).
		Int64("backoffs", p.Backoffs).Dur("backoff", p.Backoff).Dur("took", p.Ended.Sub(p.Started)).
		Int64("next", p.Stats.Next).Msg("trim pass")
}

// logLifecyclePass logs a lifecycle pass that ended, with what it did.
func logLifecyclePass(log zerolog.Logger, p gc.LifecyclePass) {
	ev := log.Info()
	if p.Err != "" || p.Counts.Errors > 0 {
		ev = log.Warn().Str("error", p.Err)
	}
	c := p.Counts
	ev.Uint64("pass", p.ID).Bool("on_demand", p.OnDemand).Bool("resumed", p.Resumed).Int64("batches", p.Batches).
		Int64("scanned", c.Scanned).Int64("expired", c.Expired).Int64("versions", c.Versions).Int64("markers", c.Markers).
		Int64("uploads", c.Uploads).Int64("locked", c.Locked).Int64("bytes_freed", c.BytesFreed).Int64("errors", c.Errors).
		Int64("backoffs", p.Backoffs).Dur("backoff", p.Backoff).Dur("took", p.Ended.Sub(p.Started)).Msg("lifecycle pass")
}

// logScrubPass logs a scrub pass's counters; a pass that found damage
// or failed is a warning.
func logScrubPass(log zerolog.Logger, p gc.ScrubPass) {
	ev := log.Info()
	c := p.Counts
	if p.Err != "" || c.Damaged() || c.Errors > 0 {
		ev = log.Warn().Str("error", p.Err)
	}
	ev.Uint64("pass", p.ID).Bool("on_demand", p.OnDemand).Bool("resumed", p.Resumed).Int64("batches", p.Batches).
		Int64("inodes", c.Inodes).Int64("blocks", c.Blocks).Int64("sick", c.SickStructures).
		Int64("objects", c.Objects).Int64("bytes", c.Bytes).Int64("rotten", c.Rotten).Int64("errors", c.Errors).
		Int64("backoffs", p.Backoffs).Dur("backoff", p.Backoff).Dur("took", p.Ended.Sub(p.Started)).Msg("scrub pass")
}

// logSick warns once of each structure newly marked sick: what and
// where, and that changes to it wait for xfs_repair.
func logSick(log zerolog.Logger, x store.SickStructure) {
	ev := log.Warn().Str("kind", x.Kind).Str("place", x.Place).Str("bucket", x.Bucket).Str("prefix", x.Prefix).
		Str("path", x.Path).Str("structure", x.Structure).Str("where", x.Where).Str("reason", x.Reason)
	switch x.Kind {
	case "ag":
		ev = ev.Uint32("ag", uint32(x.AG))
	case "quota":
		ev = ev.Uint64("quota_block", x.QuotaBlock).Uints32("projects", x.Projects[:]).Strs("buckets", x.Buckets)
	default:
		ev = ev.Uint64("ino", uint64(x.Ino))
	}
	ev.Msg("metadata failed verification: " + x.Describe() + " is marked sick; changes to it are refused until the stopped volume is repaired with xfs_repair")
}

// logCache logs a metadata cache's use of its budget and its counters.
func logCache(log zerolog.Logger, msg string, c reclaim.Stats) {
	log.Info().Int64("bytes", c.Bytes).Int64("budget", c.Budget).Int64("entries", c.Entries).
		Uint64("hits", c.Hits).Uint64("misses", c.Misses).Uint64("evictions", c.Evictions).
		Uint64("reclaim_runs", c.Runs).Uint64("reclaim_waits", c.Waits).Msg(msg)
}

// logTrimCounters logs the trim scheduler's totals.
func logTrimCounters(log zerolog.Logger, c gc.TrimCounters) {
	log.Info().Dur("interval", c.Interval).Int64("pass_bytes", c.PassBytes).Uint64("passes", c.Passes).
		Uint64("on_demand", c.OnDemand).Uint64("canceled", c.Canceled).Uint64("failed", c.Failed).
		Int64("examined_bytes", c.ExaminedBytes).Int64("discarded_bytes", c.DiscardedBytes).
		Int64("discarded_extents", c.DiscardedExtents).Int64("batches", c.Batches).Int64("errors", c.Errors).
		Dur("lock_hold_max", c.LockHoldMax).Dur("lock_hold_p99", c.LockHoldP99).Int64("backoffs", c.Backoffs).
		Dur("backoff", c.Backoff).Bool("unsupported", c.Unsupported).Msg("trim at shutdown")
}

// maxQuotaLines bounds the per-bucket quota lines logged at start.
const maxQuotaLines = 1000

// logQuotas logs every bucket's usage and limits (one line a bucket, for
// the first maxQuotaLines, those with limits first) and a summary line
// with the grace periods.
func logQuotas(log zerolog.Logger, st *store.Store) {
	us, err := st.Quotas().List()
	if err != nil {
		log.Warn().Err(err).Msg("bucket quotas unreadable")
		return
	}
	g, err := st.Quotas().Grace()
	if err != nil {
		log.Warn().Err(err).Msg("quota grace periods unreadable")
		return
	}
	sort.SliceStable(us, func(i, j int) bool {
		return us[i].Quota != (store.BucketQuota{}) && us[j].Quota == (store.BucketQuota{})
	})
	var bytes, objects uint64
	limited := 0
	for i, u := range us {
		bytes += u.Bytes
		objects += u.Objects
		if u.Quota != (store.BucketQuota{}) {
			limited++
		}
		if i >= maxQuotaLines {
			continue
		}
		ev := log.Info().Str("bucket", u.Bucket).Uint32("project", u.Project).
			Uint64("bytes", u.Bytes).Uint64("objects", u.Objects).
			Uint64("hard_bytes", u.Quota.HardBytes).Uint64("soft_bytes", u.Quota.SoftBytes).
			Uint64("hard_objects", u.Quota.HardObjects).Uint64("soft_objects", u.Quota.SoftObjects)
		if !u.BytesGraceEnds.IsZero() {
			ev = ev.Time("bytes_grace_ends", u.BytesGraceEnds)
		}
		if !u.ObjectsGraceEnds.IsZero() {
			ev = ev.Time("objects_grace_ends", u.ObjectsGraceEnds)
		}
		ev.Msg("bucket quota")
	}
	log.Info().Int("buckets", len(us)).Int("with_limits", limited).Int("not_listed", max(len(us)-maxQuotaLines, 0)).
		Uint64("bytes", bytes).Uint64("objects", objects).
		Int64("bytes_grace_seconds", int64(g.Bytes/time.Second)).Int64("objects_grace_seconds", int64(g.Objects/time.Second)).
		Msg("bucket quotas")
}

// newLogger writes request and server logs at level (a config.LogLevels
// name, validated) and above into buf, which writes warnings and errors
// at once and batches the rest.
func newLogger(format, level string, buf *logBuffer) zerolog.Logger {
	var w io.Writer = buf
	switch {
	case format == "console" && isTerminal(buf.w):
		w = zerolog.ConsoleWriter{Out: buf, TimeFormat: time.RFC3339}
	case format == "console":
		w = newConsoleWriter(buf, time.RFC3339) // the same lines, without colours, at a seventh of the CPU
	}
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	return zerolog.New(levelFlusher{w, buf}).Level(lvl).With().Timestamp().Logger()
}

// isTerminal reports whether w is a character device, where colours help;
// in files and pipes they are noise.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// ensureVolume creates cfg.Volume, and its directory, when missing and
// reports whether it did.
func ensureVolume(cfg config.Config) (bool, error) {
	if _, err := os.Stat(cfg.Volume); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Volume), 0o700); err != nil {
		return false, fmt.Errorf("create data directory: %w", err)
	}
	// Formatted under a temporary name and linked into place, so that a
	// crash part-way leaves no half-made volume under the real name.
	err := createInPlace(cfg.Volume, 0o600, func(tmp string) error {
		_, err := mkfs.Format(tmp, mkfs.Options{Size: cfg.Size})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("create volume %s: %w", cfg.Volume, err)
	}
	return true, nil
}

// createInPlace makes the file path whole or not at all: fill writes it
// under a temporary name in the same directory, which is then flushed and
// hard-linked to path (failing if path appeared meanwhile, so a concurrent
// start never replaces what another wrote).
func createInPlace(path string, perm os.FileMode, fill func(tmp string) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	err = f.Chmod(perm)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fill(tmp)
	}
	if err == nil {
		err = syncFile(tmp)
	}
	if err == nil {
		err = os.Link(tmp, path)
	}
	if err == nil {
		err = syncFile(filepath.Dir(path)) // the new name itself
	}
	return err
}

// syncFile flushes a file or directory to stable storage.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// credentials is the content of the credentials file.
type credentials struct {
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
}

func credentialsPath(cfg config.Config) string {
	return filepath.Join(filepath.Dir(cfg.Volume), credentialsFile)
}

// loadCredentials returns the configured credentials or, when none are
// configured, those of the credentials file, generating it on first use.
func loadCredentials(cfg config.Config) (c credentials, generated bool, err error) {
	if cfg.AccessKey != "" {
		return credentials{cfg.AccessKey, cfg.SecretKey}, false, nil
	}
	path := credentialsPath(cfg)
	c, err = readCredentials(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return c, false, err
	}
	c = credentials{AccessKey: randomKey(20, upperAlnum), SecretKey: randomKey(40, secretAlphabet)}
	data, _ := json.MarshalIndent(c, "", "  ")
	err = createInPlace(path, 0o600, func(tmp string) error {
		return os.WriteFile(tmp, append(data, '\n'), 0o600)
	})
	if err != nil {
		return c, false, fmt.Errorf("save generated credentials: %w", err)
	}
	return c, true, nil
}

// readCredentials reads a credentials file (an error of kind
// fs.ErrNotExist when there is none). A file others can read is refused,
// as ssh refuses a shared private key.
func readCredentials(path string) (c credentials, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, err
	}
	if err != nil {
		return c, fmt.Errorf("read credentials: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return c, fmt.Errorf("credentials file %s has mode %04o: others can read it; chmod 600 it", path, fi.Mode().Perm())
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("credentials file %s: %w", path, err)
	}
	if len(c.AccessKey) < 3 || len(c.SecretKey) < 8 {
		return c, fmt.Errorf("credentials file %s: the access key needs 3 characters or more and the secret key 8", path)
	}
	return c, nil
}

const (
	upperAlnum     = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	secretAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)

// randomKey returns n characters drawn uniformly from alphabet.
func randomKey(n int, alphabet string) string {
	out := make([]byte, n)
	for i := range out {
		out[i] = alphabet[randomBelow(len(alphabet))]
	}
	return string(out)
}

// randomBelow returns a uniform random int in [0, n), n ≤ 256, rejecting
// bytes that would bias the result.
func randomBelow(n int) int {
	limit := 256 - 256%n
	var b [1]byte
	for {
		rand.Read(b[:])
		if int(b[0]) < limit {
			return int(b[0]) % n
		}
	}
}
