package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/store/lifecycle"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// TestLifecycleStoppedVolume: xfs3 lifecycle VOLUME applies the rules on
// a stopped volume, with a short day.
func TestLifecycleStoppedVolume(t *testing.T) {
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(img)
	volMust(t, err)
	volMust(t, st.CreateBucket("logs"))
	cfg, err := lifecycle.Parse([]byte(`<LifecycleConfiguration><Rule><ID>tmp</ID><Status>Enabled</Status><Filter><Prefix>tmp/</Prefix></Filter><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`))
	volMust(t, err)
	volMust(t, st.BucketConfigs().Put("logs", store.LifecycleConfig, cfg.Encode()))
	for _, k := range []string{"tmp/a", "tmp/b", "keep/c"} {
		_, err := st.PutObject("logs", k, strings.NewReader(k), int64(len(k)), store.Meta{})
		volMust(t, err)
	}
	volMust(t, st.Close())
	time.Sleep(2100 * time.Millisecond) // a day of one second, and its midnight
	out := okCLI(t, "lifecycle", "--day", "1s", img)
	if !strings.Contains(out, "lifecycle pass 1 done: scanned 3, expired 2,") {
		t.Fatalf("xfs3 lifecycle: %q", out)
	}
	st, err = store.Open(img)
	volMust(t, err)
	defer st.Close()
	list, err := st.ListObjects("logs", store.ListOptions{})
	volMust(t, err)
	if len(list.Objects) != 1 || list.Objects[0].Key != "keep/c" {
		t.Fatalf("after the pass: %+v", list.Objects)
	}
	if r := runCLI(t, "lifecycle", "--status", img); r.code != 2 {
		t.Errorf("--status without --endpoint: status %d", r.code)
	}
}
