// Package config holds the typed configuration of `xfs3 serve`. Values
// come from four layers, each overriding the one before:
//
//	defaults  <  config file (JSON, --config)  <  XFS3_* environment  <  flags
//
// Load reads all four and Validate says clearly what is wrong. The package
// imports nothing else of ours. docs/configuration.md describes every
// setting for operators.
package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is everything `xfs3 serve` needs.
type Config struct {
	// Volume is the volume file or block device; created as a sparse
	// file of Size bytes when missing.
	Volume string `json:"volume"`
	// Size is the size of a volume created on first start.
	Size int64 `json:"-"`
	// SizeText is Size as written in a file or the environment ("16G").
	SizeText string `json:"size"`
	// Addr is the listen address, HOST:PORT.
	Addr string `json:"addr"`
	// Region is the server's S3 region. Empty (the default): us-east-1,
	// and CreateBucket takes any LocationConstraint and records it as the
	// bucket's region. Set: buckets are made in this region only.
	Region string `json:"region"`
	// CertsDir, when set, is a directory laid out as MinIO's: CertFile
	// (the PEM certificate chain) and KeyFile (the PEM private key); the
	// server then speaks HTTPS only. Empty: plain HTTP.
	CertsDir string `json:"certs_dir"`
	// AccessKey and SecretKey are the credentials; when both are empty
	// the server generates them once and keeps them in the data
	// directory (the volume's directory) with mode 0600.
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
	// LogFormat is "json" or "console".
	LogFormat string `json:"log_format"`
	// Durability is when a change is durable: DurableOnAck (the default:
	// before it is acknowledged) or DurableWithin1s (acknowledged first,
	// durable within a second; a crash may lose up to the last second of
	// acknowledged changes, never the volume's consistency).
	Durability string `json:"durability"`
	// GCMode is when deleted objects' space is freed: GCPerCPU (the
	// default: per-CPU background queues), GCSync (inside the request) or
	// GCSweep (a background walker per allocation group).
	GCMode string `json:"gc_mode"`
	// TrimInterval is how often freed space is given back to the storage
	// under the volume (a Go duration; 0 turns periodic trim off).
	// TrimIntervalText is it as written.
	TrimInterval     time.Duration `json:"-"`
	TrimIntervalText string        `json:"trim_interval"`
	// TrimPassBytes bounds what one periodic pass discards;
	// TrimPassText is it as written ("4G").
	TrimPassBytes int64  `json:"-"`
	TrimPassText  string `json:"trim_pass_bytes"`
	// LifecycleInterval is how often a lifecycle pass starts over the
	// buckets with rules (0: passes on demand only); LifecycleDay is the
	// length of a rule's day (24h; shorter only for tests and demos).
	// The *Text fields are them as written.
	LifecycleInterval     time.Duration `json:"-"`
	LifecycleIntervalText string        `json:"lifecycle_interval"`
	LifecycleDay          time.Duration `json:"-"`
	LifecycleDayText      string        `json:"lifecycle_day"`
	// ScrubInterval is how often a scrub pass starts over the volume's
	// metadata and objects (0: passes on demand only); ScrubIntervalText
	// is it as written.
	ScrubInterval     time.Duration `json:"-"`
	ScrubIntervalText string        `json:"scrub_interval"`
	// LogLevel is the least severe level logged: debug, info (the
	// default: one line per request), warn, error.
	LogLevel string `json:"log_level"`
	// LogSample logs one in LogSample successful requests (1: every
	// one); failed requests are always logged. LogSampleText is it as
	// written.
	LogSample     int    `json:"-"`
	LogSampleText string `json:"log_sample"`
	// LogFlush is the longest a log line waits in memory to be written
	// with others (0: each line at once); warnings and errors never wait.
	// LogFlushText is it as written.
	LogFlush     time.Duration `json:"-"`
	LogFlushText string        `json:"log_flush"`
	// MetricsAuth is who may scrape /minio/metrics/v3: MetricsRoot (the
	// default: the root credentials' bearer token or a SigV4 signature),
	// MetricsPublic (anyone) or MetricsOff (no metrics kept).
	MetricsAuth string `json:"metrics_auth"`
	// CacheSize is the memory budget of the volume's metadata caches
	// (blocks and inodes); CacheSizeText is it as written ("128M").
	CacheSize     int64  `json:"-"`
	CacheSizeText string `json:"cache_size"`
	// DebugListen, when set, is a loopback HOST:PORT where Go's profiling
	// handlers (/debug/pprof/) are served, apart from the S3 listener.
	// Empty (the default): none. Profiles reveal the server's internals
	// and cost CPU while taken, so other addresses are refused.
	DebugListen string `json:"debug_listen"`
}

// Who may scrape the metrics.
const (
	MetricsRoot   = "root"
	MetricsPublic = "public"
	MetricsOff    = "off"
)

// LogLevels are the accepted log levels, most verbose first.
var LogLevels = []string{"debug", "info", "warn", "error"}

// Inode garbage collection modes (package gc's names; config imports
// nothing of ours).
const (
	GCPerCPU = "percpu"
	GCSync   = "sync"
	GCSweep  = "sweep"
)

// MinCacheSize is the smallest cache_size: below it nearly every lookup
// reads the device.
const MinCacheSize = 1 << 20

// The files of a certs directory, named as MinIO names them.
const (
	CertFile = "public.crt"
	KeyFile  = "private.key"
)

// MaxRegion is the longest region name, in bytes.
const MaxRegion = 64

// ValidRegion reports whether name can name a region: 1 to MaxRegion
// ASCII letters, digits, '-' and '_'. That covers AWS's names
// (eu-west-1) and others' (ceph's zone groups), and keeps out what a
// SigV4 credential scope cannot carry ('/'). It is sigv4.ValidRegion,
// which config may not import; cmd/xfs3's tests hold the two together.
func ValidRegion(name string) bool {
	if name == "" || len(name) > MaxRegion {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Durability settings.
const (
	DurableOnAck    = "on-ack"
	DurableWithin1s = "within-1s"
)

// Defaults are what `xfs3 serve` uses with no arguments.
func Defaults() Config {
	return Config{
		Volume:     filepath.Join("xfs3-data", "volume.xfs"),
		SizeText:   "16G",
		Addr:       "127.0.0.1:9000",
		LogFormat:  "console",
		Durability: DurableOnAck,
		GCMode:     GCPerCPU,
		// A minute: freed space is back with the host (or the SSD) soon
		// after a delete, while a pass with nothing freed costs nothing
		// (the backlog is kept in memory) and one that has work discards
		// at most TrimPassText, pausing for foreground writes.
		TrimIntervalText: "1m",
		TrimPassText:     "4G",
		// An hour: rules count in days, so a pass an hour expires
		// things within an hour of their time, and a pass over buckets
		// with nothing due reads their listings once an hour, paced.
		LifecycleIntervalText: "1h",
		LifecycleDayText:      "24h",
		// Off: a pass reads every object, which only the operator can
		// weigh against the volume's size.
		ScrubIntervalText: "0",
		LogLevel:          "info",
		LogSampleText:     "1",
		// A tenth of a second: a line per request costs a write each
		// without it, while a person tailing the log sees no delay and a
		// process killed outright loses at most that much of it.
		LogFlushText: "100ms",
		MetricsAuth:  MetricsRoot,
		// The engine's own default (xfs.DefaultCacheBytes, which says
		// what it holds): small enough for a server in a 512 MiB
		// container, large enough for the directory blocks of millions
		// of names.
		CacheSizeText: "128M",
	}
}

// envNames maps each setting to its environment variable.
var envNames = map[string]string{
	"volume":     "XFS3_VOLUME",
	"size":       "XFS3_SIZE",
	"addr":       "XFS3_ADDR",
	"certs_dir":  "XFS3_CERTS_DIR",
	"region":     "XFS3_REGION",
	"access_key": "XFS3_ACCESS_KEY",
	"secret_key": "XFS3_SECRET_KEY",
	"log_format": "XFS3_LOG_FORMAT",
	"durability": "XFS3_DURABILITY",
	"gc_mode":    "XFS3_GC_MODE",

	"trim_interval":   "XFS3_TRIM_INTERVAL",
	"trim_pass_bytes": "XFS3_TRIM_PASS_BYTES",

	"lifecycle_interval": "XFS3_LIFECYCLE_INTERVAL",
	"lifecycle_day":      "XFS3_LIFECYCLE_DAY",

	"scrub_interval": "XFS3_SCRUB_INTERVAL",

	"log_level":    "XFS3_LOG_LEVEL",
	"log_sample":   "XFS3_LOG_SAMPLE",
	"log_flush":    "XFS3_LOG_FLUSH",
	"metrics_auth": "XFS3_METRICS_AUTH",
	"cache_size":   "XFS3_CACHE_SIZE",
	"debug_listen": "XFS3_DEBUG_LISTEN",
}

// field returns a pointer to the string setting named like its JSON key.
func (c *Config) field(name string) *string {
	switch name {
	case "volume":
		return &c.Volume
	case "size":
		return &c.SizeText
	case "addr":
		return &c.Addr
	case "certs_dir":
		return &c.CertsDir
	case "region":
		return &c.Region
	case "access_key":
		return &c.AccessKey
	case "secret_key":
		return &c.SecretKey
	case "log_format":
		return &c.LogFormat
	case "durability":
		return &c.Durability
	case "gc_mode":
		return &c.GCMode
	case "trim_interval":
		return &c.TrimIntervalText
	case "trim_pass_bytes":
		return &c.TrimPassText
	case "lifecycle_interval":
		return &c.LifecycleIntervalText
	case "lifecycle_day":
		return &c.LifecycleDayText
	case "scrub_interval":
		return &c.ScrubIntervalText
	case "log_level":
		return &c.LogLevel
	case "log_sample":
		return &c.LogSampleText
	case "log_flush":
		return &c.LogFlushText
	case "metrics_auth":
		return &c.MetricsAuth
	case "cache_size":
		return &c.CacheSizeText
	case "debug_listen":
		return &c.DebugListen
	}
	return nil
}

// Load builds a Config from the command-line arguments of `serve`, the
// environment (lookup, usually os.LookupEnv) and the config file the
// arguments or XFS3_CONFIG name. Usage errors print to usage.
func Load(args []string, lookup func(string) (string, bool), usage io.Writer) (Config, error) {
	c := Defaults()
	fs, file, flags := newFlagSet(c, usage)
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *file == "" {
		*file, _ = lookup("XFS3_CONFIG")
	}
	if *file != "" {
		if err := c.readFile(*file); err != nil {
			return Config{}, err
		}
	}
	for name, env := range envNames {
		if v, ok := lookup(env); ok {
			*c.field(name) = v
		}
	}
	for name, v := range flags {
		if *v != "" {
			*c.field(name) = *v
		}
	}
	return c, c.Validate()
}

// newFlagSet defines the flags of `serve`, their help naming the defaults
// of c: file is --config, and flags maps each setting's JSON key to its
// flag's value (empty when the flag is not given). docs/configuration.md
// lists them; a test keeps the two in step.
func newFlagSet(c Config, usage io.Writer) (fs *flag.FlagSet, file *string, flags map[string]*string) {
	fs = flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(usage)
	file = fs.String("config", "", "JSON config file (XFS3_CONFIG)")
	flags = map[string]*string{
		"volume":     fs.String("volume", "", "volume file or block device (XFS3_VOLUME; default "+c.Volume+")"),
		"size":       fs.String("size", "", "size of a new volume, e.g. 16G (XFS3_SIZE; default "+c.SizeText+")"),
		"addr":       fs.String("addr", "", "listen address HOST:PORT (XFS3_ADDR; default "+c.Addr+")"),
		"certs_dir":  fs.String("certs-dir", "", "serve HTTPS with "+CertFile+" and "+KeyFile+" of this directory (XFS3_CERTS_DIR; default none: HTTP)"),
		"region":     fs.String("region", "", "the server's S3 region; unset, us-east-1 and buckets in any region (XFS3_REGION; default unset)"),
		"log_format": fs.String("log-format", "", "json or console (XFS3_LOG_FORMAT; default "+c.LogFormat+")"),
		"durability": fs.String("durability", "", "on-ack or within-1s (XFS3_DURABILITY; default "+c.Durability+")"),
		"gc_mode":    fs.String("gc-mode", "", "percpu, sync or sweep (XFS3_GC_MODE; default "+c.GCMode+")"),

		"trim_interval":   fs.String("trim-interval", "", "how often freed space is trimmed, 0 for never (XFS3_TRIM_INTERVAL; default "+c.TrimIntervalText+")"),
		"trim_pass_bytes": fs.String("trim-pass-bytes", "", "bytes one periodic trim pass discards at most (XFS3_TRIM_PASS_BYTES; default "+c.TrimPassText+")"),

		"lifecycle_interval": fs.String("lifecycle-interval", "", "how often a lifecycle pass starts, 0 for on demand only (XFS3_LIFECYCLE_INTERVAL; default "+c.LifecycleIntervalText+")"),
		"lifecycle_day":      fs.String("lifecycle-day", "", "the length of a lifecycle rule's day; shorter only for tests and demos (XFS3_LIFECYCLE_DAY; default "+c.LifecycleDayText+")"),

		"scrub_interval": fs.String("scrub-interval", "", "how often a scrub pass starts, 0 for on demand only (XFS3_SCRUB_INTERVAL; default "+c.ScrubIntervalText+")"),

		"log_level":    fs.String("log-level", "", "debug, info, warn or error (XFS3_LOG_LEVEL; default "+c.LogLevel+")"),
		"log_sample":   fs.String("log-sample", "", "log one in N successful requests; failures always (XFS3_LOG_SAMPLE; default "+c.LogSampleText+")"),
		"log_flush":    fs.String("log-flush", "", "longest a log line waits to be written in a batch, 0 for none (XFS3_LOG_FLUSH; default "+c.LogFlushText+")"),
		"metrics_auth": fs.String("metrics-auth", "", "who may scrape /minio/metrics/v3: root, public or off (XFS3_METRICS_AUTH; default "+c.MetricsAuth+")"),
		"cache_size":   fs.String("cache-size", "", "memory for cached metadata blocks and inodes (XFS3_CACHE_SIZE; default "+c.CacheSizeText+")"),
		"debug_listen": fs.String("debug-listen", "", "loopback HOST:PORT serving Go's profiles at /debug/pprof/ (XFS3_DEBUG_LISTEN; default none)"),
	}
	return fs, file, flags
}

// readFile merges a JSON config file; unknown keys are errors, so typos
// do not pass silently.
func (c *Config) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

// ErrInvalid is the kind of every validation error.
var ErrInvalid = errors.New("invalid configuration")

// Validate checks every setting and fills Size from SizeText.
func (c *Config) Validate() error {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if strings.TrimSpace(c.Volume) == "" {
		bad("volume: empty path")
	}
	if n, err := ParseSize(c.SizeText); err != nil {
		bad("size: %v", err)
	} else if n < 64<<20 {
		bad("size: %s is below the 64 MiB minimum of a volume", c.SizeText)
	} else {
		c.Size = n
	}
	if host, port, err := net.SplitHostPort(c.Addr); err != nil {
		bad("addr: %q is not HOST:PORT (%v)", c.Addr, err)
	} else if port == "" || (host != "" && net.ParseIP(host) == nil && host != "localhost") {
		bad("addr: %q needs an IP address or localhost and a port", c.Addr)
	}
	if c.Region != "" && !ValidRegion(c.Region) {
		bad("region: %q is not a region name: 1 to %d letters, digits, '-' or '_', such as eu-west-1", c.Region, MaxRegion)
	}
	if (c.AccessKey == "") != (c.SecretKey == "") {
		bad("credentials: set both XFS3_ACCESS_KEY and XFS3_SECRET_KEY, or neither")
	} else if c.AccessKey != "" && (len(c.AccessKey) < 3 || len(c.SecretKey) < 8) {
		bad("credentials: the access key needs 3 characters or more and the secret key 8")
	}
	if c.LogFormat != "json" && c.LogFormat != "console" {
		bad("log format: %q is neither json nor console", c.LogFormat)
	}
	if c.Durability != DurableOnAck && c.Durability != DurableWithin1s {
		bad("durability: %q is neither %s nor %s", c.Durability, DurableOnAck, DurableWithin1s)
	}
	switch c.GCMode {
	case GCPerCPU, GCSync, GCSweep:
	default:
		bad("gc mode: %q is none of %s, %s, %s", c.GCMode, GCPerCPU, GCSync, GCSweep)
	}
	if d, err := time.ParseDuration(c.TrimIntervalText); err != nil || d < 0 {
		bad("trim interval: %q is not a duration of 0 or more, such as 1m, 30s or 0 (off)", c.TrimIntervalText)
	} else {
		c.TrimInterval = d
	}
	if n, err := ParseSize(c.TrimPassText); err != nil || n <= 0 {
		bad("trim pass bytes: %q is not a size above 0, such as 4G", c.TrimPassText)
	} else {
		c.TrimPassBytes = n
	}
	if d, err := time.ParseDuration(c.LifecycleIntervalText); err != nil || d < 0 {
		bad("lifecycle interval: %q is not a duration of 0 or more, such as 1h, 10m or 0 (on demand only)", c.LifecycleIntervalText)
	} else {
		c.LifecycleInterval = d
	}
	if d, err := time.ParseDuration(c.ScrubIntervalText); err != nil || d < 0 {
		bad("scrub interval: %q is not a duration of 0 or more, such as 24h or 0 (on demand only)", c.ScrubIntervalText)
	} else {
		c.ScrubInterval = d
	}
	if d, err := time.ParseDuration(c.LifecycleDayText); err != nil || d < time.Second {
		bad("lifecycle day: %q is not a duration of at least 1s, such as 24h", c.LifecycleDayText)
	} else {
		c.LifecycleDay = d
	}
	if !slices.Contains(LogLevels, c.LogLevel) {
		bad("log level: %q is none of %s", c.LogLevel, strings.Join(LogLevels, ", "))
	}
	if n, err := strconv.Atoi(c.LogSampleText); err != nil || n < 1 {
		bad("log sample: %q is not a whole number of 1 or more (1 logs every request)", c.LogSampleText)
	} else {
		c.LogSample = n
	}
	if d, err := time.ParseDuration(c.LogFlushText); err != nil || d < 0 || d > time.Minute {
		bad("log flush: %q is not a duration from 0 to 1m, such as 100ms or 0 (each line at once)", c.LogFlushText)
	} else {
		c.LogFlush = d
	}
	switch c.MetricsAuth {
	case MetricsRoot, MetricsPublic, MetricsOff:
	default:
		bad("metrics auth: %q is none of %s, %s, %s", c.MetricsAuth, MetricsRoot, MetricsPublic, MetricsOff)
	}
	if n, err := ParseSize(c.CacheSizeText); err != nil || n < MinCacheSize {
		bad("cache size: %q is not a size from 1M up, such as 128M or 1G", c.CacheSizeText)
	} else {
		c.CacheSize = n
	}
	if c.DebugListen != "" {
		if err := CheckLoopback(c.DebugListen); err != nil {
			bad("debug listen: %v", err)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, "; "))
	}
	return nil
}

// CheckLoopback accepts a HOST:PORT whose host is a loopback address
// (127.0.0.0/8, ::1) or "localhost", the only places the profiling
// listener may serve: profiles show the server's internals to whoever
// can fetch them, and each one costs CPU while it is taken.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT (%v)", addr, err)
	}
	if port == "" {
		return fmt.Errorf("%q has no port", addr)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address (127.0.0.1, [::1] or localhost): profiles reveal the server's internals and cost CPU", addr)
	}
	return nil
}
