// Command xfs3 is the xfs3 tool: it creates volumes (mkfs), inspects and
// changes them (vol), serves them over S3 (serve), administers a running
// server or a stopped volume (quota, trim, info, metrics-token) and
// measures one (bench). docs/operations.md describes every subcommand.
//
// All logic lives in run, which tests call directly; main only wires it to
// the process.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

const mainUsage = `Usage: xfs3 <command> [arguments]

xfs3 keeps S3 objects in a standard XFS v5 filesystem held in a volume file.

Commands:
  serve   serve a volume over the S3 API ('xfs3 serve -h')
  mkfs    create a volume file ('xfs3 mkfs -h')
  vol     inspect a volume (ls, get, stat, getfattr, df) and change it
          (put, mkdir, rm, mv, ln, setfattr, rmfattr) ('xfs3 vol help')
  quota   bucket quotas of a running server: ls, get, set, clear
          ('xfs3 quota -h'; on a stopped volume: 'xfs3 vol quota')
  user    users and their service accounts of a running server: add, rm,
          enable, disable, ls, info, svcacct ('xfs3 user -h')
  policy  named policies of a running server: create, rm, ls, info,
          attach, detach ('xfs3 policy -h')
  trim    give free space back to the storage under a volume, stopped
          or served ('xfs3 trim -h')
  lifecycle
          apply the buckets' lifecycle rules now, on a stopped volume or
          a running server ('xfs3 lifecycle -h')
  scrub   check a stopped volume's metadata and objects' bytes
          ('xfs3 scrub -h')
  bench   measure a running S3 endpoint ('xfs3 bench -h')
  info    a running server's version, volume, background work and
          buckets, as JSON ('xfs3 info -h')
  metrics-token
          the bearer token that lets Prometheus scrape /minio/metrics/v3
  version print the version, VCS revision and Go version (also --version)
  help    show this text, or 'xfs3 help <command> [subcommand]'

Every command accepts -h (df: --help) to print its usage.
Errors are printed on standard error prefixed "xfs3: ".
Exit status: 0 success, 1 error, 2 usage error.
`

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line args (without the program name) and
// returns the exit status. Standard output is buffered and flushed before
// run returns; nothing is ever left half-written by a panic.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	out := bufio.NewWriterSize(stdout, 64<<10)
	e := &env{stdin: stdin, stdout: out, stderr: stderr}
	defer func() {
		if r := recover(); r != nil {
			// Buffered output is dropped: flushing could panic again.
			fmt.Fprintf(stderr, "xfs3: internal error: %v (this is a bug; please report it)\n", r)
			status = exitError
		}
	}()
	status = dispatch(args, e)
	if err := out.Flush(); err != nil && status == exitOK {
		fmt.Fprintf(stderr, "xfs3: write output: %v\n", err)
		status = exitError
	}
	return status
}

// env carries the process streams to commands.
type env struct {
	stdin  io.Reader
	stdout *bufio.Writer
	stderr io.Writer
}

func dispatch(args []string, e *env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, "xfs3: missing command\n\n", mainUsage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "-h", "-help", "--help":
		fmt.Fprint(e.stdout, mainUsage)
		return exitOK
	case "help":
		return help(rest, e)
	case "mkfs":
		e.stdout.Flush()
		return runMkfs(rest, e.stdout, e.stderr)
	case "vol":
		return runVol(rest, e)
	case "serve":
		return runServe(rest, e)
	case "trim":
		return runTrim(rest, e)
	case "lifecycle":
		return runLifecycle(rest, e)
	case "scrub":
		return runScrub(rest, e)
	case "quota":
		return runQuota(rest, e)
	case "user":
		return runUser(rest, e)
	case "policy":
		return runPolicy(rest, e)
	case "bench":
		return runBench(rest, e)
	case "info":
		return runInfo(rest, e)
	case "metrics-token":
		return runMetricsToken(rest, e)
	case "version", "--version", "-version":
		return runVersion(rest, e)
	}
	fmt.Fprintf(e.stderr, "xfs3: unknown command %q\n\n", cmd)
	fmt.Fprint(e.stderr, mainUsage)
	return exitUsage
}

// help implements "xfs3 help [command [subcommand]]".
func help(args []string, e *env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stdout, mainUsage)
		return exitOK
	}
	switch args[0] {
	case "mkfs":
		e.stdout.Flush()
		return runMkfs([]string{"-h"}, e.stdout, e.stderr)
	case "vol":
		return volHelp(args[1:], e)
	case "serve":
		return runServe([]string{"-h"}, e)
	case "quota":
		return runQuota([]string{"-h"}, e)
	case "user":
		if len(args) > 1 && args[1] == "svcacct" {
			return runUser([]string{"svcacct", "-h"}, e)
		}
		return runUser([]string{"-h"}, e)
	case "policy":
		return runPolicy([]string{"-h"}, e)
	case "trim":
		return runTrim([]string{"-h"}, e)
	case "lifecycle":
		return runLifecycle([]string{"-h"}, e)
	case "scrub":
		return runScrub([]string{"-h"}, e)
	case "bench":
		return runBench([]string{"-h"}, e)
	case "info":
		return runInfo([]string{"-h"}, e)
	case "metrics-token":
		return runMetricsToken([]string{"-h"}, e)
	case "version":
		return runVersion([]string{"-h"}, e)
	case "help":
		fmt.Fprint(e.stdout, mainUsage)
		return exitOK
	}
	fmt.Fprintf(e.stderr, "xfs3: help: unknown command %q\n\n", args[0])
	fmt.Fprint(e.stderr, mainUsage)
	return exitUsage
}

// usageError is a mistake on the command line: exit status 2.
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}

// finish turns a command's result into an exit status, printing errors on
// stderr. name is the command as typed ("vol ls"), usage its usage text.
func finish(err error, name, usage string, e *env) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(e.stdout, usage)
		return exitOK
	}
	if errors.Is(err, errReported) {
		return exitError
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(e.stderr, "xfs3: %s: %s\n", name, ue.msg)
		fmt.Fprintf(e.stderr, "Run 'xfs3 %s -h' for usage.\n", name)
		return exitUsage
	}
	fmt.Fprintf(e.stderr, "xfs3: %s: %v\n", name, err)
	return exitError
}

// newFlags returns a flag set that reports errors to its caller instead of
// printing them or exiting.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args with fs, accepting flags both before and after
// positional arguments ("--" ends the flags), and returns the positional
// arguments in order. A lone "-" is a positional argument.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{msg: err.Error()}
		}
		rest := fs.Args()
		used := len(args) - len(rest)
		if used > 0 && args[used-1] == "--" && !isFlagValue(fs, args[:used-1]) {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// isFlagValue reports whether the argument following before is the value
// of the flag that ends before (a non-boolean flag written without "=").
func isFlagValue(fs *flag.FlagSet, before []string) bool {
	if len(before) == 0 {
		return false
	}
	a := before[len(before)-1]
	if !strings.HasPrefix(a, "-") || a == "-" || a == "--" || strings.Contains(a, "=") {
		return false
	}
	f := fs.Lookup(strings.TrimLeft(a, "-"))
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}
