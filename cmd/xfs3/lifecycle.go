package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/store"
)

const lifecycleUsage = `Usage: xfs3 lifecycle [--day D] [--json] VOLUME
       xfs3 lifecycle --endpoint URL [--status] [--json]

Apply the buckets' lifecycle rules now: a pass over the buckets with rules
expires what is due (objects, noncurrent versions, delete markers left
alone, abandoned uploads), as a server does by itself every
--lifecycle-interval ('xfs3 serve -h'). With VOLUME it works on a stopped
volume (one writer at a time: not while a server runs), and first
finishes a pass a stopped server left half done; with --endpoint it asks
a running server for a pass (POST /minio/admin/v3/xfs3/lifecycle) and
waits for it to end.

  --day D         the length of a rule's day on a stopped volume
                  (default 24h; the server's is its --lifecycle-day)
  --json          the admin API's documents instead of text
Server:
  --endpoint URL  the server; --config FILE and --volume PATH find its
                  credentials as 'xfs3 quota' does ('xfs3 quota -h')
  --status        show the pass under way, the last one and the totals
Interrupting (Ctrl-C) a pass on a stopped volume stops it after its
current batch; the next pass goes on from there.
`

type lifecycleFlags struct {
	day                          time.Duration
	json, status                 bool
	endpoint, configFile, volume string
}

func runLifecycle(args []string, e *env) int {
	for _, a := range args {
		if isHelp(a) {
			fmt.Fprint(e.stdout, lifecycleUsage)
			return exitOK
		}
	}
	return finish(lifecycleCommand(args, e), "lifecycle", lifecycleUsage, e)
}

func lifecycleCommand(args []string, e *env) error {
	var f lifecycleFlags
	fs := newFlags("lifecycle")
	fs.DurationVar(&f.day, "day", store.DefaultLifecycleDay, "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.BoolVar(&f.status, "status", false, "")
	fs.StringVar(&f.endpoint, "endpoint", "", "")
	fs.StringVar(&f.configFile, "config", "", "")
	fs.StringVar(&f.volume, "volume", "", "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if f.day < time.Second {
		return usagef("--day: %v is shorter than 1s", f.day)
	}
	if f.endpoint != "" {
		if len(pos) != 0 {
			return usagef("with --endpoint, no VOLUME (got %s)", nargs(len(pos)))
		}
		return lifecycleServer(f, e)
	}
	if f.status {
		return usagef("--status needs --endpoint")
	}
	if len(pos) != 1 {
		return usagef("want VOLUME, got %s", nargs(len(pos)))
	}
	return lifecycleVolume(pos[0], f, e)
}

// lifecycleVolume runs passes on a stopped volume until one that started
// from the beginning has ended (a pass a stopped server left half done
// is finished first).
func lifecycleVolume(path string, f lifecycleFlags, e *env) error {
	st, err := store.OpenWith(path, store.Options{LifecycleDay: f.day})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	l := st.Lifecycle()
	var last *store.LifecyclePass
	for last == nil && ctx.Err() == nil {
		if _, err = l.Start(); err != nil {
			break
		}
		for ctx.Err() == nil {
			s := l.Status()
			if s.Current == nil && s.Last != nil && !s.Last.Resumed {
				last = s.Last
				break
			}
			if s.Current == nil && s.Last != nil && s.Last.Resumed {
				break // a resumed pass ended: now one from the start
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if cerr := st.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%s: close: %w", path, cerr)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if last == nil {
		return fmt.Errorf("%s: interrupted; the next pass goes on where this one stopped", path)
	}
	p := admin.LifecyclePassOf(*last, time.Now())
	return printJSONOrText(e, p, f.json, func() { printLifecycleText(e.stdout, p) })
}

// lifecycleServer asks a server for a pass and waits for it, or shows
// its status.
func lifecycleServer(f lifecycleFlags, e *env) error {
	c, err := adminClient(f.endpoint, f.configFile, f.volume)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var st admin.LifecycleStatus
	if f.status {
		st, err = c.LifecycleStatus(ctx)
	} else {
		st, err = followLifecycle(ctx, c)
	}
	if err != nil {
		return err
	}
	return printJSONOrText(e, st, f.json, func() {
		if st.Current != nil {
			fmt.Fprint(e.stdout, "current: ")
			printLifecycleText(e.stdout, *st.Current)
		}
		if st.Last != nil {
			fmt.Fprint(e.stdout, "last: ")
			printLifecycleText(e.stdout, *st.Last)
		}
		t := st.Totals
		fmt.Fprintf(e.stdout, "passes %d (failed %d); expired %d, noncurrent %d, markers %d, uploads %d, kept by object lock %d, freed %s; interval %gs, day %gs\n",
			st.Passes, st.Failed, t.Expired, t.Versions, t.Markers, t.Uploads, t.Locked, humanSize(uint64(t.BytesFreed)),
			st.IntervalSeconds, st.DaySeconds)
	})
}

// followLifecycle asks for a pass and polls until a pass that started
// after the request has ended.
func followLifecycle(ctx context.Context, c *admin.Client) (admin.LifecycleStatus, error) {
	asked := time.Now()
	st, err := c.Lifecycle(ctx)
	for err == nil {
		if st.Current == nil && st.Last != nil && !st.Last.Started.Before(asked.Add(-time.Second)) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("interrupted; the server's pass goes on")
		case <-time.After(200 * time.Millisecond):
		}
		st, err = c.LifecycleStatus(ctx)
	}
	return st, err
}

// printLifecycleText prints a pass on one line.
func printLifecycleText(w io.Writer, p admin.LifecyclePass) {
	state := "done"
	switch {
	case p.Running:
		state = "running"
	case p.Error != "":
		state = "failed: " + p.Error
	}
	c := p.Counts
	fmt.Fprintf(w, "lifecycle pass %d %s: scanned %d, expired %d, noncurrent %d, markers %d, uploads %d, kept by object lock %d, freed %s, errors %d, %d batches, %s\n",
		p.ID, state, c.Scanned, c.Expired, c.Versions, c.Markers, c.Uploads, c.Locked, humanSize(uint64(c.BytesFreed)), c.Errors,
		p.Batches, (time.Duration(p.DurationSeconds * float64(time.Second))).Round(time.Millisecond))
}
