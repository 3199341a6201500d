package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// readmePath is the README whose commands TestReadmeCommands runs.
const readmePath = "../README.md"

// readmeAddr is the address the README's commands name.
const readmeAddr = "127.0.0.1:9000"

// readmeNotRun lists, exactly as the README writes them, the commands the
// test does not run, and why. A command the README drops must leave this
// list too.
var readmeNotRun = map[string]string{
	"go test -race -timeout 40m ./...": "the whole test suite, this test included",
}

// mcNotRun is why no mc command runs.
const mcNotRun = "mc is MinIO's AGPL client: Debian does not package it (its mc is Midnight Commander) and " +
	".ci/run installs only Debian packages; the admin requests of mc quota and mc admin user|policy are tested with xfs3's own client (integration/quota_test.go, integration/identities_test.go)"

// readmeInputs are the files the README's commands read, made in the
// test's directory with random bytes of these sizes.
var readmeInputs = map[string]int{
	"holiday.jpg":         300_000,
	"album/beach.jpg":     5_000,
	"album/2023/snow.jpg": 7_000,
	"docs/notes.txt":      1_000,
	"docs/guide/intro.md": 20_000,
}

// TestReadmeCommands runs the shell commands of README.md the way a user
// would, in the README's order, and fails when one exits with a status
// other than 0 or prints other than what the README shows.
//
// The README is read as follows. Every code block is fenced and names
// its language. A "sh" block holds commands, one a line. A "text" block
// after a "sh" block (prose may lie between, no other block) is the
// standard output of that block's last command: runs of blanks compare as one, "…" in a line matches any text,
// and a line that is only "…" matches any number of lines. A "go" block
// is compiled as the body of a main function (buildGoSnippet) but not
// run.
// Commands are split into words as a shell splits them, with quotes and
// $NAME expanded from the exports before them; pipes, redirections, "&&"
// and other shell syntax are refused, so the README keeps to plain
// commands.
//
// How each command runs:
//   - The shell is a fresh one: its environment holds only PATH, HOME (a
//     new directory), XFS3_ADDR and what the README exports. Commands run
//     in a new directory, which holds the files of readmeInputs, so the
//     server's ./xfs3-data lands there.
//   - "go run ./cmd/xfs3" is the xfs3 binary TestMain built.
//   - "127.0.0.1:9000", in commands and in the output the README shows,
//     becomes a free loopback port, which XFS3_ADDR also names. It is the
//     only change made to a command.
//   - "xfs3 serve" starts the server in the background, as the README's
//     separate terminal; the test waits for its "serving" line and checks
//     what it printed up to there. Another serve, and the commands that
//     need the volume closed (mount, xfs3 vol, mkfs, trim), first stop a
//     running server with SIGINT, the README's Ctrl-C, and require a
//     clean close.
//   - mount first requires xfs_repair -n to pass on the image. Without
//     root (or getfattr, or xfs_repair) the lines from mount to umount are
//     not run; XFS3_REQUIRE_ORACLES=1 makes that a failure. A cleanup
//     unmounts whatever a mount line mounted.
//   - The commands of readmeNotRun are not run; a command that is neither
//     run nor listed there fails the test.
//
// At the end the server is stopped and the volume checked with
// xfs_repair -n.
func TestReadmeCommands(t *testing.T) {
	oracle.Require(t, "aws", "rclone", "curl")
	blocks, err := readmeBlocks(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	s := newReadmeSession(t)
	seen := map[string]bool{}
	for i, b := range blocks {
		switch b.lang {
		case "go":
			if err := parseGoSnippet(b.text()); err != nil {
				t.Errorf("README.md:%d: the Go example does not parse: %v", b.line, err)
			} else if err := buildGoSnippet(t, b.text()); err != nil {
				t.Errorf("README.md:%d: the Go example does not compile: %v", b.line, err)
			}
		case "text":
			if i == 0 || blocks[i-1].lang != "sh" {
				t.Errorf("README.md:%d: a text block (a command's output) must come after a sh block, with no other block between", b.line)
			}
		case "sh":
			var want *readmeBlock
			if i+1 < len(blocks) && blocks[i+1].lang == "text" {
				want = &blocks[i+1]
			}
			for j, l := range b.lines {
				cmd := strings.TrimSpace(l)
				if cmd == "" || strings.HasPrefix(cmd, "#") {
					continue
				}
				var out *readmeBlock
				if j == len(b.lines)-1 || onlyBlankAfter(b.lines[j+1:]) {
					out = want
				}
				if reason, ok := readmeNotRun[cmd]; ok {
					seen[cmd] = true
					if out != nil {
						t.Errorf("README.md:%d: shows the output of %q, which the test does not run", out.line, cmd)
					}
					t.Logf("README.md:%d: not run: %s (%s)", b.line+1+j, cmd, reason)
					continue
				}
				s.run(b.line+1+j, cmd, out)
				if t.Failed() {
					return
				}
			}
		default:
			t.Errorf("README.md:%d: a code block in %q; the test knows sh, text and go", b.line, b.lang)
		}
	}
	for cmd := range readmeNotRun {
		if !seen[cmd] {
			t.Errorf("readmeNotRun lists %q, which the README no longer has", cmd)
		}
	}
	s.finish()
}

// readmeBlock is a fenced code block of the README.
type readmeBlock struct {
	line  int // of the opening fence
	lang  string
	lines []string
}

func (b readmeBlock) text() string { return strings.Join(b.lines, "\n") }

// readmeBlocks returns the fenced code blocks of the markdown file at
// path. An indented code block, or a fence without a language, is an
// error: every block must say what it is.
func readmeBlocks(path string) ([]readmeBlock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var blocks []readmeBlock
	var cur *readmeBlock
	prevBlank := true
	for i, l := range strings.Split(string(data), "\n") {
		n := i + 1
		if cur != nil {
			if strings.HasPrefix(l, "```") {
				blocks = append(blocks, *cur)
				cur, prevBlank = nil, false
				continue
			}
			cur.lines = append(cur.lines, l)
			continue
		}
		if lang, ok := strings.CutPrefix(l, "```"); ok {
			lang = strings.TrimSpace(lang)
			if lang == "" {
				return nil, fmt.Errorf("README.md:%d: a code block without a language (sh, text or go)", n)
			}
			cur = &readmeBlock{line: n, lang: lang}
			continue
		}
		if prevBlank && (strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t")) && strings.TrimSpace(l) != "" {
			return nil, fmt.Errorf("README.md:%d: an indented code block; fence it and name its language", n)
		}
		prevBlank = strings.TrimSpace(l) == ""
	}
	if cur != nil {
		return nil, fmt.Errorf("README.md:%d: a code block that never closes", cur.line)
	}
	return blocks, nil
}

func onlyBlankAfter(lines []string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}

// parseGoSnippet parses a README example as statements of a function.
func parseGoSnippet(src string) error {
	_, err := parser.ParseFile(token.NewFileSet(), "README.go", "package readme\n\nfunc _() {\n"+src+"\n}\n", 0)
	return err
}

// snippetImports are the packages a README example may use, by the name
// it calls them.
var snippetImports = map[string]string{
	"context": "context", "fmt": "fmt", "log": "log", "strings": "strings",
	"minio":       "github.com/minio/minio-go/v7",
	"credentials": "github.com/minio/minio-go/v7/pkg/credentials",
	"xfs":         "github.com/xfs3/xfs3/xfs",
}

// buildGoSnippet compiles a README example as the body of a main
// function, importing the packages of snippetImports it names, against
// this module (a file laid over a directory that does not exist, with
// go build -overlay: nothing is written into the tree).
func buildGoSnippet(t *testing.T, src string) error {
	var imports []string
	for name, path := range snippetImports {
		if regexp.MustCompile(`\b` + name + `\.`).MatchString(src) {
			imports = append(imports, strconv.Quote(path))
		}
	}
	sort.Strings(imports)
	prog := "package main\n\nimport (\n" + strings.Join(imports, "\n") + "\n)\n\nfunc main() {\n" + src + "\n}\n"
	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(prog), 0o644); err != nil {
		return err
	}
	root, err := filepath.Abs("..")
	if err != nil {
		return err
	}
	pkg := filepath.Join(root, "integration", "readmesnippet")
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(pkg, "main.go"): file}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", os.DevNull, "-overlay", overlayFile, "./readmesnippet")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

// readmeSession is the shell the README's commands run in.
type readmeSession struct {
	t      *testing.T
	dir    string            // the working directory
	env    map[string]string // the shell's environment
	addr   string            // what 127.0.0.1:9000 becomes
	server *readmeServer     // the running `xfs3 serve`, or nil
	volume string            // the volume the last server served

	mountOK bool // root with loop mounts, getfattr and xfs_repair
	inMount bool // between a mount line and its umount
}

func newReadmeSession(t *testing.T) *readmeSession {
	dir := t.TempDir()
	home := filepath.Join(dir, ".home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, readmeInputs)
	s := &readmeSession{
		t:    t,
		dir:  dir,
		addr: freeLoopbackAddr(t),
		env:  map[string]string{"PATH": os.Getenv("PATH"), "HOME": home},
	}
	s.env["XFS3_ADDR"] = s.addr
	s.mountOK = oracle.Optional(t, "the README's lines from mount to umount are not run", oracle.ToolMount, "getfattr", oracle.ToolRepair)
	t.Cleanup(func() {
		if s.server != nil {
			s.server.kill()
		}
	})
	return s
}

// freeLoopbackAddr returns a loopback address whose port was free a
// moment ago.
func freeLoopbackAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// run runs the README's command cmd, written at line, and compares its
// standard output with want when the README shows it.
func (s *readmeSession) run(line int, cmd string, want *readmeBlock) {
	t := s.t
	args, err := shellWords(strings.ReplaceAll(cmd, readmeAddr, s.addr), s.env)
	if err != nil {
		t.Errorf("README.md:%d: %q: %v", line, cmd, err)
		return
	}
	where := fmt.Sprintf("README.md:%d: %s", line, cmd)
	if s.inMount && !s.mountOK {
		t.Logf("%s: not run (no mount)", where)
		if args[0] == "umount" {
			s.inMount = false
		}
		if want != nil {
			t.Logf("README.md:%d: output not checked", want.line)
		}
		return
	}
	t.Logf("%s", where)
	var out string
	switch {
	case args[0] == "export":
		for _, a := range args[1:] {
			name, value, ok := strings.Cut(a, "=")
			if !ok || name == "" {
				t.Errorf("%s: %q is not NAME=VALUE", where, a)
				return
			}
			s.env[name] = value
		}
	case len(args) >= 3 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/xfs3":
		out = s.xfs3(where, args[3:])
	case args[0] == "mount":
		s.stopServer(where)
		s.inMount = true
		if !s.mountOK {
			t.Logf("%s: not run (no mount)", where)
			return
		}
		if len(args) < 3 {
			t.Errorf("%s: want mount OPTIONS IMAGE DIR", where)
			return
		}
		img, mnt := s.abs(args[len(args)-2]), s.abs(args[len(args)-1])
		oracle.Repair(t, img)
		oracle.CleanupMount(t, mnt, img)
		out = s.host(where, args)
	case args[0] == "umount":
		s.inMount = false
		out = s.host(where, args)
	case slices.Contains([]string{"aws", "rclone", "curl", "mkdir", "ls", "getfattr", "lsattr"}, args[0]):
		out = s.host(where, args)
	default:
		t.Errorf("%s: the test neither runs %s commands nor lists this one in readmeNotRun", where, args[0])
		return
	}
	if want != nil && !t.Failed() {
		wantText := strings.ReplaceAll(want.text(), readmeAddr, s.addr)
		if err := matchShownOutput(wantText, out); err != nil {
			t.Errorf("%s: the output differs from README.md:%d: %v\ngot:\n%s\nREADME shows:\n%s", where, want.line, err, out, wantText)
		} else {
			t.Logf("README.md:%d: output as shown", want.line)
		}
	}
}

func (s *readmeSession) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.dir, p)
}

// environ is the session's environment for exec.
func (s *readmeSession) environ() []string {
	var env []string
	for k, v := range s.env {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// host runs a command of the host and returns its standard output.
func (s *readmeSession) host(where string, args []string) string {
	return s.exec(where, args[0], args[1:])
}

// xfs3 runs the xfs3 binary with args: serve in the background, the
// others to their end.
func (s *readmeSession) xfs3(where string, args []string) string {
	if len(args) == 0 {
		s.t.Errorf("%s: no xfs3 command", where)
		return ""
	}
	switch args[0] {
	case "serve":
		s.stopServer(where)
		return s.startServer(where, args[1:])
	case "vol", "mkfs", "trim":
		s.stopServer(where)
	}
	return s.exec(where, binary, args)
}

// exec runs name with args in the session and returns its standard
// output; a status other than 0 fails the test.
func (s *readmeSession) exec(where, name string, args []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = s.dir, s.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if d := time.Since(start); d > 10*time.Second {
		s.t.Logf("%s: took %v", where, d.Round(time.Millisecond))
	}
	if err != nil {
		s.t.Errorf("%s: %v\nstdout:\n%s\nstderr:\n%s", where, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// readmeServer is an `xfs3 serve` the README started.
type readmeServer struct {
	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan error
}

// startServer starts `xfs3 serve args` in the session and returns what
// it printed up to its "serving" line, which must name the session's
// address.
func (s *readmeSession) startServer(where string, args []string) string {
	t := s.t
	srv := &readmeServer{logs: &lockedBuffer{}, done: make(chan error, 1)}
	srv.cmd = exec.Command(binary, append([]string{"serve"}, args...)...)
	srv.cmd.Dir, srv.cmd.Env = s.dir, s.environ()
	srv.cmd.Stderr = srv.logs
	stdout, err := srv.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	s.server = srv
	lines := make(chan []string, 1)
	go func() {
		var got []string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			got = append(got, sc.Text())
			if strings.HasPrefix(sc.Text(), "xfs3: serving S3 on ") {
				lines <- got
			}
		}
		io.Copy(io.Discard, stdout)
		srv.done <- srv.cmd.Wait()
	}()
	select {
	case got := <-lines:
		if last := got[len(got)-1]; last != "xfs3: serving S3 on http://"+s.addr {
			t.Errorf("%s: the server says %q, not that it serves on %s", where, last, s.addr)
		}
		s.volume = s.abs(filepath.Join("xfs3-data", "volume.xfs"))
		if v, ok := s.env["XFS3_VOLUME"]; ok {
			s.volume = s.abs(v)
		}
		return strings.Join(got, "\n") + "\n"
	case err := <-srv.done:
		s.server = nil
		t.Errorf("%s: the server exited before serving: %v\n%s", where, err, srv.logs.tail(4<<10))
	case <-time.After(60 * time.Second):
		t.Errorf("%s: the server did not serve within 60 s\n%s", where, srv.logs.tail(4<<10))
	}
	return ""
}

// stopServer stops the running server, if any, as Ctrl-C does, and
// requires a clean close.
func (s *readmeSession) stopServer(where string) {
	srv := s.server
	if srv == nil {
		return
	}
	s.server = nil
	s.t.Logf("%s: first stopping the server (Ctrl-C)", where)
	srv.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-srv.done:
		if err != nil {
			s.t.Errorf("%s: the server exited with %v after SIGINT\n%s", where, err, srv.logs.tail(4<<10))
		}
	case <-time.After(60 * time.Second):
		srv.kill()
		s.t.Errorf("%s: the server did not stop within 60 s of SIGINT", where)
		return
	}
	logs := srv.logs.String()
	if !strings.Contains(logs, "volume closed cleanly") {
		s.t.Errorf("%s: no clean close in the server's log:\n%s", where, srv.logs.tail(4<<10))
	}
	if strings.Contains(logs, "InternalError") {
		s.t.Errorf("%s: the server answered InternalError:\n%s", where, srv.logs.tail(8<<10))
	}
}

// kill ends the server at once (the test's cleanup, after a failure).
func (srv *readmeServer) kill() {
	if srv.cmd.Process.Signal(syscall.SIGKILL) == nil {
		select {
		case <-srv.done:
		case <-time.After(10 * time.Second):
		}
	}
}

// finish stops the server the README left running and checks the volume.
func (s *readmeSession) finish() {
	s.stopServer("end of the README")
	if s.volume != "" && !s.t.Failed() && oracle.Optional(s.t, "the volume is not checked at the end", oracle.ToolRepair) {
		oracle.Repair(s.t, s.volume)
	}
}

// shellWords splits a command line into words as a POSIX shell would for
// the subset the README may use: blanks separate words, single quotes
// keep everything, double quotes keep everything but $NAME, a word
// starting with # starts a comment, and $NAME or ${NAME} is replaced from
// env (an unset name is an error). Anything else a shell would treat
// specially (pipes, redirections, ;, &, backslashes, command
// substitution, globs, ~) is an error.
func shellWords(line string, env map[string]string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	expand := func(rest string) (string, int, error) { // rest starts after '$'
		name, n := "", 0
		if strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return "", 0, errors.New("an unclosed ${")
			}
			name, n = rest[1:end], end+1
		} else {
			for n < len(rest) && (rest[n] == '_' || 'A' <= rest[n] && rest[n] <= 'Z' || 'a' <= rest[n] && rest[n] <= 'z' || n > 0 && '0' <= rest[n] && rest[n] <= '9') {
				n++
			}
			name = rest[:n]
		}
		if name == "" {
			return "", 0, errors.New("a $ the test does not expand")
		}
		v, ok := env[name]
		if !ok {
			return "", 0, fmt.Errorf("$%s, which no export before it sets", name)
		}
		return v, n, nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			i = len(line)
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("an unclosed single quote")
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				switch line[j] {
				case '$':
					v, n, err := expand(line[j+1:])
					if err != nil {
						return nil, err
					}
					cur.WriteString(v)
					j += n
				case '\\', '`':
					return nil, fmt.Errorf("%q inside double quotes", line[j])
				default:
					cur.WriteByte(line[j])
				}
			}
			if j == len(line) {
				return nil, errors.New("an unclosed double quote")
			}
			i = j
			inWord = true
		case c == '$':
			v, n, err := expand(line[i+1:])
			if err != nil {
				return nil, err
			}
			cur.WriteString(v)
			i += n
			inWord = true
		case strings.IndexByte("|&;<>()`\\*?[", c) >= 0 || c == '~' && !inWord:
			return nil, fmt.Errorf("shell syntax %q: keep README commands to one plain command a line", c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("no command")
	}
	return words, nil
}

// matchShownOutput compares a command's output with what the README
// shows: line by line, runs of blanks equal to one, "…" in a line
// matching any text and a line of only "…" any number of lines; blank
// lines at either end do not count.
func matchShownOutput(want, got string) error {
	w, g := outputLines(want), outputLines(got)
	pats := make([]*regexp.Regexp, len(w))
	for i, l := range w {
		if l == "…" {
			continue
		}
		parts := strings.Split(l, "…")
		for j := range parts {
			parts[j] = regexp.QuoteMeta(parts[j])
		}
		pats[i] = regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
	}
	// match reports whether w[i:] matches g[j:]; best is the furthest
	// README line matched, for the message.
	best := 0
	var match func(i, j int) bool
	match = func(i, j int) bool {
		best = max(best, i)
		switch {
		case i == len(w):
			return j == len(g)
		case pats[i] == nil:
			for k := j; k <= len(g); k++ {
				if match(i+1, k) {
					return true
				}
			}
			return false
		case j == len(g):
			return false
		}
		return pats[i].MatchString(g[j]) && match(i+1, j+1)
	}
	if match(0, 0) {
		return nil
	}
	if best < len(w) {
		return fmt.Errorf("no output line matches the README's %q (or a line before it)", w[best])
	}
	return errors.New("the output has lines past those the README shows")
}

// outputLines splits text into lines with runs of blanks made one and
// blank lines at either end dropped.
func outputLines(text string) []string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// TestReadmeHelpers checks the parts of TestReadmeCommands that decide
// what runs and what passes, without running anything.
func TestReadmeHelpers(t *testing.T) {
	env := map[string]string{"KEY": "demo-access", "EMPTY": ""}
	for _, c := range []struct {
		line string
		want []string
	}{
		{"aws s3 ls  s3://photos/ # a comment", []string{"aws", "s3", "ls", "s3://photos/"}},
		{"export A=$KEY B=${KEY}x C=\"$KEY y\" D='$KEY'", []string{"export", "A=demo-access", "B=demo-accessx", "C=demo-access y", "D=$KEY"}},
		{"x --range bytes=0-99 a:b/c", []string{"x", "--range", "bytes=0-99", "a:b/c"}},
		{`x "" y`, []string{"x", "", "y"}},
	} {
		got, err := shellWords(c.line, env)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("shellWords(%q) = %q, %v; want %q", c.line, got, err, c.want)
		}
	}
	for _, bad := range []string{"a | b", "a && b", "a > f", "a; b", "echo $(x)", "ls *.jpg", "cd ~", "echo $UNSET", "a \\", "echo 'x"} {
		if got, err := shellWords(bad, env); err == nil {
			t.Errorf("shellWords(%q) = %q, want an error", bad, got)
		}
	}
	table := "A  B   C\nx  1   …\n"
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{table, "A B C\nx 1 whatever\n\n", true},
		{table, "A B C\ny 1 2\n", false},
		{"h\n…\nz\n", "h\nz\n", true},
		{"h\n…\nz\n", "h\na\nb\nz\n", true},
		{"h\n…\nz\n", "h\na\n", false},
		{"h\n", "h\nmore\n", false},
		{"v=\"…\"\n", "v=\"0123abc\"\n", true},
	} {
		if err := matchShownOutput(c.want, c.got); (err == nil) != c.ok {
			t.Errorf("matchShownOutput(%q, %q) = %v, want ok %v", c.want, c.got, err, c.ok)
		}
	}
	if parseGoSnippet("x, err := f()\nfor range x {\n}") != nil || parseGoSnippet("x := (") == nil {
		t.Error("parseGoSnippet does not tell Go statements from broken ones")
	}
	blocks, err := readmeBlocks(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 {
		t.Fatal("README.md has no code blocks")
	}
}
