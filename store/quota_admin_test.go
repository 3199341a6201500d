package store

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/quota"
)

// TestReadQuotasOffline: what a running store reports of its buckets'
// quotas and grace periods, a read-only open of the closed volume reports
// too.
func TestReadQuotasOffline(t *testing.T) {
	s, img := newTestStore(t)
	for _, b := range []string{"alpha", "beta"} {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	put(t, s, "alpha", "a/1", "one", Meta{})
	put(t, s, "alpha", "2", "two", Meta{})
	if g, err := s.quotas().Grace(); err != nil || g != (QuotaGrace{quota.DefaultGrace, quota.DefaultGrace}) {
		t.Errorf("default grace = %+v, %v", g, err)
	}
	q := BucketQuota{HardBytes: 1 << 20, SoftBytes: 4096, HardObjects: 100, SoftObjects: 2}
	if err := s.quotas().Set("alpha", q); err != nil {
		t.Fatal(err)
	}
	if err := s.quotas().SetGrace(time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	grace := QuotaGrace{Bytes: time.Hour, Objects: quota.DefaultGrace}
	if g, err := s.quotas().Grace(); err != nil || g != grace {
		t.Errorf("grace = %+v, %v; want %+v", g, err, grace)
	}
	online, err := s.quotas().List()
	if err != nil {
		t.Fatal(err)
	}
	if len(online) != 2 || online[0].Bucket != "alpha" || online[0].Quota != q || online[0].Objects != 4 {
		// alpha: its directory, the prefix "a" and two objects.
		t.Fatalf("BucketQuotas = %+v", online)
	}
	if _, err := s.quotas().Get("beta"); !errors.Is(err, ErrNoQuota) {
		t.Errorf("beta: %v, want ErrNoQuota", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A bucket made by another program is in project 0 until a store
	// opens the volume: it shows no usage of its own.
	w, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Names().Mkdir(w.Root(), "gamma", xfs.Attrs{Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	online = append(online, BucketUsage{Bucket: "gamma"})
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	offline, g, err := ReadQuotas(v)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(offline, online) || g != grace {
		t.Errorf("offline:\n %+v %+v\nonline:\n %+v %+v", offline, g, online, grace)
	}
}

// TestUpdateBucketQuota: concurrent updates of different limits all land;
// a missing bucket is ErrNoSuchBucket.
func TestUpdateBucketQuota(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	setters := []func(*BucketQuota){
		func(q *BucketQuota) { q.HardBytes = 1 << 20 },
		func(q *BucketQuota) { q.SoftBytes = 1 << 19 },
		func(q *BucketQuota) { q.HardObjects = 10 },
		func(q *BucketQuota) { q.SoftObjects = 5 },
	}
	errs := make(chan error, len(setters))
	for _, set := range setters {
		go func() {
			_, err := s.quotas().Update("bkt", func(q BucketQuota) BucketQuota { set(&q); return q })
			errs <- err
		}()
	}
	for range setters {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	want := BucketQuota{HardBytes: 1 << 20, SoftBytes: 1 << 19, HardObjects: 10, SoftObjects: 5}
	if u, err := s.quotas().Get("bkt"); err != nil || u.Quota != want {
		t.Errorf("after concurrent updates: %+v, %v", u.Quota, err)
	}
	u, err := s.quotas().Update("bkt", func(BucketQuota) BucketQuota { return BucketQuota{} })
	if err != nil || u.Quota != (BucketQuota{}) || u.Bucket != "bkt" {
		t.Errorf("clear: %+v, %v", u, err)
	}
	if _, err := s.quotas().Update("nothere", func(q BucketQuota) BucketQuota { return q }); !errors.Is(err, ErrNoSuchBucket) {
		t.Errorf("missing bucket: %v", err)
	}
}
