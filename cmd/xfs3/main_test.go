package main

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// cliResult is what one run of the command line produced.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs the command line args through run, as the binary would.
func runCLI(t *testing.T, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return cliResult{code, stdout.String(), stderr.String()}
}

// noStackTrace fails when stderr looks like a Go panic or stack trace.
func noStackTrace(t *testing.T, stderr string) {
	t.Helper()
	for _, bad := range []string{"goroutine ", "panic(", "runtime error", ".go:", "internal error"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("stderr looks like a crash (%q):\n%s", bad, stderr)
		}
	}
}

// wantCLIFailure checks a failed run: status, empty stdout, an "xfs3: "
// message on stderr mentioning want, and no stack trace.
func wantCLIFailure(t *testing.T, r cliResult, code int, want string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit status %d, want %d (stderr: %q)", r.code, code, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout not empty: %q", r.stdout)
	}
	if !strings.HasPrefix(r.stderr, "xfs3: ") {
		t.Errorf("stderr does not start with \"xfs3: \": %q", r.stderr)
	}
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not mention %q", r.stderr, want)
	}
	noStackTrace(t, r.stderr)
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"help"}, {"-h"}, {"--help"}, {"help", "vol"}, {"help", "vol", "ls"},
		{"vol", "help"}, {"vol", "-h"}, {"vol", "help", "getfattr"},
		{"vol", "ls", "-h"}, {"vol", "get", "-h"}, {"vol", "stat", "-h"},
		{"vol", "getfattr", "-h"}, {"vol", "df", "--help"}, {"vol", "df", "-help"},
		{"vol", "ls", "img", "-h"},
		{"quota", "-h"}, {"help", "quota"}, {"quota", "ls", "-h"}, {"quota", "--endpoint", "http://x", "set", "-h"},
		{"vol", "quota", "--help"}, {"vol", "quota", "ls", "-h"},
		{"info", "-h"}, {"help", "info"}, {"metrics-token", "-h"}, {"help", "metrics-token"}, {"version", "-h"}, {"help", "version"},
	} {
		r := runCLI(t, args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: xfs3") || r.stderr != "" {
			t.Errorf("xfs3 %s: status %d, stdout %.40q, stderr %q", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	// Each subcommand's help is its own usage text.
	for name, c := range volCommands {
		if r := runCLI(t, "vol", name, "--help"); r.stdout != c.usage {
			t.Errorf("vol %s --help printed %q", name, r.stdout)
		}
		if !strings.HasPrefix(c.usage, "Usage: xfs3 vol "+name+" ") {
			t.Errorf("usage of %s starts %.40q", name, c.usage)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "missing command"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"vol"}, "missing command"},
		{[]string{"vol", "frob"}, `unknown command "frob"`},
		{[]string{"vol", "help", "frob"}, `unknown command "frob"`},
		{[]string{"vol", "ls"}, "want VOLUME [PATH]"},
		{[]string{"vol", "ls", "a", "b", "c"}, "want VOLUME [PATH]"},
		{[]string{"vol", "ls", "-x", "img"}, "flag provided but not defined: -x"},
		{[]string{"vol", "ls", "img", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"vol", "get", "img"}, "want VOLUME PATH [DEST]"},
		{[]string{"vol", "stat", "img"}, "want VOLUME PATH"},
		{[]string{"vol", "stat", "--json=maybe", "img", "p"}, "invalid boolean value"},
		{[]string{"vol", "getfattr", "-e", "rot13", "img", "p"}, `unknown encoding "rot13"`},
		{[]string{"vol", "getfattr", "img", "p", "-e"}, "flag needs an argument: -e"},
		{[]string{"vol", "df"}, "want VOLUME"},
		{[]string{"vol", "df", "-x", "img"}, "flag provided but not defined"},
	} {
		t.Run(strings.Join(tc.args, "_"), func(t *testing.T) {
			wantCLIFailure(t, runCLI(t, tc.args...), 2, tc.want)
		})
	}
}

func TestNotAVolume(t *testing.T) {
	dir := t.TempDir()
	random := filepath.Join(dir, "random.img")
	b := make([]byte, 1<<20)
	rand.Read(b)
	if err := os.WriteFile(random, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tiny := filepath.Join(dir, "tiny.img")
	if err := os.WriteFile(tiny, []byte("XFSB"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.img")
	for _, tc := range []struct {
		vol, want string
	}{
		{missing, "no such file or directory"},
		{random, "no XFS superblock"},
		{tiny, "too small"},
		{dir, ""},
	} {
		for _, args := range [][]string{
			{"vol", "ls", tc.vol},
			{"vol", "ls", "-l", "-R", tc.vol, "/"},
			{"vol", "get", tc.vol, "f", filepath.Join(dir, "out")},
			{"vol", "stat", "--json", tc.vol, "/"},
			{"vol", "getfattr", tc.vol, "/"},
			{"vol", "df", "-h", tc.vol},
		} {
			r := runCLI(t, args...)
			wantCLIFailure(t, r, 1, tc.want)
			if !strings.Contains(r.stderr, tc.vol) {
				t.Errorf("%v: message does not name the volume: %q", args, r.stderr)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("get created its destination for a bad volume: %v", err)
	}
}

// TestVolErrors runs failing commands against a real, empty volume.
func TestVolErrors(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs)
	dir := t.TempDir()
	img := filepath.Join(dir, "empty.img")
	oracle.Mkfs(t, img, 128<<20)
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"vol", "ls", img, "nope"}, "nope: no such file or directory"},
		{[]string{"vol", "ls", img, "/nope/deeper", "-R"}, "/nope: no such file or directory"},
		{[]string{"vol", "stat", img, "nope"}, "nope: no such file or directory"},
		{[]string{"vol", "getfattr", img, "nope"}, "nope: no such file or directory"},
		{[]string{"vol", "get", img, "nope"}, "nope: no such file or directory"},
		{[]string{"vol", "get", img, "/"}, "is a directory"},
		{[]string{"vol", "get", img, "", out}, "is a directory"},
		{[]string{"vol", "get", img, ".", "-"}, "is a directory"},
	} {
		// Name subtests without the temporary volume path.
		t.Run(tc.args[1]+"_"+strings.Join(tc.args[3:4], ""), func(t *testing.T) {
			r := runCLI(t, tc.args...)
			wantCLIFailure(t, r, 1, tc.want)
			if !strings.Contains(r.stderr, img) {
				t.Errorf("message does not name the volume: %q", r.stderr)
			}
		})
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("get of a directory created its destination: %v", err)
	}
	// The empty root lists as nothing, and has no attributes.
	for _, args := range [][]string{{"vol", "ls", img}, {"vol", "ls", "-R", "-l", img, "/"}, {"vol", "getfattr", img, "/"}} {
		if r := runCLI(t, args...); r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("%v: status %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// panicWriter panics on every write.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("boom") }

func TestPanicIsReported(t *testing.T) {
	var stderr bytes.Buffer
	code := run([]string{"help"}, nil, panicWriter{}, &stderr)
	if code != 1 || stderr.String() != "xfs3: internal error: boom (this is a bug; please report it)\n" {
		t.Errorf("status %d, stderr %q", code, stderr.String())
	}
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		pos  []string
		l    bool
		e    string
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, false, ""},
		{[]string{"-l", "a", "b"}, []string{"a", "b"}, true, ""},
		{[]string{"a", "-l", "b"}, []string{"a", "b"}, true, ""},
		{[]string{"a", "b", "-l"}, []string{"a", "b"}, true, ""},
		{[]string{"a", "-e", "hex", "b"}, []string{"a", "b"}, false, "hex"},
		{[]string{"a", "--", "-l"}, []string{"a", "-l"}, false, ""},
		{[]string{"--", "-l", "--"}, []string{"-l", "--"}, false, ""},
		{[]string{"a", "-e", "--", "-l"}, []string{"a"}, true, "--"},
		{[]string{"-", "-l"}, []string{"-"}, true, ""},
		{nil, nil, false, ""},
	} {
		fs := newFlags("t")
		l := fs.Bool("l", false, "")
		e := fs.String("e", "", "")
		pos, err := parseFlags(fs, tc.args)
		if err != nil || !reflect.DeepEqual(pos, tc.pos) || *l != tc.l || *e != tc.e {
			t.Errorf("parseFlags(%q) = %q, %v (l=%v e=%q); want %q (l=%v e=%q)", tc.args, pos, err, *l, *e, tc.pos, tc.l, tc.e)
		}
	}
}

func TestModeString(t *testing.T) {
	for mode, want := range map[uint32]string{
		0o100644: "-rw-r--r--",
		0o040755: "drwxr-xr-x",
		0o041777: "drwxrwxrwt",
		0o041776: "drwxrwxrwT",
		0o104755: "-rwsr-xr-x",
		0o102644: "-rw-r-Sr--",
		0o106711: "-rws--s--x",
		0o120777: "lrwxrwxrwx",
		0o020620: "crw--w----",
		0o060660: "brw-rw----",
		0o010600: "prw-------",
		0o140755: "srwxr-xr-x",
		0o000644: "?rw-r--r--",
	} {
		if got := modeString(mode); got != want {
			t.Errorf("modeString(%#o) = %q, want %q", mode, got, want)
		}
	}
}

func TestDisplayName(t *testing.T) {
	for in, want := range map[string]string{
		"plain":         "plain",
		"sp ace":        "sp ace",
		"new\nline":     `"new\nline"`,
		"tab\t":         `"tab\t"`,
		"del\x7f":       `"del\x7f"`,
		`"quoted"`:      `"\"quoted\""`,
		`mid"quote`:     `mid"quote`,
		"\xff\xfe":      "\xff\xfe",
		"\xff\n":        `"\xff\n"`,
		"caf\u00e9":     "caf\u00e9",
		`back\slash`:    `back\slash`,
		"dir/new\nline": `"dir/new\nline"`,
	} {
		if got := displayName(in); got != want {
			t.Errorf("displayName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The expected strings were printed by getfattr 2.5.1 for the same values.
func TestEncodeValue(t *testing.T) {
	bin := []byte{0x00, 0xff, 0x0a, 0x0d, 0x5c, 0x22, 0x41, 0x00, 0x01}
	for _, tc := range []struct {
		val               []byte
		text, hex, base64 string
	}{
		{bin, "\"\\000\xff\\012\\015\\\\\\\"A\\000\x01\"", "0x00ff0a0d5c22410001", "0sAP8KDVwiQQAB"},
		{[]byte{}, `""`, "0x", "0s"},
		{[]byte("ABC\x00"), `"ABC"`, "0x41424300", "0sQUJDAA=="},
		{[]byte("x"), `"x"`, "0x78", "0seA=="},
		{[]byte("sval"), `"sval"`, "0x7376616c", "0sc3ZhbA=="},
		{[]byte{0xde, 0xad, 0xbe, 0xef}, "\"\xde\xad\xbe\xef\"", "0xdeadbeef", "0s3q2+7w=="},
		{[]byte{0}, `""`, "0x00", "0sAA=="},
		{[]byte{0, 0}, `"\000"`, "0x0000", "0sAAA="},
	} {
		for enc, want := range map[string]string{"text": tc.text, "hex": tc.hex, "base64": tc.base64} {
			if got := encodeValue(tc.val, enc); got != want {
				t.Errorf("encodeValue(%q, %s) = %q, want %q", tc.val, enc, got, want)
			}
		}
	}
	if got := getfattrQuote("user.a=b\\c\n", "=\n\r"); got != `user.a\075b\134c\012` {
		t.Errorf("getfattrQuote = %q", got)
	}
	for in, want := range map[string]string{"/": ".", "": ".", "//a/b": "a/b", "./a": "a", ".//a": "a", "./": ".", "a/./b": "a/./b", "..": ".."} {
		if got := getfattrPath(in); got != want {
			t.Errorf("getfattrPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestXFSACLToXattr(t *testing.T) {
	// As stored by the kernel for "u::rw-,u:1000:r--,g::r--,m::r--,o::r--",
	// and as getfattr showed system.posix_acl_access for it.
	disk := []byte{
		0, 0, 0, 5,
		0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0, 6, 0, 0,
		0, 0, 0, 2, 0, 0, 0x03, 0xe8, 0, 4, 0, 0,
		0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff, 0, 4, 0, 0,
		0, 0, 0, 0x10, 0xff, 0xff, 0xff, 0xff, 0, 4, 0, 0,
		0, 0, 0, 0x20, 0xff, 0xff, 0xff, 0xff, 0, 4, 0, 0,
	}
	want := "0x0200000001000600ffffffff02000400e803000004000400ffffffff10000400ffffffff20000400ffffffff"
	got, ok := xfsACLToXattr(disk)
	if !ok || encodeValue(got, "hex") != want {
		t.Errorf("xfsACLToXattr = %s, %v; want %s", encodeValue(got, "hex"), ok, want)
	}
	for _, bad := range [][]byte{nil, {0, 0, 0, 1}, disk[:len(disk)-1], append([]byte{0, 0, 0, 1, 0, 0, 0, 0x40}, make([]byte, 8)...)} {
		if _, ok := xfsACLToXattr(bad); ok {
			t.Errorf("xfsACLToXattr(%x) accepted", bad)
		}
	}
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0B", 1023: "1023B", 1024: "1.0K", 1025: "1.1K", 10239: "10K", 10240: "10K",
		1536: "1.5K", 1<<20 - 1: "1.0M", 1 << 20: "1.0M", 512 << 20: "512M",
		469762048: "448M", 3211264: "3.1M", 1<<30 - 1: "1.0G", 5 << 40: "5.0T",
		1 << 60: "1.0E", 1<<64 - 1: "16E",
	} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
	for _, tc := range []struct {
		used, total uint64
		want        string
	}{{0, 0, "-"}, {0, 10, "0%"}, {1, 1000, "1%"}, {999, 1000, "100%"}, {500, 1000, "50%"}} {
		if got := percent(tc.used, tc.total); got != tc.want {
			t.Errorf("percent(%d, %d) = %q, want %q", tc.used, tc.total, got, tc.want)
		}
	}
}
