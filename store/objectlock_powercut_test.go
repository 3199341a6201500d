package store

import (
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestObjectLockPowerCut cuts power at every write of a run of lock
// changes (a locked write, legal holds on and off, retention extended
// and removed, a locked version moved aside by a new version and by a
// marker, a version deleted once its COMPLIANCE retention ended, which
// clears its flag first) and checks what our recovery makes of each
// crash image: every version's immutable flag agrees with its lock
// xattrs, each acknowledged lock is there (the one in flight is before
// or after), and xfs_repair -n is clean.
func TestObjectLockPowerCut(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	base := filepath.Join(t.TempDir(), "base.img")
	if _, err := mkfs.Format(base, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	dry := runLockCut(t, base, 0)
	writes, _ := dry.f.Stats()
	for at := dry.start + 1; at <= writes; at++ {
		lockCut(t, base, at)
		if t.Failed() {
			t.Fatalf("cut at write %d of %d (during %q)", at, writes, runLockCut(t, base, at).inFlight)
		}
	}
	t.Logf("%d cuts, writes %d to %d", writes-dry.start, dry.start+1, writes)
}

// lockCutRun is one run of the lock workload until the cut.
type lockCutRun struct {
	f     *dev.Fault
	clock *testClock
	start int
	// acked are the locks acknowledged, by key and version ID;
	// inFlight names the step cut, whose version may hold before or
	// after (ids[inFlight version] → after).
	acked    map[string]ObjectLock
	after    map[string]ObjectLock
	inFlight string
}

func runLockCut(t *testing.T, base string, cutAt int) *lockCutRun {
	t.Helper()
	f := openFault(t, base)
	clock := &testClock{t: time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)}
	r := &lockCutRun{f: f, clock: clock, acked: map[string]ObjectLock{}}
	if cutAt > 0 {
		f.CutAt(cutAt)
	}
	v, err := xfs.OpenDevice(f, xfs.Options{LazyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	s, err := NewWith(v, Options{Clock: clock.now})
	if err == nil {
		defer s.Close() // its workers stop; after a cut the device takes no more writes
		if err = s.CreateBucket("bkt"); err == nil {
			err = s.Locks().Enable("bkt")
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	r.start, _ = f.Stats()
	now := clock.now()
	comp := ObjectLock{Retention: Retention{LockCompliance, now.Add(day)}}
	ids := map[string]string{} // step name → version it made
	set := func(key, name string, lock ObjectLock) { r.after = map[string]ObjectLock{key + "@" + ids[name]: lock} }
	steps := []struct {
		name string
		run  func() error
	}{
		{"put a locked", func() error {
			info, err := s.PutObject("bkt", "a", strings.NewReader("one"), 3, Meta{Lock: comp})
			ids["a1"] = info.VersionID
			set("a", "a1", comp)
			return err
		}},
		{"hold a1", func() error {
			set("a", "a1", ObjectLock{Retention: comp.Retention, LegalHold: true})
			_, err := s.Locks().SetLegalHold("bkt", "a", ids["a1"], true)
			return err
		}},
		{"put a over it", func() error {
			info, err := s.PutObject("bkt", "a", strings.NewReader(strings.Repeat("2", 300<<10)), 300<<10, Meta{})
			ids["a2"] = info.VersionID
			set("a", "a2", ObjectLock{})
			return err
		}},
		{"extend a1", func() error {
			l := ObjectLock{Retention: Retention{LockCompliance, now.Add(36 * time.Hour)}, LegalHold: true}
			set("a", "a1", l)
			_, err := s.Locks().SetRetention("bkt", "a", ids["a1"], l.Retention, false)
			return err
		}},
		{"release a1's hold", func() error {
			set("a", "a1", ObjectLock{Retention: Retention{LockCompliance, now.Add(36 * time.Hour)}})
			_, err := s.Locks().SetLegalHold("bkt", "a", ids["a1"], false)
			return err
		}},
		{"put b held", func() error {
			l := ObjectLock{LegalHold: true}
			info, err := s.PutObject("bkt", "b", strings.NewReader("b"), 1, Meta{Lock: l})
			ids["b1"] = info.VersionID
			set("b", "b1", l)
			return err
		}},
		{"marker over b", func() error { r.after = nil; _, err := s.Versions().Delete("bkt", "b", ""); return err }},
		{"govern a2", func() error {
			l := ObjectLock{Retention: Retention{LockGovernance, now.Add(time.Hour)}}
			set("a", "a2", l)
			_, err := s.Locks().SetRetention("bkt", "a", ids["a2"], l.Retention, false)
			return err
		}},
		{"ungovern a2", func() error {
			set("a", "a2", ObjectLock{})
			_, err := s.Locks().SetRetention("bkt", "a", ids["a2"], Retention{}, true)
			return err
		}},
		{"delete a1 after its retention", func() error {
			clock.advance(3 * day)
			r.after = nil
			delete(r.acked, "a@"+ids["a1"])
			_, err := s.Versions().Delete("bkt", "a", ids["a1"])
			return err
		}},
	}
	for _, st := range steps {
		r.after = nil
		if err := st.run(); err != nil {
			if !f.IsCut() {
				t.Fatalf("%s: %v", st.name, err)
			}
			r.inFlight = st.name
			return r
		}
		for k, l := range r.after {
			r.acked[k] = l
		}
	}
	f.Cut()
	return r
}

func lockCut(t *testing.T, base string, cutAt int) {
	r := runLockCut(t, base, cutAt)
	rng := rand.New(rand.NewSource(int64(cutAt)))
	img := filepath.Join(t.TempDir(), "crash.img")
	oracle.CopySparse(t, base, img)
	if err := r.f.Image(img, randomCrash(rng, r.f, int64(cutAt)*31)); err != nil {
		t.Fatal(err)
	}
	s, err := OpenWith(img, Options{Clock: r.clock.now})
	if err != nil {
		t.Fatalf("cut at %d: reopen: %v", cutAt, err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		oracle.Repair(t, img)
	}()
	list, err := s.Versions().List("bkt", VersionListOptions{MaxKeys: 1000})
	if err != nil {
		t.Fatalf("cut at %d: list: %v", cutAt, err)
	}
	now := r.clock.now()
	found := map[string]bool{}
	for _, v := range list.Versions {
		if v.DeleteMarker {
			continue
		}
		k := v.Key + "@" + v.VersionID
		found[k] = true
		lock, _, err := s.Locks().Get("bkt", v.Key, v.VersionID)
		if err != nil {
			t.Fatalf("cut at %d: %s: %v", cutAt, k, err)
		}
		flag := immutableFlag(t, s, v.Key, v.VersionID)
		if lock.immutableAt(now) && !flag || flag && !lock.LegalHold && lock.Mode != LockCompliance {
			t.Errorf("cut at %d (during %q): %s: flag %v with lock %+v", cutAt, r.inFlight, k, flag, lock)
		}
		want, acked := r.acked[k]
		after, inFlight := r.after[k]
		if acked && !sameLock(lock, want) && !(inFlight && sameLock(lock, after)) {
			t.Errorf("cut at %d (during %q): %s: lock %+v, acknowledged %+v", cutAt, r.inFlight, k, lock, want)
		}
	}
	for k := range r.acked {
		if !found[k] {
			t.Errorf("cut at %d (during %q): acknowledged version %s is gone", cutAt, r.inFlight, k)
		}
	}
}

func sameLock(a, b ObjectLock) bool {
	return a.Mode == b.Mode && a.Until.Equal(b.Until) && a.LegalHold == b.LegalHold
}
