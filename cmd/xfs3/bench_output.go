package main

import (
	"encoding/json"
	"fmt"
	"time"
)

// benchReport is the --json document; the tables print the same numbers.
type benchReport struct {
	Endpoint     string     `json:"endpoint"`
	Bucket       string     `json:"bucket"`
	PhaseSeconds float64    `json:"phase_s,omitempty"`   // --duration
	PhaseOps     int64      `json:"phase_ops,omitempty"` // --ops
	Phases       []phaseRow `json:"phases"`
	Big          []bigRow   `json:"big,omitempty"`
	Raw          *rawResult `json:"raw,omitempty"`
}

// phaseRow is one line of the table.
type phaseRow struct {
	Op          string  `json:"op"`
	Size        int64   `json:"size"`
	Concurrency int     `json:"concurrency"`
	Ops         int64   `json:"ops"` // successful
	Bytes       int64   `json:"bytes"`
	Seconds     float64 `json:"seconds"`
	OpsPerSec   float64 `json:"ops_per_s"`
	MBPerSec    float64 `json:"mb_per_s"` // 10^6 bytes
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	Maxms       float64 `json:"max_ms"`
	Errors      int64   `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
	phaseCPURow
}

// phaseCPURow is the CPU a phase cost, each field present only when
// measured: the server's and this process's under --server-pid, the
// split under --server-profile once a profile finished in the phase.
// Per-operation values are in microseconds over the successful
// operations; the shares sum to 1.
type phaseCPURow struct {
	ServerCPUSeconds  *float64 `json:"server_cpu_s,omitempty"`
	ServerCPUUsPerOp  *float64 `json:"server_cpu_us_per_op,omitempty"`
	GenCPUSeconds     *float64 `json:"gen_cpu_s,omitempty"`
	GenCPUUsPerOp     *float64 `json:"gen_cpu_us_per_op,omitempty"`
	ProfiledSeconds   *float64 `json:"profiled_s,omitempty"` // wall time the profiles covered
	StoreShare        *float64 `json:"store_share,omitempty"`
	EdgeShare         *float64 `json:"edge_share,omitempty"`
	RuntimeShare      *float64 `json:"runtime_share,omitempty"` // the collector's and scheduler's own goroutines
	StoreCPUUsPerOp   *float64 `json:"store_cpu_us_per_op,omitempty"`
	EdgeCPUUsPerOp    *float64 `json:"edge_cpu_us_per_op,omitempty"`
	RuntimeCPUUsPerOp *float64 `json:"runtime_cpu_us_per_op,omitempty"`
}

// bigRow is a single-stream PUT or GET beside the raw file's speed.
type bigRow struct {
	phaseRow
	RawMBPerSec float64 `json:"raw_mb_per_s,omitempty"`
	EngineRaw   float64 `json:"engine_raw,omitempty"`
	// ColdVolume says the volume's page cache was dropped before the GET.
	ColdVolume bool `json:"cold_volume,omitempty"`
}

// benchOutput prints rows as phases end (a full run takes minutes), or
// collects them for one JSON document at the end.
type benchOutput struct {
	e      *env
	json   bool
	cpu    bool // srv-µs/op and gen-µs/op columns
	split  bool // edge-µs/op, store-µs/op and rt-µs/op columns
	report benchReport
}

func newBenchOutput(e *env, o benchOptions) *benchOutput {
	out := &benchOutput{e: e, json: o.json, cpu: o.serverPID != 0, split: o.serverProfile != nil}
	out.report.Endpoint = o.endpoint.String()
	if o.ops > 0 {
		out.report.PhaseOps = o.ops
	} else {
		out.report.PhaseSeconds = o.duration.Seconds()
	}
	return out
}

const (
	tableHead = "%-7s %6s %5s %10s %9s %9s %9s %9s %7s"
	cpuHead   = " %10s %10s %11s %8s %10s" // srv, edge, store, runtime, gen
	bigHead   = "%-7s %6s %9s %9s %10s %10s\n"
)

// row prints one line of the phase table: cells are tableHead's, and
// then srv, edge, store and gen, of which those measured are printed.
func (out *benchOutput) row(cells ...any) {
	fmt.Fprintf(out.e.stdout, tableHead, cells[:9]...)
	if out.cpu {
		srv, edge, store, rt, gen := cells[9], cells[10], cells[11], cells[12], cells[13]
		if out.split {
			fmt.Fprintf(out.e.stdout, cpuHead, srv, edge, store, rt, gen)
		} else {
			fmt.Fprintf(out.e.stdout, " %10s %10s", srv, gen)
		}
	}
	fmt.Fprintln(out.e.stdout)
}

func (out *benchOutput) header(bucket string) {
	out.report.Bucket = bucket
	if out.json {
		return
	}
	per := fmt.Sprintf("%v per phase", time.Duration(out.report.PhaseSeconds*float64(time.Second)))
	if out.report.PhaseOps > 0 {
		per = fmt.Sprintf("%d operations per phase", out.report.PhaseOps)
	}
	fmt.Fprintf(out.e.stdout, "xfs3 bench: %s, bucket %s, %s\n\n", out.report.Endpoint, bucket, per)
	out.row("op", "size", "conc", "ops/s", "MB/s", "p50", "p99", "max", "errors", "srv-µs/op", "edge-µs/op", "store-µs/op", "rt-µs/op", "gen-µs/op")
	out.e.stdout.Flush()
}

// phase records a finished phase, prints its row and, on stderr, its
// first error.
func (out *benchOutput) phase(op string, size int64, clients int, st phaseStats) {
	row := newPhaseRow(op, size, clients, st)
	out.report.Phases = append(out.report.Phases, row)
	what := fmt.Sprintf("%s %s c%d", op, sizeLabel(size), clients)
	out.reportErrors(what, st)
	if c := st.cpu; c != nil {
		if c.serverErr != nil {
			fmt.Fprintf(out.e.stderr, "xfs3: bench: %s: server CPU: %v\n", what, c.serverErr)
		}
		if c.profileErr != nil {
			fmt.Fprintf(out.e.stderr, "xfs3: bench: %s: server profile: %v\n", what, c.profileErr)
		}
	}
	if out.json {
		return
	}
	mbps := mbText(row.MBPerSec)
	if row.Bytes == 0 {
		mbps = "-" // HEAD, LIST and DELETE move no payload
	}
	out.row(op, sizeLabel(size), fmt.Sprint(clients), rateText(row.OpsPerSec, row.Ops),
		mbps, latencyText(st, 0.5), latencyText(st, 0.99), latencyText(st, 1), fmt.Sprint(row.Errors),
		usText(row.ServerCPUUsPerOp), usText(row.EdgeCPUUsPerOp), usText(row.StoreCPUUsPerOp), usText(row.RuntimeCPUUsPerOp), usText(row.GenCPUUsPerOp))
	out.e.stdout.Flush()
}

// big records and prints the single-stream rows and the raw file beside
// them. cold is nil when the volume's cache was dropped before the GET.
func (out *benchOutput) big(size int64, put, get phaseStats, cold error, raw *rawResult, rawErr error) {
	rows := []bigRow{{phaseRow: newPhaseRow("PUT", size, 1, put)}, {phaseRow: newPhaseRow("GET", size, 1, get), ColdVolume: cold == nil}}
	out.reportErrors("big PUT "+sizeLabel(size), put)
	out.reportErrors("big GET "+sizeLabel(size), get)
	if rawErr != nil {
		fmt.Fprintf(out.e.stderr, "xfs3: bench: raw file: %v\n", rawErr)
	}
	if raw != nil {
		rows[0].RawMBPerSec = mbPerSec(raw.Size, raw.WriteSeconds)
		rows[1].RawMBPerSec = mbPerSec(raw.Size, raw.ReadSeconds)
		for i := range rows {
			if rows[i].RawMBPerSec > 0 && rows[i].Ops > 0 {
				rows[i].EngineRaw = rows[i].MBPerSec / rows[i].RawMBPerSec
			}
		}
	}
	out.report.Big, out.report.Raw = rows, raw
	if out.json {
		return
	}
	w := out.e.stdout
	fmt.Fprintf(w, "\nsingle stream\n"+bigHead, "op", "size", "seconds", "MB/s", "raw MB/s", "engine/raw")
	for _, r := range rows {
		secs, mbps, rawMB, ratio := "-", "-", "-", "-"
		if r.Ops > 0 {
			secs, mbps = fmt.Sprintf("%.2f", r.Seconds), mbText(r.MBPerSec)
		}
		if r.RawMBPerSec > 0 {
			rawMB = mbText(r.RawMBPerSec)
		}
		if r.EngineRaw > 0 {
			ratio = fmt.Sprintf("%.2f", r.EngineRaw)
		}
		fmt.Fprintf(w, bigHead, r.Op, sizeLabel(size), secs, mbps, rawMB, ratio)
	}
	if raw != nil {
		how := "read back after dropping it from the page cache"
		if !raw.CacheDropped {
			how = "read back from the page cache (it could not be dropped here)"
		}
		fmt.Fprintf(w, "raw: a %s file in %s, buffered writes and fsync, %s\n", sizeLabel(size), raw.Dir, how)
	}
	if cold == nil {
		fmt.Fprintln(w, "GET: the volume file's page cache was dropped first")
	} else {
		fmt.Fprintf(w, "GET: may have been served from the page cache (%v)\n", cold)
	}
	out.e.stdout.Flush()
}

func (out *benchOutput) reportErrors(what string, st phaseStats) {
	if st.errors > 0 {
		fmt.Fprintf(out.e.stderr, "xfs3: bench: %s: %d errors, first: %v\n", what, st.errors, st.firstErr)
	}
}

// footer prints the JSON document, which holds whatever finished.
func (out *benchOutput) footer() {
	if !out.json {
		return
	}
	data, _ := json.MarshalIndent(out.report, "", "  ")
	out.e.stdout.Write(append(data, '\n'))
}

func newPhaseRow(op string, size int64, clients int, st phaseStats) phaseRow {
	secs := st.elapsed.Seconds()
	r := phaseRow{
		Op: op, Size: size, Concurrency: clients, Ops: st.ops, Bytes: st.bytes, Seconds: secs,
		MBPerSec: mbPerSec(st.bytes, secs),
		P50ms:    ms(percentile(st.lat, 0.5)), P99ms: ms(percentile(st.lat, 0.99)), Maxms: ms(percentile(st.lat, 1)),
		Errors: st.errors,
	}
	if secs > 0 {
		r.OpsPerSec = float64(st.ops) / secs
	}
	if st.firstErr != nil {
		r.FirstError = st.firstErr.Error()
	}
	r.phaseCPURow = newPhaseCPURow(st.cpu, st.ops)
	return r
}

// newPhaseCPURow scales what c measured to ops operations; the split's
// shares divide the server's measured time.
func newPhaseCPURow(c *phaseCPU, ops int64) phaseCPURow {
	var r phaseCPURow
	if c == nil {
		return r
	}
	perOp := func(d time.Duration) *float64 {
		if ops == 0 {
			return nil
		}
		return ptr(float64(d) / float64(time.Microsecond) / float64(ops))
	}
	r.GenCPUSeconds, r.GenCPUUsPerOp = ptr(c.generator.Seconds()), perOp(c.generator)
	if c.serverErr != nil {
		return r
	}
	r.ServerCPUSeconds, r.ServerCPUUsPerOp = ptr(c.server.Seconds()), perOp(c.server)
	if c.split.total() <= 0 {
		return r
	}
	store, rt := c.split.storeShare(), c.split.share(c.split.runtime)
	edge := 1 - store - rt
	r.ProfiledSeconds = ptr(c.profiled.Seconds())
	r.StoreShare, r.EdgeShare, r.RuntimeShare = ptr(store), ptr(edge), ptr(rt)
	if r.ServerCPUUsPerOp != nil {
		r.StoreCPUUsPerOp = ptr(*r.ServerCPUUsPerOp * store)
		r.EdgeCPUUsPerOp = ptr(*r.ServerCPUUsPerOp * edge)
		r.RuntimeCPUUsPerOp = ptr(*r.ServerCPUUsPerOp * rt)
	}
	return r
}

func ptr(v float64) *float64 { return &v }

// usText prints microseconds to three significant digits or more, "-"
// when not measured.
func usText(v *float64) string {
	switch {
	case v == nil:
		return "-"
	case *v < 10:
		return fmt.Sprintf("%.2f", *v)
	case *v < 100:
		return fmt.Sprintf("%.1f", *v)
	}
	return fmt.Sprintf("%.0f", *v)
}

func mbPerSec(bytes int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(bytes) / 1e6 / secs
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func rateText(r float64, ops int64) string {
	if ops == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", r)
}

func mbText(v float64) string { return fmt.Sprintf("%.1f", v) }

// latencyText prints three significant digits in a unit that suits.
func latencyText(st phaseStats, p float64) string {
	if len(st.lat) == 0 {
		return "-"
	}
	d := percentile(st.lat, p)
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", ms(d))
	case d < 100*time.Millisecond:
		return fmt.Sprintf("%.1fms", ms(d))
	case d < time.Second:
		return fmt.Sprintf("%.0fms", ms(d))
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}
