package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/xfs3/xfs3/store"
)

const scrubUsage = `Usage: xfs3 scrub [--json] VOLUME

Check a stopped volume (one writer at a time: not while a server runs):
its metadata with the engine's verifiers (AG headers, free-space, inode
and refcount btrees, every inode, its extent maps, directory and xattr
blocks), then every object version, read whole and checked against its
ETag and stored part and full-object checksums, as a server does every
--scrub-interval ('xfs3 serve -h') or when asked (POST
/minio/admin/v3/xfs3/scrub). Progress goes to standard error, the
counters and what was found to standard output. Objects found rotten are
remembered: GET of them fails (XFS3ObjectCorrupt) until they are
overwritten or deleted. The exit status is 1 when damage was found.

  --json          one JSON document instead of text
Interrupting (Ctrl-C) stops after the current batch; the next pass goes
on from there.
`

// scrubReport is what 'xfs3 scrub' prints.
type scrubReport struct {
	Counts  store.ScrubCounts     `json:"counts"`
	Batches int64                 `json:"batches"`
	Seconds float64               `json:"seconds"`
	Sick    []store.SickStructure `json:"sick"`
	Rotten  []store.RottenObject  `json:"rotten"`
}

func runScrub(args []string, e *env) int {
	for _, a := range args {
		if isHelp(a) {
			fmt.Fprint(e.stdout, scrubUsage)
			return exitOK
		}
	}
	return finish(scrubCommand(args, e), "scrub", scrubUsage, e)
}

// errDamageFound: the pass ran and found damage (exit status 1).
var errDamageFound = errors.New("damage found")

func scrubCommand(args []string, e *env) error {
	var asJSON bool
	fs := newFlags("scrub")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want VOLUME, got %s", nargs(len(pos)))
	}
	path := pos[0]
	st, err := store.OpenWith(path, store.Options{})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r, rep, err := st.Scrub(), scrubReport{}, error(nil)
	started, lastNote := time.Now(), time.Now()
	cursor, err := r.LoadCursor() // a pass a server left half done goes on
	for err == nil {
		var next string
		var c store.ScrubCounts
		next, c, err = r.ScrubBatch(ctx, cursor)
		rep.Counts.Add(c)
		rep.Batches++
		if err == nil {
			err = r.SaveCursor(next)
		}
		if next == "" || err != nil {
			break
		}
		cursor = next
		if time.Since(lastNote) > time.Second {
			lastNote = time.Now()
			n := rep.Counts
			fmt.Fprintf(e.stderr, "scrub: %d inodes, %d metadata blocks, %d objects (%s) checked\n", n.Inodes, n.Blocks, n.Objects, humanSize(uint64(n.Bytes)))
		}
	}
	rep.Seconds = time.Since(started).Seconds()
	if err == nil {
		rep.Rotten, err = r.Rotten()
	}
	rep.Sick = st.Health().Sick
	if cerr := st.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: interrupted; the next pass goes on where this one stopped", path)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	if perr := printJSONOrText(e, rep, asJSON, func() { printScrubText(e, rep) }); perr != nil {
		return perr
	}
	if rep.Counts.Damaged() || len(rep.Sick) > 0 || len(rep.Rotten) > 0 {
		return fmt.Errorf("%s: %w: %d sick structures, %d rotten objects (docs/operations.md, Scrub)", path, errDamageFound, len(rep.Sick), len(rep.Rotten))
	}
	return nil
}

func printScrubText(e *env, rep scrubReport) {
	c := rep.Counts
	fmt.Fprintf(e.stdout, "scrub: %d AG header sectors, %d metadata blocks, %d inodes, %d objects (%s) checked in %d batches, %.1fs\n",
		c.AGHeaders, c.Blocks, c.Inodes, c.Objects, humanSize(uint64(c.Bytes)), rep.Batches, rep.Seconds)
	if c.Errors > 0 {
		fmt.Fprintf(e.stdout, "%d objects could not be read (their metadata is damaged)\n", c.Errors)
	}
	for _, s := range rep.Sick {
		fmt.Fprintf(e.stdout, "sick: %v: %s at %s: %s\n", s.SickStructure, s.Structure, s.Where, s.Reason)
	}
	for _, o := range rep.Rotten {
		fmt.Fprintf(e.stdout, "rotten: bucket %q key %q version %q: %s\n", o.Bucket, o.Key, o.VersionID, o.Reason)
	}
	if len(rep.Sick) == 0 && len(rep.Rotten) == 0 {
		fmt.Fprintln(e.stdout, "no damage found")
	}
}
