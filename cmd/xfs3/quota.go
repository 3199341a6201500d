package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/xfs3/xfs3/config"
	"github.com/xfs3/xfs3/s3api/admin"
)

// Bucket quotas have two command-line faces with the same verbs, flags
// and output: "xfs3 quota" drives a running server through its admin API,
// "xfs3 vol quota" works on a stopped volume. Both reach package admin,
// which holds the documents and rules the server applies too; this file
// holds what the two commands share: the verbs, their flags, parsing and
// printing.

// quotaFace is where the quota verbs act.
type quotaFace interface {
	// report answers every bucket (bucket "") or the one named.
	report(bucket string) (admin.QuotaReport, error)
	setLimits(bucket string, l admin.Limits) (admin.BucketQuota, error)
	setGrace(g admin.Grace) (admin.Grace, error)
	close() error
}

// quotaTarget is one of the two commands: its name, usage, its own flags
// and positional arguments (VOLUME), and how it opens its face.
type quotaTarget struct {
	name  string // "quota" or "vol quota"
	usage string
	// flags registers the target's own flags on a verb's flag set.
	flags func(fs *flag.FlagSet)
	// open takes the target's leading positional arguments and returns
	// the face (read-only unless write) and the arguments left.
	open func(pos []string, write bool) (quotaFace, []string, error)
}

// quotaVerbs are the verbs of both commands.
var quotaVerbs = map[string]func(t quotaTarget, args []string, e *env) error{
	"ls":    quotaLs,
	"get":   quotaGet,
	"set":   quotaSet,
	"clear": quotaClear,
}

// runQuotaTarget dispatches "xfs3 quota VERB ..." or "xfs3 vol quota VERB ...".
func runQuotaTarget(t quotaTarget, args []string, e *env) int {
	verb, rest := "", args
	if len(args) > 0 {
		verb, rest = quotaVerb(t, args)
	}
	switch verb {
	case "":
		fmt.Fprintf(e.stderr, "xfs3: %s: missing command\n\n%s", t.name, t.usage)
		return exitUsage
	case "-h", "-help", "--help", "help":
		fmt.Fprint(e.stdout, t.usage)
		return exitOK
	}
	run, ok := quotaVerbs[verb]
	if !ok {
		fmt.Fprintf(e.stderr, "xfs3: %s: unknown command %q\n\n%s", t.name, verb, t.usage)
		return exitUsage
	}
	return finish(run(t, rest, e), t.name+" "+verb, t.usage, e)
}

// quotaVerb finds the verb among args, which may follow flags ("xfs3
// quota --endpoint URL ls"), and returns it and the other arguments.
func quotaVerb(t quotaTarget, args []string) (string, []string) {
	if isHelp(args[0]) {
		return args[0], args[1:]
	}
	fs := newFlags(t.name) // every flag of every verb, to tell values from verbs
	t.flags(fs)
	new(quotaOutput).register(fs)
	new(limitFlags).register(fs)
	return splitVerb(fs, args)
}

// isHelp reports whether arg asks for a command's usage.
func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// splitVerb returns the first argument that is neither a flag of fs nor
// a flag's value, and the others: the verb of a command whose flags may
// come before it ("xfs3 quota --endpoint URL ls").
func splitVerb(fs *flag.FlagSet, args []string) (string, []string) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") && !isFlagValue(fs, args[:i]) {
			return a, append(append([]string{}, args[:i]...), args[i+1:]...)
		}
	}
	return "", args
}

// quotaOutput holds the output flags of ls, get, set and clear.
type quotaOutput struct {
	exact, json bool
}

func (o *quotaOutput) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.exact, "bytes", false, "exact byte counts")
	fs.BoolVar(&o.json, "json", false, "print the JSON document")
}

// parseVerb parses a verb's flags (the target's and its own), opens the
// face with the target's positional arguments, and checks that the verb
// has min to max of its own (shape names them for the usage error).
func parseVerb(t quotaTarget, fs *flag.FlagSet, args []string, write bool, min, max int, shape string) (quotaFace, []string, error) {
	t.flags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, nil, err
	}
	face, rest, err := t.open(pos, write)
	if err != nil {
		return nil, nil, err
	}
	if len(rest) < min || len(rest) > max {
		face.close()
		return nil, nil, usagef("want %s, got %s", shape, nargs(len(rest)))
	}
	return face, rest, nil
}

// withFace runs fn and closes the face; the first error wins.
func withFace(face quotaFace, fn func() error) error {
	err := fn()
	if cerr := face.close(); err == nil {
		err = cerr
	}
	return err
}

func quotaLs(t quotaTarget, args []string, e *env) error  { return quotaShow(t, "ls", args, e) }
func quotaGet(t quotaTarget, args []string, e *env) error { return quotaShow(t, "get", args, e) }

// quotaShow is ls (every bucket) and get (the one named).
func quotaShow(t quotaTarget, verb string, args []string, e *env) error {
	var out quotaOutput
	fs := newFlags(t.name + " " + verb)
	out.register(fs)
	n, shape := 0, "no BUCKET (get shows one)"
	if verb == "get" {
		n, shape = 1, "BUCKET"
	}
	face, pos, err := parseVerb(t, fs, args, false, n, n, shape)
	if err != nil {
		return err
	}
	return withFace(face, func() error {
		bucket := ""
		if n == 1 {
			bucket = pos[0]
		}
		r, err := face.report(bucket)
		if err != nil {
			return err
		}
		return out.report(e, r)
	})
}

// limitFlags are the flags of set: the four limits and the two grace
// periods, kept as written and parsed once the command line is read.
type limitFlags struct {
	fs                                             *flag.FlagSet
	hardBytes, softBytes, hardObjects, softObjects string
	bytesGrace, objectsGrace                       string
}

func (f *limitFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.hardBytes, "hard-bytes", "", "hard byte limit")
	fs.StringVar(&f.softBytes, "soft-bytes", "", "soft byte limit")
	fs.StringVar(&f.hardObjects, "hard-objects", "", "hard object limit")
	fs.StringVar(&f.softObjects, "soft-objects", "", "soft object limit")
	fs.StringVar(&f.bytesGrace, "bytes-grace", "", "grace period of soft byte limits")
	fs.StringVar(&f.objectsGrace, "objects-grace", "", "grace period of soft object limits")
}

// parse returns the limits and the grace periods given (nil: none).
func (f *limitFlags) parse() (*admin.Limits, *admin.Grace, error) {
	var l admin.Limits
	var g admin.Grace
	var err error
	grace := false
	f.fs.Visit(func(fl *flag.Flag) {
		if err != nil {
			return
		}
		v := fl.Value.String()
		switch fl.Name {
		case "hard-bytes":
			l.HardBytes, err = parseLimitBytes(v)
		case "soft-bytes":
			l.SoftBytes, err = parseLimitBytes(v)
		case "hard-objects":
			l.HardObjects, err = parseLimitCount(v)
		case "soft-objects":
			l.SoftObjects, err = parseLimitCount(v)
		case "bytes-grace":
			g.BytesSeconds, err = parseGrace(v)
			grace = true
		case "objects-grace":
			g.ObjectsSeconds, err = parseGrace(v)
			grace = true
		}
		if err != nil {
			err = usagef("--%s: %v", fl.Name, err)
		}
	})
	var lp *admin.Limits
	if l.HardBytes != nil || l.SoftBytes != nil || l.HardObjects != nil || l.SoftObjects != nil {
		lp = &l
	}
	var gp *admin.Grace
	if grace {
		gp = &g
	}
	return lp, gp, err
}

// parseLimitBytes parses a byte limit: a size as the server's --size
// takes it (16G, 512M, 4096), 0 for none.
func parseLimitBytes(s string) (*uint64, error) {
	n, err := config.ParseSize(s)
	if err != nil {
		return nil, err
	}
	if n > admin.MaxLimitBytes {
		return nil, fmt.Errorf("%s is above the largest limit, 1E", s)
	}
	u := uint64(n)
	return &u, nil
}

// parseLimitCount parses an object limit, 0 for none.
func parseLimitCount(s string) (*uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%q is not a number of objects", s)
	}
	return &n, nil
}

func quotaSet(t quotaTarget, args []string, e *env) error {
	var out quotaOutput
	var lf limitFlags
	fs := newFlags(t.name + " set")
	out.register(fs)
	lf.register(fs)
	face, pos, err := parseVerb(t, fs, args, true, 0, 1, "[BUCKET]")
	if err != nil {
		return err
	}
	return withFace(face, func() error {
		l, g, err := lf.parse()
		switch {
		case err != nil:
			return err
		case l != nil && len(pos) == 0:
			return usagef("limits need a BUCKET")
		case l == nil && g == nil:
			return usagef("nothing to set: give limits (--hard-bytes, --soft-bytes, --hard-objects, --soft-objects) or grace periods (--bytes-grace, --objects-grace)")
		case len(pos) == 1 && l == nil:
			return usagef("no limit to set for %s (grace periods are the volume's: give them without BUCKET)", pos[0])
		}
		var q *admin.BucketQuota
		if l != nil {
			got, err := face.setLimits(pos[0], *l)
			if err != nil {
				return err
			}
			q = &got
		}
		var grace *admin.Grace
		if g != nil {
			got, err := face.setGrace(*g)
			if err != nil {
				return err
			}
			grace = &got
		}
		return out.changed(e, q, grace)
	})
}

func quotaClear(t quotaTarget, args []string, e *env) error {
	var out quotaOutput
	fs := newFlags(t.name + " clear")
	out.register(fs)
	face, pos, err := parseVerb(t, fs, args, true, 1, 1, "BUCKET")
	if err != nil {
		return err
	}
	return withFace(face, func() error {
		var zero uint64
		q, err := face.setLimits(pos[0], admin.Limits{HardBytes: &zero, SoftBytes: &zero, HardObjects: &zero, SoftObjects: &zero})
		if err != nil {
			return err
		}
		return out.changed(e, &q, nil)
	})
}

// report prints a report: JSON, or a table and the grace periods.
func (o quotaOutput) report(e *env, r admin.QuotaReport) error {
	if o.json {
		return printJSON(e, r)
	}
	printQuotaTable(e.stdout, r.Buckets, o.exact)
	fmt.Fprintf(e.stdout, "grace periods: bytes %s, objects %s\n", formatGrace(r.BytesSeconds), formatGrace(r.ObjectsSeconds))
	return nil
}

// changed prints what set or clear left: the bucket's entry, the grace
// periods, or both.
func (o quotaOutput) changed(e *env, q *admin.BucketQuota, g *admin.Grace) error {
	if o.json {
		switch {
		case q != nil && g != nil:
			return printJSON(e, admin.QuotaReport{Grace: *g, Buckets: []admin.BucketQuota{*q}})
		case q != nil:
			return printJSON(e, q)
		}
		return printJSON(e, g)
	}
	if q != nil {
		printQuotaTable(e.stdout, []admin.BucketQuota{*q}, o.exact)
	}
	if g != nil {
		fmt.Fprintf(e.stdout, "grace periods: bytes %s, objects %s\n", formatGrace(g.BytesSeconds), formatGrace(g.ObjectsSeconds))
	}
	return nil
}

func printJSON(e *env, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	e.stdout.Write(append(b, '\n'))
	return nil
}
