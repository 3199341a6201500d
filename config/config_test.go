package config

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDefaults(t *testing.T) {
	c, err := Load(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9000" || c.Size != 16<<30 || c.Volume != filepath.Join("xfs3-data", "volume.xfs") || c.LogFormat != "console" || c.Durability != DurableOnAck || c.GCMode != GCPerCPU ||
		c.TrimInterval != time.Minute || c.TrimPassBytes != 4<<30 || c.LogLevel != "info" || c.LogSample != 1 || c.LogFlush != 100*time.Millisecond || c.MetricsAuth != MetricsRoot || c.CacheSize != 128<<20 || c.CertsDir != "" {
		t.Fatalf("defaults: %+v", c)
	}
}

// TestLayers checks defaults < file < environment < flags, one setting
// at each layer.
func TestLayers(t *testing.T) {
	file := filepath.Join(t.TempDir(), "xfs3.json")
	os.WriteFile(file, []byte(`{"volume": "from-file.xfs", "size": "1G", "addr": "127.0.0.1:7000", "certs_dir": "/etc/from-file", "log_format": "json", "gc_mode": "sync", "trim_interval": "5m", "trim_pass_bytes": "1G", "log_level": "warn", "log_sample": "3", "log_flush": "1s", "metrics_auth": "off", "cache_size": "1G"}`), 0o644)
	c, err := Load([]string{"--config", file, "--addr", "127.0.0.1:9999", "--gc-mode", "sweep", "--trim-interval", "0", "--metrics-auth", "public", "--cache-size", "512M"},
		env(map[string]string{"XFS3_SIZE": "2G", "XFS3_ACCESS_KEY": "admin", "XFS3_SECRET_KEY": "supersecret", "XFS3_DURABILITY": "within-1s", "XFS3_GC_MODE": "percpu",
			"XFS3_TRIM_INTERVAL": "30s", "XFS3_TRIM_PASS_BYTES": "64M", "XFS3_LIFECYCLE_INTERVAL": "10m", "XFS3_LIFECYCLE_DAY": "2s", "XFS3_LOG_SAMPLE": "10", "XFS3_LOG_FLUSH": "0", "XFS3_CACHE_SIZE": "256M", "XFS3_CERTS_DIR": "/etc/from-env"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Volume: "from-file.xfs", Size: 2 << 30, SizeText: "2G", Addr: "127.0.0.1:9999", CertsDir: "/etc/from-env",
		AccessKey: "admin", SecretKey: "supersecret", LogFormat: "json", Durability: DurableWithin1s, GCMode: GCSweep,
		TrimIntervalText: "0", TrimPassText: "64M", TrimPassBytes: 64 << 20,
		LifecycleIntervalText: "10m", LifecycleInterval: 10 * time.Minute, LifecycleDayText: "2s", LifecycleDay: 2 * time.Second,
		ScrubIntervalText: "0",
		LogLevel:          "warn", LogSampleText: "10", LogSample: 10, LogFlushText: "0", MetricsAuth: MetricsPublic, CacheSizeText: "512M", CacheSize: 512 << 20}
	if c != want {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	// XFS3_CONFIG names the file when the flag does not.
	c, err = Load(nil, env(map[string]string{"XFS3_CONFIG": file}), io.Discard)
	if err != nil || c.Volume != "from-file.xfs" {
		t.Fatalf("XFS3_CONFIG: %+v, %v", c, err)
	}
	// The flag wins over both.
	c, err = Load([]string{"--config", file, "--certs-dir", "from-flag"}, env(map[string]string{"XFS3_CERTS_DIR": "/etc/from-env"}), io.Discard)
	if err != nil || c.CertsDir != "from-flag" {
		t.Fatalf("--certs-dir: %+v, %v", c, err)
	}
}

func TestInvalid(t *testing.T) {
	file := filepath.Join(t.TempDir(), "typo.json")
	os.WriteFile(file, []byte(`{"adr": "x"}`), 0o644)
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"bad size", []string{"--size", "12Q"}, nil, "size"},
		{"tiny size", []string{"--size", "1M"}, nil, "64 MiB"},
		{"bad addr", []string{"--addr", "nowhere"}, nil, "addr"},
		{"host name", []string{"--addr", "example.com:80"}, nil, "addr"},
		{"half credentials", nil, map[string]string{"XFS3_ACCESS_KEY": "a"}, "credentials"},
		{"short secret", nil, map[string]string{"XFS3_ACCESS_KEY": "admin", "XFS3_SECRET_KEY": "x"}, "credentials"},
		{"log format", []string{"--log-format", "xml"}, nil, "log format"},
		{"durability", []string{"--durability", "eventually"}, nil, "durability"},
		{"gc mode", nil, map[string]string{"XFS3_GC_MODE": "lazy"}, "gc mode"},
		{"trim interval", []string{"--trim-interval", "5"}, nil, "trim interval"},
		{"negative trim interval", nil, map[string]string{"XFS3_TRIM_INTERVAL": "-1s"}, "trim interval"},
		{"trim pass bytes", []string{"--trim-pass-bytes", "0"}, nil, "trim pass bytes"},
		{"log level", []string{"--log-level", "verbose"}, nil, "log level"},
		{"log sample zero", []string{"--log-sample", "0"}, nil, "log sample"},
		{"log sample word", nil, map[string]string{"XFS3_LOG_SAMPLE": "some"}, "log sample"},
		{"log flush negative", []string{"--log-flush", "-1s"}, nil, "log flush"},
		{"log flush too long", nil, map[string]string{"XFS3_LOG_FLUSH": "2m"}, "log flush"},
		{"log flush no unit", nil, map[string]string{"XFS3_LOG_FLUSH": "100"}, "log flush"},
		{"metrics auth", nil, map[string]string{"XFS3_METRICS_AUTH": "sigv2"}, "metrics auth"},
		{"tiny cache", []string{"--cache-size", "64K"}, nil, "cache size"},
		{"bad cache size", nil, map[string]string{"XFS3_CACHE_SIZE": "lots"}, "cache size"},
		{"region with a slash", []string{"--region", "eu/west"}, nil, "region"},
		{"long region", nil, map[string]string{"XFS3_REGION": strings.Repeat("r", MaxRegion+1)}, "region"},
		{"unknown file key", []string{"--config", file}, nil, "adr"},
		{"missing file", []string{"--config", file + ".missing"}, nil, "config file"},
		{"stray argument", []string{"extra"}, nil, "unexpected"},
	} {
		_, err := Load(c.args, env(c.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error about %q", c.name, err, c.want)
		}
	}
	if _, err := Load([]string{"--size", "12Q"}, env(nil), io.Discard); !errors.Is(err, ErrInvalid) {
		t.Errorf("validation errors are not ErrInvalid: %v", err)
	}
}

// TestDebugListen: the profiling listener is off by default, comes from
// each layer like any setting, and takes loopback addresses only.
func TestDebugListen(t *testing.T) {
	c, err := Load(nil, env(nil), io.Discard)
	if err != nil || c.DebugListen != "" {
		t.Fatalf("default: %q, %v", c.DebugListen, err)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--debug-listen", "127.0.0.1:6061"}, nil, "127.0.0.1:6061"},
		{nil, map[string]string{"XFS3_DEBUG_LISTEN": "localhost:0"}, "localhost:0"},
		{[]string{"--debug-listen", "[::1]:6061"}, map[string]string{"XFS3_DEBUG_LISTEN": "127.0.0.1:1"}, "[::1]:6061"},
		{[]string{"--debug-listen", "127.3.2.1:6061"}, nil, "127.3.2.1:6061"},
	} {
		c, err := Load(tc.args, env(tc.env), io.Discard)
		if err != nil || c.DebugListen != tc.want {
			t.Errorf("%q %v: got %q, %v; want %q", tc.args, tc.env, c.DebugListen, err, tc.want)
		}
	}
	for _, addr := range []string{"0.0.0.0:6061", ":6061", "10.1.2.3:6061", "[::]:6061", "example.com:6061", "127.0.0.1", "127.0.0.1:"} {
		_, err := Load([]string{"--debug-listen", addr}, env(nil), io.Discard)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "debug listen") {
			t.Errorf("%q: got %v, want an invalid debug listen address", addr, err)
		}
	}
}
