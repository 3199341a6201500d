package s3api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// trimServer serves st and returns an admin client for it.
func trimServer(t *testing.T, st *store.Store) *admin.Client {
	t.Helper()
	h, err := New(Config{Store: st, Credentials: map[string]string{testAccessKey: testSecretKey}, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		st.Close()
	})
	return &admin.Client{Endpoint: srv.URL, AccessKey: testAccessKey, SecretKey: testSecretKey}
}

func trimImage(t *testing.T) string {
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	return img
}

// TestAdminTrim: POST starts a pass and answers it running, a second
// POST is refused with 409 while it runs, GET follows it, DELETE cancels
// it. The store's foreground counter never stands still here, so the pass
// backs off after its first discard request (within its first batch) for
// as long as the test needs.
func TestAdminTrim(t *testing.T) {
	var changes atomic.Uint64
	st, err := store.OpenWith(trimImage(t), store.Options{Trim: gc.TrimOptions{
		Busy: func() uint64 { return changes.Add(1) }, BackoffMin: time.Minute, BackoffMax: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	c := trimServer(t, st)
	ctx := context.Background()
	got, err := c.Trim(ctx, admin.TrimRequest{Offset: 0, Length: 128 << 20, MinLen: 4096})
	if err != nil {
		t.Fatal(err)
	}
	p := got.Current
	if p == nil || !p.Running || p.Scheduled || p.Request.Length != 128<<20 || p.Batches > 1 {
		t.Fatalf("POST answered %+v", got)
	}
	_, err = c.Trim(ctx, admin.TrimRequest{})
	var ae *admin.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusConflict || ae.Code != "XFS3TrimRunning" {
		t.Fatalf("second POST: %v", err)
	}
	got, err = c.TrimStatus(ctx)
	if err != nil || got.Current == nil || got.Current.ID != p.ID || got.Current.Backoffs != 0 {
		t.Fatalf("GET while running: %+v %v", got, err)
	}
	if _, err := c.CancelTrim(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for got.Current != nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		got, _ = c.TrimStatus(ctx)
	}
	if got.Current != nil || got.Last == nil || !got.Last.Canceled || got.Last.Ended == nil ||
		got.Counters.Canceled != 1 || got.Counters.OnDemand != 1 || got.Counters.IntervalSeconds != 0 {
		t.Fatalf("GET after DELETE: %+v %+v", got.Last, got.Counters)
	}
}

// TestAdminTrimRuns: a pass over the whole volume ends with every byte
// walked; a bad body or range is a 400.
func TestAdminTrimRuns(t *testing.T) {
	st, err := store.Open(trimImage(t))
	if err != nil {
		t.Fatal(err)
	}
	c := trimServer(t, st)
	ctx := context.Background()
	if _, err := c.Trim(ctx, admin.TrimRequest{}); err != nil {
		t.Fatal(err)
	}
	var got admin.TrimStatus
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if got, err = c.TrimStatus(ctx); err != nil || got.Current == nil {
			break
		}
	}
	if l := got.Last; l == nil || l.Canceled || l.Error != "" || l.Next != 256<<20 || l.DiscardedBytes == 0 || l.LockHoldMaxUs < 0 {
		t.Fatalf("ended pass %+v", got.Last)
	}
	for _, r := range []admin.TrimRequest{{Offset: 1 << 40}, {Offset: -1}} {
		_, err := c.Trim(ctx, r)
		var ae *admin.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
			t.Errorf("POST %+v: %v", r, err)
		}
	}
	if _, err := admin.DecodeTrimRequest([]byte(`{"offset": 1, "lenght": 2}`)); err == nil {
		t.Error("a misspelt field passed")
	}
}

// TestAdminTrimUnsupported: on storage that cannot discard, POST answers
// 501 XFS3TrimUnsupported and the counters say so.
func TestAdminTrimUnsupported(t *testing.T) {
	d, closeBase, err := dev.OpenFault(trimImage(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeBase() })
	d.RefuseDiscard()
	v, err := xfs.OpenDevice(d, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	st, err := store.New(v)
	if err != nil {
		t.Fatal(err)
	}
	c := trimServer(t, st)
	_, err = c.Trim(context.Background(), admin.TrimRequest{})
	var ae *admin.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusNotImplemented || ae.Code != "XFS3TrimUnsupported" {
		t.Fatalf("POST: %v", err)
	}
	got, err := c.TrimStatus(context.Background())
	if err != nil || !got.Counters.Unsupported || got.Last == nil || !got.Last.Unsupported {
		t.Fatalf("GET: %+v %v", got, err)
	}
}
