package s3api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// damageDirBlock overwrites bytes in the first block of directory ino's
// data fork on the stopped volume img, found with xfs_db's bmap.
func damageDirBlock(t *testing.T, img string, ino format.Ino, blockSize int) {
	t.Helper()
	var agblocks int64
	fmt.Sscan(oracle.DBSuperblock(t, img)["agblocks"], &agblocks)
	for _, line := range strings.Split(oracle.DB(t, img, fmt.Sprintf("inode %d", ino), "bmap"), "\n") {
		var off, start, ag, agbno, count, flag int64
		if _, err := fmt.Sscanf(line, "data offset %d startblock %d (%d/%d) count %d flag %d", &off, &start, &ag, &agbno, &count, &flag); err != nil {
			continue
		}
		f, err := os.OpenFile(img, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte("damaged!"), (ag*agblocks+agbno)*int64(blockSize)+200); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("directory %d maps no blocks", ino)
}

// TestSickPrefix: a prefix directory whose block fails its CRC makes
// requests that need it answer 500 XFS3NeedsRepair naming the bucket
// and prefix, and change nothing; the rest of its bucket and the other
// bucket serve as before; the info document, the health endpoint, the
// metrics and the ready probe report it, and OnSick hears of it once.
func TestSickPrefix(t *testing.T) {
	oracle.Require(t, oracle.ToolDB)
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"hurt", "fine"} {
		if err := st.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
		for i := range 64 {
			key := fmt.Sprintf("p/object-with-a-longish-name-%03d", i)
			if _, err := st.PutObject(b, key, strings.NewReader(key), int64(len(key)), store.Meta{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.PutObject(b, "top", strings.NewReader("top"), 3, store.Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	v := st.Volume()
	bucket, _ := v.Names().Lookup(v.Root(), "hurt")
	dir, err := v.Names().Lookup(bucket, "p")
	if err != nil {
		t.Fatal(err)
	}
	bs := v.Geometry().BlockSize
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	damageDirBlock(t, img, dir, bs)

	var mu sync.Mutex
	var reported []store.SickStructure
	st, err = store.OpenWith(img, store.Options{OnSick: func(s store.SickStructure) {
		mu.Lock()
		reported = append(reported, s)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServerOn(t, st)
	v = st.Volume()
	usage := func() []store.BucketUsage {
		us, err := st.Quotas().List()
		if err != nil {
			t.Fatal(err)
		}
		return us
	}
	usageBefore := usage()
	resp, _ := ts.do(t, http.MethodGet, "/minio/health/ready", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get(admin.HeaderHealth) != "" {
		t.Fatalf("ready before the damage is found: %d %q", resp.StatusCode, resp.Header.Get(admin.HeaderHealth))
	}

	needsRepair := func(method, target string, body []byte) {
		t.Helper()
		resp, out := ts.do(t, method, target, body, nil)
		wantError(t, resp, out, 500, "XFS3NeedsRepair")
		if msg := string(out); !strings.Contains(msg, `Bucket &#34;hurt&#34;`) || !strings.Contains(msg, `prefix &#34;p/&#34;`) {
			t.Errorf("%s %s: the message does not name the bucket and prefix: %s", method, target, out)
		}
	}
	needsRepair(http.MethodGet, "/hurt?list-type=2&prefix=p/", nil)
	stBefore, _ := v.Stat(dir)
	for range 3 {
		needsRepair(http.MethodPut, "/hurt/p/new", []byte("small"))
		needsRepair(http.MethodPut, "/hurt/p/big", bytes.Repeat([]byte("x"), 1<<20))
		needsRepair(http.MethodDelete, "/hurt/p/object-with-a-longish-name-001", nil)
		needsRepair(http.MethodGet, "/hurt?list-type=2", nil)
	}
	// Nothing changed: the directory, the staging area, the usage.
	if after, _ := v.Stat(dir); after.ChangeCount != stBefore.ChangeCount || after.Size != stBefore.Size {
		t.Errorf("refused changes changed the directory: %+v then %+v", stBefore, after)
	}
	tmp, err := v.Names().LookupPath("/.xfs3/tmp", false)
	if err != nil {
		t.Fatal(err)
	}
	stagings, _ := v.Names().ReadDir(tmp)
	for _, e := range stagings {
		if ents, err := v.Names().ReadDir(e.Ino); err != nil || len(ents) != 0 {
			t.Errorf("staging directory %s holds %d entries after refused writes, %v", e.Name, len(ents), err)
		}
	}
	if got := usage(); fmt.Sprint(got) != fmt.Sprint(usageBefore) {
		t.Errorf("usage changed by refused writes: %+v, was %+v", got, usageBefore)
	}

	// The rest of the bucket and the other bucket serve.
	for _, target := range []string{"/hurt/top", "/fine/top", "/fine/p/object-with-a-longish-name-001"} {
		if resp, out := ts.do(t, http.MethodGet, target, nil, nil); resp.StatusCode != 200 {
			t.Errorf("GET %s: %d %s", target, resp.StatusCode, out)
		}
	}
	for _, target := range []string{"/hurt/new-top", "/fine/p/new", "/fine/q/new"} {
		if resp, out := ts.do(t, http.MethodPut, target, []byte("body"), nil); resp.StatusCode != 200 {
			t.Errorf("PUT %s: %d %s", target, resp.StatusCode, out)
		}
	}
	if res, err := st.ListObjects("fine", store.ListOptions{Prefix: "p/"}); err != nil || len(res.Objects) != 65 {
		t.Errorf("listing the other bucket's prefix: %d objects, %v", len(res.Objects), err)
	}

	// Reported: health endpoint, info document, metrics, ready, OnSick.
	wantSick := func(h admin.Health) {
		t.Helper()
		if h.State != store.HealthDegraded || len(h.Sick) != 1 {
			t.Fatalf("health: %+v", h)
		}
		s := h.Sick[0]
		if s.Kind != "inode" || s.Ino != uint64(dir) || s.Place != store.PlacePrefix || s.Bucket != "hurt" ||
			s.Prefix != "p/" || s.Path != "/hurt/p" || s.Structure == "" || s.Reason == "" || s.Since.IsZero() {
			t.Errorf("sick structure: %+v", s)
		}
	}
	resp, body := ts.mcDo(t, http.MethodGet, admin.Prefix+admin.PathHealth, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("health: %d %s", resp.StatusCode, body)
	}
	var h admin.Health
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatal(err)
	}
	wantSick(h)
	resp, body = ts.mcDo(t, http.MethodGet, admin.Prefix+admin.PathInfo, nil)
	var in admin.Info
	if err := json.Unmarshal(body, &in); resp.StatusCode != 200 || err != nil {
		t.Fatalf("info: %d %v %s", resp.StatusCode, err, body)
	}
	wantSick(in.Health)
	if unsigned, _ := send(t, ts.rawRequest(t, http.MethodGet, admin.Prefix+admin.PathHealth, nil, nil)); unsigned.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned health request: %d", unsigned.StatusCode)
	}
	gauge := map[string]float64{}
	for _, m := range ts.scrape(t)["xfs3_sick_structures"].GetMetric() {
		gauge[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	if gauge["inode"] != 1 || gauge["ag"] != 0 || gauge["quota"] != 0 || len(gauge) != 3 {
		t.Errorf("xfs3_sick_structures: %v", gauge)
	}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		resp, _ = ts.do(t, method, "/minio/health/ready", nil, nil)
		if resp.StatusCode != 200 || resp.Header.Get(admin.HeaderHealth) != store.HealthDegraded {
			t.Errorf("%s ready: %d %s %q", method, resp.StatusCode, admin.HeaderHealth, resp.Header.Get(admin.HeaderHealth))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || reported[0].Ino != dir || reported[0].Bucket != "hurt" || reported[0].Prefix != "p/" {
		t.Errorf("OnSick heard %+v, want directory %d once, at hurt/p/", reported, dir)
	}
}

// TestSickErrorMapping: ErrSick without the store's SickError is still
// XFS3NeedsRepair, a 500.
func TestSickErrorMapping(t *testing.T) {
	e := toS3Error(fmt.Errorf("inode 99: %w", xfs.ErrSick))
	if e.code != "XFS3NeedsRepair" || e.Status() != 500 || !strings.Contains(messageOf(e), "xfs_repair") {
		t.Errorf("%+v", e)
	}
}

// TestAdminScrub: POST starts a pass, GET shows it and its counters, the
// info document carries the same status, and an unsigned request is
// refused.
func TestAdminScrub(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "scrubbed")
	mustPut(t, ts, "scrubbed", "k", strings.Repeat("x", 300<<10), store.Meta{})
	resp, body := ts.mcDo(t, http.MethodPost, admin.Prefix+admin.PathScrub, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrub start: %d %s", resp.StatusCode, body)
	}
	var st admin.ScrubStatus
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body = ts.mcDo(t, http.MethodGet, admin.Prefix+admin.PathScrub, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("scrub status: %d %s", resp.StatusCode, body)
		}
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatal(err)
		}
		if st.Passes > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st.Passes != 1 || st.Last == nil || !st.Last.OnDemand || st.Last.Counts.Objects != 1 || st.Last.Counts.Inodes == 0 ||
		st.Last.Counts.Damaged() || len(st.Rotten) != 0 {
		t.Fatalf("scrub status after a pass: %+v (last %+v)", st, st.Last)
	}
	_, body = ts.mcDo(t, http.MethodGet, admin.Prefix+admin.PathInfo, nil)
	var in admin.Info
	if err := json.Unmarshal(body, &in); err != nil || in.Scrub.Passes != 1 {
		t.Fatalf("info scrub member: %+v, %v", in.Scrub, err)
	}
	unsigned, _ := send(t, ts.rawRequest(t, http.MethodPost, admin.Prefix+admin.PathScrub, nil, nil))
	if unsigned.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned scrub request: %d", unsigned.StatusCode)
	}
}
