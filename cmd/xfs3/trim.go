package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/xfs3/xfs3/config"
	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/s3api/admin"
)

const trimUsage = `Usage: xfs3 trim [--offset SIZE] [--length SIZE] [--minlen SIZE] VOLUME
       xfs3 trim --endpoint URL [--offset ...] [--status | --cancel]

Give the free space of a volume back to the storage under it: holes are
punched in a volume file (du shrinks), a block device is sent discards.
With VOLUME it works on a stopped volume (one writer at a time: not while a
server runs); with --endpoint it drives a running server's pass through
its admin API (POST, GET, DELETE /minio/admin/v3/xfs3/trim), which also
trims by itself every --trim-interval ('xfs3 serve -h').

Range (bytes of the volume, with an optional K, M, G, T suffix):
  --offset SIZE   where to start (default 0)
  --length SIZE   how much (default 0: to the end)
  --minlen SIZE   skip free extents shorter than this
Output: on a terminal, the progress (AG, bytes examined and discarded,
rate, ETA) on standard error; at the end, what the pass did.
  --json          the admin API's pass document instead (docs/operations.md)
Server:
  --endpoint URL  the server; --config FILE and --volume PATH find its
                  credentials as 'xfs3 quota' does ('xfs3 quota -h')
  --status        show the pass under way, the last one and the counters
  --cancel        cancel the pass under way
Interrupting (Ctrl-C) a pass on a stopped volume stops it after its
current batch and closes the volume cleanly.
`

type trimFlags struct {
	offset, length, minlen       string
	json, status, cancel         bool
	endpoint, configFile, volume string
}

func runTrim(args []string, e *env) int {
	for _, a := range args {
		if isHelp(a) {
			fmt.Fprint(e.stdout, trimUsage)
			return exitOK
		}
	}
	return finish(trim(args, e), "trim", trimUsage, e)
}

func trim(args []string, e *env) error {
	var f trimFlags
	fs := newFlags("trim")
	fs.StringVar(&f.offset, "offset", "0", "")
	fs.StringVar(&f.length, "length", "0", "")
	fs.StringVar(&f.minlen, "minlen", "0", "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.BoolVar(&f.status, "status", false, "")
	fs.BoolVar(&f.cancel, "cancel", false, "")
	fs.StringVar(&f.endpoint, "endpoint", "", "")
	fs.StringVar(&f.configFile, "config", "", "")
	fs.StringVar(&f.volume, "volume", "", "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	req, err := f.request()
	if err != nil {
		return err
	}
	if f.endpoint != "" {
		if len(pos) != 0 {
			return usagef("with --endpoint, no VOLUME (got %s)", nargs(len(pos)))
		}
		return trimServer(f, req, e)
	}
	if f.status || f.cancel {
		return usagef("--status and --cancel need --endpoint")
	}
	if len(pos) != 1 {
		return usagef("want VOLUME, got %s", nargs(len(pos)))
	}
	return trimVolume(pos[0], f, req, e)
}

func (f trimFlags) request() (admin.TrimRequest, error) {
	var r admin.TrimRequest
	for _, s := range []struct {
		name, text string
		to         *int64
	}{{"offset", f.offset, &r.Offset}, {"length", f.length, &r.Length}, {"minlen", f.minlen, &r.MinLen}} {
		n, err := config.ParseSize(s.text)
		if err != nil {
			return r, usagef("--%s: %v", s.name, err)
		}
		*s.to = n
	}
	return r, nil
}

// trimVolume runs a pass on a stopped volume, through the scheduler the
// server runs (with no periodic passes).
func trimVolume(path string, f trimFlags, req admin.TrimRequest, e *env) error {
	v, err := openVolumeRW(path)
	if err != nil {
		return err
	}
	t := gc.StartTrimmer(v, gc.TrimOptions{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bar := newTrimProgress(e.stderr)
	p, err := t.Run(ctx, gc.TrimRequest{Offset: req.Offset, Length: req.Length, MinLen: req.MinLen}, bar.show)
	bar.done()
	t.Close()
	if cerr := v.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%s: close: %w", path, cerr)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s: %w", path, err)
	}
	return printTrimPass(e, admin.TrimPassOf(p), f.json)
}

// trimServer starts, follows or cancels a server's pass.
func trimServer(f trimFlags, req admin.TrimRequest, e *env) error {
	c, err := adminClient(f.endpoint, f.configFile, f.volume)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var st admin.TrimStatus
	switch {
	case f.status:
		st, err = c.TrimStatus(ctx)
	case f.cancel:
		st, err = c.CancelTrim(ctx)
	default:
		return followServerPass(ctx, c, req, f, e)
	}
	if err != nil {
		return err
	}
	return printJSONOrText(e, st, f.json, func() {
		if st.Current != nil {
			fmt.Fprint(e.stdout, "current: ")
			printTrimText(e.stdout, *st.Current)
		}
		if st.Last != nil {
			fmt.Fprint(e.stdout, "last: ")
			printTrimText(e.stdout, *st.Last)
		}
		if st.LastOnDemand != nil {
			fmt.Fprint(e.stdout, "last on demand: ")
			printTrimText(e.stdout, *st.LastOnDemand)
		}
		c := st.Counters
		fmt.Fprintf(e.stdout, "passes %d (on demand %d, canceled %d, failed %d); discarded %s in %d extents; lock hold max %s; backlog %s; interval %gs\n",
			c.Passes, c.OnDemand, c.Canceled, c.Failed, humanSize(uint64(c.DiscardedBytes)), c.DiscardedExtents,
			time.Duration(c.LockHoldMaxUs)*time.Microsecond, humanSize(uint64(max(c.BacklogBytes, 0))), c.IntervalSeconds)
	})
}

// followServerPass starts a pass and polls it to its end; an interrupt
// cancels it on the server.
func followServerPass(ctx context.Context, c *admin.Client, req admin.TrimRequest, f trimFlags, e *env) error {
	st, err := c.Trim(ctx, req)
	if err != nil {
		return err
	}
	// The pass is the current one unless it already ended: then it is the
	// last on demand (Last may already be a scheduled pass after it).
	var id uint64
	switch {
	case st.Current != nil && !st.Current.Scheduled:
		id = st.Current.ID
	case st.LastOnDemand != nil:
		id = st.LastOnDemand.ID
	default:
		return errors.New("the server shows no pass on demand after starting one")
	}
	bar := newTrimProgress(e.stderr)
	for st.Current != nil && st.Current.ID == id {
		bar.showDoc(*st.Current)
		select {
		case <-ctx.Done():
			st, err = c.CancelTrim(context.Background())
			bar.done()
			if err != nil {
				return err
			}
			return fmt.Errorf("interrupted: pass %d cancelled", id)
		case <-time.After(200 * time.Millisecond):
		}
		if st, err = c.TrimStatus(ctx); err != nil && ctx.Err() == nil {
			return err
		}
	}
	bar.done()
	if st.LastOnDemand == nil || st.LastOnDemand.ID != id {
		return fmt.Errorf("pass %d is no longer shown: another pass on demand ended after it", id)
	}
	return printTrimPass(e, *st.LastOnDemand, f.json)
}

func printJSONOrText(e *env, v any, asJSON bool, text func()) error {
	if asJSON {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
		return nil
	}
	text()
	return nil
}

func printTrimPass(e *env, p admin.TrimPass, asJSON bool) error {
	return printJSONOrText(e, p, asJSON, func() { printTrimText(e.stdout, p) })
}

// printTrimText prints a pass on one line.
func printTrimText(w io.Writer, p admin.TrimPass) {
	state := "done"
	switch {
	case p.Running:
		state = "running"
	case p.Canceled:
		state = "canceled"
	case p.Unsupported:
		state = "unsupported: the storage cannot discard"
	case p.Error != "":
		state = "failed: " + p.Error
	}
	fmt.Fprintf(w, "trim pass %d %s: examined %s in %d extents, discarded %s in %d extents (%d requests, %d errors), %d batches, lock hold max %s p99 %s, %s, next offset %d\n",
		p.ID, state, humanSize(uint64(p.ExaminedBytes)), p.ExaminedExtents, humanSize(uint64(p.DiscardedBytes)), p.DiscardedExtents,
		p.Requests, p.Errors, p.Batches, time.Duration(p.LockHoldMaxUs)*time.Microsecond, time.Duration(p.LockHoldP99Us)*time.Microsecond,
		(time.Duration(p.ElapsedUs) * time.Microsecond).Round(time.Millisecond), p.Next)
}

// trimProgress redraws one progress line on a terminal, at most every
// 200 ms; elsewhere it prints nothing.
type trimProgress struct {
	w     io.Writer
	on    bool
	last  time.Time
	drawn bool
}

func newTrimProgress(w io.Writer) *trimProgress { return &trimProgress{w: w, on: isTerminal(w)} }

func (b *trimProgress) show(p gc.TrimPass) { b.showDoc(admin.TrimPassOf(p)) }

func (b *trimProgress) showDoc(p admin.TrimPass) {
	if !b.on || time.Since(b.last) < 200*time.Millisecond {
		return
	}
	b.last = time.Now()
	b.drawn = true
	fmt.Fprintf(b.w, "\r\033[KAG %d  examined %s  discarded %s  %s", p.AG, humanSize(uint64(p.ExaminedBytes)),
		humanSize(uint64(p.DiscardedBytes)), rateETA(p))
}

// rateETA is the walk's rate over the range and the time left at it.
func rateETA(p admin.TrimPass) string {
	elapsed := time.Duration(p.ElapsedUs) * time.Microsecond
	walked := p.Offset - p.From
	if elapsed <= 0 || walked <= 0 {
		return ""
	}
	rate := float64(walked) / elapsed.Seconds()
	left := time.Duration(float64(p.To-p.Offset) / rate * float64(time.Second))
	return fmt.Sprintf("%s/s  ETA %s", humanSize(uint64(rate)), left.Round(time.Second))
}

func (b *trimProgress) done() {
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
