package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// trimDoc is the status document every trim request answers (s3api/doc.go),
// the fields these tests read.
type trimDoc struct {
	Current *trimPassDoc `json:"current"`
	Last    *trimPassDoc `json:"last"`
	// LastOnDemand stays this test's pass while 1 s periodic passes end.
	LastOnDemand *trimPassDoc `json:"last_on_demand"`
	Counters     struct {
		IntervalSeconds float64 `json:"interval_seconds"`
		Passes          uint64  `json:"passes"`
		OnDemand        uint64  `json:"on_demand"`
		Canceled        uint64  `json:"canceled"`
		DiscardedBytes  int64   `json:"discarded_bytes"`
		Batches         int64   `json:"batches"`
		Errors          int64   `json:"errors"`
		LockHoldMaxUs   int64   `json:"lock_hold_max_us"`
		Unsupported     bool    `json:"unsupported"`
		BacklogBytes    int64   `json:"backlog_bytes"`
	} `json:"counters"`
}

type trimPassDoc struct {
	ID             uint64 `json:"id"`
	Scheduled      bool   `json:"scheduled"`
	Running        bool   `json:"running"`
	Canceled       bool   `json:"canceled"`
	Error          string `json:"error"`
	Offset         int64  `json:"offset"`
	From           int64  `json:"from"`
	To             int64  `json:"to"`
	ExaminedBytes  int64  `json:"examined_bytes"`
	DiscardedBytes int64  `json:"discarded_bytes"`
	Batches        int64  `json:"batches"`
	Errors         int64  `json:"errors"`
	Next           int64  `json:"next"`
}

const pathTrim = "/minio/admin/v3/xfs3/trim"

// trim sends a signed admin request to the trim endpoint and decodes the
// status document of a 200 answer.
func (s *server) trim(t *testing.T, method string, body []byte) (int, trimDoc, []byte) {
	t.Helper()
	code, raw := s.do(t, method, pathTrim, body, nil, "")
	var d trimDoc
	if code == 200 {
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("%s %s: %d, not a status document: %v\n%s", method, pathTrim, code, err, raw)
		}
	}
	return code, d, raw
}

// waitTrim polls GET until done holds of the status, for up to a minute.
func (s *server) waitTrim(t *testing.T, what string, done func(trimDoc) bool) trimDoc {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		code, d, raw := s.trim(t, "GET", nil)
		if code != 200 {
			t.Fatalf("GET %s: %d %s", pathTrim, code, raw)
		}
		if done(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute: %s", what, raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTrimThroughBinary: the real server with a one-second trim interval
// gives the space of deleted objects back to the host by itself (the
// volume file's allocated size drops by at least 99% of the bytes freed,
// measured outside the internal log); passes on demand are started,
// followed and cancelled with signed admin requests and with 'xfs3 trim
// --endpoint'; after it stops, xfs_repair is clean and the kernel reads
// every remaining object as the API does.
func TestTrimThroughBinary(t *testing.T) {
	oracle.Require(t, oracle.ToolDB, oracle.ToolRepair, oracle.ToolMount)
	s := startServer(t, "512M", "--trim-interval", "1s")
	logOff, logLen := oracle.LogRange(t, s.Volume)
	allocated := func() int64 { return oracle.AllocatedOutside(t, s.Volume, logOff, logLen) }
	c := s.client(t)
	ctx := t.Context()
	if err := c.MakeBucket(ctx, "frag", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	// Objects written one after the other lie side by side: deleting every
	// other one leaves free space in as many pieces as objects deleted.
	const n, size = 400, 48 << 10
	body := func(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "object %d;", i), size/8+1)[:size] }
	for i := range n {
		mustPut(t, ctx, c, "frag", fmt.Sprintf("o%04d", i), body(i), minio.PutObjectOptions{})
	}

	// After start every AG counts as freed: the first periodic passes
	// walk the whole volume. Measure once they are over.
	d := s.waitTrim(t, "first periodic pass", func(d trimDoc) bool {
		return d.Counters.Passes > 0 && d.Current == nil && d.Counters.BacklogBytes == 0
	})
	if d.Counters.IntervalSeconds != 1 || d.Counters.Unsupported || d.Last == nil || !d.Last.Scheduled {
		t.Fatalf("status after the first periodic pass: %+v (last %+v)", d.Counters, d.Last)
	}
	passes := d.Counters.Passes
	before := allocated()
	var freed int64
	for i := 1; i < n; i += 2 {
		if err := c.RemoveObject(ctx, "frag", fmt.Sprintf("o%04d", i), minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		freed += size
	}
	deadline := time.Now().Add(30 * time.Second)
	for before-allocated() < freed*99/100 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	after := allocated()
	t.Logf("allocated outside the log: %d KiB before the deletes, %d KiB after; %d KiB freed", before>>10, after>>10, freed>>10)
	if before-after < freed*99/100 {
		t.Fatalf("the host got back %d of %d freed bytes by itself (want 99%%)", before-after, freed)
	}
	_, d, _ = s.trim(t, "GET", nil)
	if d.Counters.Passes <= passes || d.Counters.OnDemand != 0 || d.Counters.Errors != 0 || d.Counters.LockHoldMaxUs <= 0 {
		t.Errorf("counters after the periodic pass over the deletes: %+v", d.Counters)
	}

	t.Run("on demand", func(t *testing.T) { trimOnDemand(t, s, c) })

	view := s.apiView(t)
	for i := 0; i < n; i += 2 {
		key := fmt.Sprintf("frag/o%04d", i)
		if _, ok := view[key]; !ok {
			t.Errorf("%s is gone", key)
		}
	}
	s.stop(t)
	logs := s.logs.String()
	if !strings.Contains(logs, `"message":"trim pass"`) || !strings.Contains(logs, `"message":"trim at shutdown"`) {
		t.Errorf("no trim pass or shutdown totals in the server log")
	}
	s.checkKernelView(t, view)
}

// trimOnDemand drives passes on demand over the wire: a signed POST
// starts one (a second POST meanwhile is refused with 409), GET follows
// it, DELETE cancels it; a bad body and a range outside the volume are
// refused with 400; 'xfs3 trim --endpoint' runs a pass to its end and
// shows the status. Writers keep the foreground busy so that the pass
// backs off after every discard request and runs long enough to be seen.
func trimOnDemand(t *testing.T, s *server, c *minio.Client) {
	ctx, stop := context.WithCancel(t.Context())
	var writers sync.WaitGroup
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			data := bytes.Repeat([]byte{'w'}, 4096)
			for i := 0; ctx.Err() == nil; i++ {
				c.PutObject(ctx, "frag", fmt.Sprintf("busy/%d/%d", w, i), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
			}
		}()
	}
	defer func() { stop(); writers.Wait() }()

	for _, bad := range []struct{ body, why string }{
		{`{"offset":-1}`, "negative offset"},
		{`{"offset":1099511627776}`, "offset past the volume"},
		{`{"start":0}`, "unknown field"},
		{`[1,2]`, "not an object"},
	} {
		code, _, raw := s.trim(t, "POST", []byte(bad.body))
		var e struct{ Code, Message string }
		if json.Unmarshal(raw, &e); code != 400 || e.Code != "XMinioAdminInvalidArgument" || e.Message == "" {
			t.Errorf("POST %s (%s): %d %s", bad.body, bad.why, code, raw)
		}
	}

	// minlen 4 KiB over the whole volume: every free extent is walked.
	code, d, raw := s.trim(t, "POST", []byte(`{"offset":0,"length":0,"minlen":4096}`))
	// The answer comes after the first batch or the first discard
	// request, whichever is first: a paced pass pauses inside a batch.
	if code != 200 || d.Current == nil || d.Current.Scheduled || !d.Current.Running {
		t.Fatalf("POST: %d %s", code, raw)
	}
	id := d.Current.ID
	if code, _, raw := s.trim(t, "POST", nil); code != 409 || !strings.Contains(string(raw), `"XFS3TrimRunning"`) {
		// The pass may have ended in between: then the second POST
		// started one of its own, which this test cancels below.
		if code != 200 {
			t.Errorf("second POST while pass %d runs: %d %s", id, code, raw)
		}
		t.Logf("pass %d ended before the second POST", id)
	}
	code, d, raw = s.trim(t, "GET", nil)
	if code != 200 {
		t.Fatalf("GET: %d %s", code, raw)
	}
	if d.Current != nil && d.Current.Batches > 0 && (d.Current.To <= d.Current.From || d.Current.Offset < d.Current.From) {
		t.Errorf("GET shows a pass outside its range: %s", raw)
	}
	code, d, raw = s.trim(t, "DELETE", nil)
	if code != 200 {
		t.Fatalf("DELETE: %d %s", code, raw)
	}
	d = s.waitTrim(t, "end of the cancelled pass", func(d trimDoc) bool { return d.Current == nil && d.Last != nil && d.Last.ID >= id })
	if d.Last.Error != "" || d.Last.Errors != 0 || d.Counters.OnDemand < 1 {
		t.Errorf("the pass after DELETE: %s", raw)
	}
	if !d.Last.Canceled {
		// Too quick to cancel: it must then have walked its whole range.
		if d.Last.Next != d.Last.To {
			t.Errorf("pass %d neither cancelled nor finished: %+v", d.Last.ID, *d.Last)
		}
		t.Logf("pass %d ended before DELETE reached it", d.Last.ID)
	} else if d.Last.Next >= d.Last.To || d.Counters.Canceled < 1 {
		t.Errorf("cancelled pass %d reached its end or is not counted: %+v, %+v", d.Last.ID, *d.Last, d.Counters)
	} else {
		t.Logf("pass %d cancelled at byte %d of [%d, %d) after %d batches", d.Last.ID, d.Last.Next, d.Last.From, d.Last.To, d.Last.Batches)
	}
	if code, d, raw := s.trim(t, "DELETE", nil); code != 200 || d.Current != nil {
		t.Errorf("DELETE with no pass under way: %d %s", code, raw)
	}

	// The command line, with the server's credentials from the
	// environment: a pass to its end, then the status.
	cli := func(args ...string) []byte { t.Helper(); return runCLI(t, args...) }
	var p trimPassDoc
	out := cli("trim", "--endpoint", s.URL, "--json")
	if err := json.Unmarshal(out, &p); err != nil || p.Running || p.Canceled || p.Scheduled || p.Error != "" || p.Next != p.To || p.ExaminedBytes <= 0 {
		t.Errorf("xfs3 trim --endpoint: %v\n%s", err, out)
	}
	var st trimDoc
	out = cli("trim", "--endpoint", s.URL, "--status", "--json")
	if err := json.Unmarshal(out, &st); err != nil || st.LastOnDemand == nil || st.LastOnDemand.ID != p.ID || st.Counters.OnDemand < 2 {
		t.Errorf("xfs3 trim --status: %v\n%s", err, out)
	}
	if text := string(cli("trim", "--endpoint", s.URL, "--status")); !strings.Contains(text, fmt.Sprintf("last on demand: trim pass %d done", p.ID)) {
		t.Errorf("xfs3 trim --status as text:\n%s", text)
	}
}
