package store

import (
	"errors"
	"fmt"
	"math/rand"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/oracle"
)

var day = 24 * time.Hour

// TestRetentionRules holds the rules of a retention change and of a
// delete to S3's documentation: mode × bypass × legal hold × date ×
// operation.
func TestRetentionRules(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	gov := func(d time.Duration) Retention { return Retention{LockGovernance, now.Add(d)} }
	comp := func(d time.Duration) Retention { return Retention{LockCompliance, now.Add(d)} }
	changes := []struct {
		name     string
		old, new Retention
		bypass   bool
		allowed  bool
	}{
		{"none to governance", Retention{}, gov(day), false, true},
		{"none to compliance", Retention{}, comp(day), false, true},
		{"governance extended", gov(day), gov(2 * day), false, true},
		{"governance kept", gov(day), gov(day), false, true},
		{"governance shortened", gov(2 * day), gov(day), false, false},
		{"governance shortened with bypass", gov(2 * day), gov(day), true, true},
		{"governance removed", gov(day), Retention{}, false, false},
		{"governance removed with bypass", gov(day), Retention{}, true, true},
		{"governance to compliance", gov(day), comp(day), false, true},
		{"governance to earlier compliance", gov(2 * day), comp(day), false, false},
		{"compliance extended", comp(day), comp(2 * day), false, true},
		{"compliance kept", comp(day), comp(day), true, true},
		{"compliance shortened", comp(2 * day), comp(day), false, false},
		{"compliance shortened with bypass", comp(2 * day), comp(day), true, false},
		{"compliance removed with bypass", comp(day), Retention{}, true, false},
		{"compliance to governance", comp(day), gov(2 * day), true, false},
		{"compliance ended, shortened", comp(-time.Hour), comp(time.Minute), false, true},
		{"compliance ended, removed", comp(-time.Hour), Retention{}, false, true},
		{"governance ended, removed", gov(-time.Hour), Retention{}, false, true},
	}
	for _, c := range changes {
		err := checkRetentionChange(c.old, c.new, now, c.bypass)
		if c.allowed != (err == nil) {
			t.Errorf("%s: allowed %v, got %v", c.name, c.allowed, err)
		}
		if err != nil && !errors.Is(err, ErrObjectLocked) {
			t.Errorf("%s: %v is not ErrObjectLocked", c.name, err)
		}
	}
	deletes := []struct {
		name      string
		lock      ObjectLock
		bypass    bool
		protected bool
		immutable bool
	}{
		{"no lock", ObjectLock{}, false, false, false},
		{"governance", ObjectLock{Retention: gov(day)}, false, true, false},
		{"governance, bypass", ObjectLock{Retention: gov(day)}, true, false, false},
		{"governance ended", ObjectLock{Retention: gov(-time.Second)}, false, false, false},
		{"compliance", ObjectLock{Retention: comp(day)}, false, true, true},
		{"compliance, bypass", ObjectLock{Retention: comp(day)}, true, true, true},
		{"compliance ended", ObjectLock{Retention: comp(-time.Second)}, false, false, false},
		{"compliance ends now", ObjectLock{Retention: comp(0)}, false, false, false},
		{"legal hold", ObjectLock{LegalHold: true}, true, true, true},
		{"legal hold, governance, bypass", ObjectLock{Retention: gov(day), LegalHold: true}, true, true, true},
		{"legal hold, compliance ended", ObjectLock{Retention: comp(-day), LegalHold: true}, false, true, true},
	}
	for _, c := range deletes {
		if got := c.lock.protects(now, c.bypass); got != c.protected {
			t.Errorf("%s: protects %v, want %v", c.name, got, c.protected)
		}
		if got := c.lock.immutableAt(now); got != c.immutable {
			t.Errorf("%s: immutable %v, want %v", c.name, got, c.immutable)
		}
	}
	for _, r := range []Retention{{LockGovernance, now}, {LockCompliance, now.Add(-time.Second)}, {"WORM", now.Add(day)}, {"", now.Add(day)}} {
		if err := CheckRetention(r, now); !errors.Is(err, ErrInvalidRetention) {
			t.Errorf("CheckRetention(%v): %v", r, err)
		}
	}
}

func TestLockConfigForms(t *testing.T) {
	for _, c := range []LockConfig{
		{Enabled: true},
		{Enabled: true, DefaultMode: LockGovernance, Days: 30},
		{Enabled: true, DefaultMode: LockCompliance, Years: 7},
	} {
		got, err := parseLockConfig(c.String())
		if err != nil || got != c {
			t.Errorf("%q: %+v, %v", c.String(), got, err)
		}
	}
	for _, bad := range []LockConfig{
		{},
		{Enabled: true, Days: 3},
		{Enabled: true, DefaultMode: "WORM", Days: 3},
		{Enabled: true, DefaultMode: LockGovernance},
		{Enabled: true, DefaultMode: LockGovernance, Days: 3, Years: 1},
		{Enabled: true, DefaultMode: LockGovernance, Days: -3},
		{Enabled: true, DefaultMode: LockGovernance, Years: 101},
	} {
		if err := bad.check(); !errors.Is(err, ErrInvalidRetention) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	for _, s := range []string{"", "Disabled", "Enabled GOVERNANCE", "Enabled GOVERNANCE xd", "Enabled WORM 3d", "Enabled GOVERNANCE 3w"} {
		if _, err := parseLockConfig(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}

// testClock is a clock tests move by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newLockStore opens a store on a fresh volume whose clock the test
// moves, with a bucket "bkt" made with object lock.
func newLockStore(t *testing.T) (*Store, string, *testClock) {
	t.Helper()
	s, img := newTestStore(t)
	s.Close()
	clock := &testClock{t: time.Now().UTC().Truncate(time.Second)}
	s, err := OpenWith(img, Options{Clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	if err := s.Locks().Enable("bkt"); err != nil {
		t.Fatal(err)
	}
	return s, img, clock
}

// immutableFlag tells whether version id of key carries the engine's
// immutable flag.
func immutableFlag(t *testing.T, s *Store, key, id string) bool {
	t.Helper()
	_, h, _, err := s.head("bkt", key, id)
	if err != nil {
		t.Fatalf("%s@%s: %v", key, id, err)
	}
	defer h.Close()
	st, err := s.v.Stat(h.Ino())
	if err != nil {
		t.Fatal(err)
	}
	return isImmutable(&st)
}

func TestObjectLockEnforced(t *testing.T) {
	s, _, clock := newLockStore(t)
	now := clock.now()
	if err := s.Versions().SetState("bkt", VersioningSuspended); !errors.Is(err, ErrInvalidBucketState) {
		t.Fatalf("suspend with object lock: %v", err)
	}
	comp := put(t, s, "bkt", "k", "v1", Meta{Lock: ObjectLock{Retention: Retention{LockCompliance, now.Add(day)}}})
	if !immutableFlag(t, s, "k", comp.VersionID) {
		t.Fatal("COMPLIANCE version without the immutable flag")
	}
	// A new version moves the locked one aside; the flag goes with it.
	gov := put(t, s, "bkt", "k", "v2", Meta{Lock: ObjectLock{Retention: Retention{LockGovernance, now.Add(day)}}})
	if !immutableFlag(t, s, "k", comp.VersionID) || immutableFlag(t, s, "k", gov.VersionID) {
		t.Fatal("flags after a new version: want the COMPLIANCE one only")
	}
	if _, err := s.Versions().Delete("bkt", "k", comp.VersionID); !errors.Is(err, ErrObjectLocked) {
		t.Fatalf("delete of a COMPLIANCE version: %v", err)
	}
	// Below the store's rules, the engine refuses too.
	vdir, err := s.v.Names().LookupPath("bkt/"+versionsDir+"/"+besideName("k"), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.v.Names().Unlink(vdir, comp.VersionID); !errors.Is(err, ErrImmutable) {
		t.Fatalf("engine unlink of a COMPLIANCE version: %v", err)
	}
	if _, err := s.Versions().DeleteWith("bkt", "k", comp.VersionID, DeleteOptions{BypassGovernance: true}); !errors.Is(err, ErrObjectLocked) {
		t.Fatalf("delete of a COMPLIANCE version with bypass: %v", err)
	}
	if _, err := s.Versions().Delete("bkt", "k", gov.VersionID); !errors.Is(err, ErrObjectLocked) {
		t.Fatalf("delete of a GOVERNANCE version: %v", err)
	}
	// A delete marker is always allowed, and lands over locked versions.
	marker, err := s.Versions().Delete("bkt", "k", "")
	if err != nil || !marker.DeleteMarker {
		t.Fatalf("delete marker: %+v %v", marker, err)
	}
	if _, err := s.Versions().Delete("bkt", "k", marker.VersionID); err != nil {
		t.Fatalf("delete of the marker: %v", err)
	}
	// Legal hold: blocks even a bypass, and sets the flag.
	if _, err := s.Locks().SetLegalHold("bkt", "k", gov.VersionID, true); err != nil {
		t.Fatal(err)
	}
	if !immutableFlag(t, s, "k", gov.VersionID) {
		t.Fatal("legal hold without the flag")
	}
	if _, err := s.Versions().DeleteWith("bkt", "k", gov.VersionID, DeleteOptions{BypassGovernance: true}); !errors.Is(err, ErrObjectLocked) {
		t.Fatalf("delete under legal hold with bypass: %v", err)
	}
	// Tags change on a locked version; the flag stays.
	if _, err := s.Versions().PutTagging("bkt", "k", gov.VersionID, []Tag{{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if !immutableFlag(t, s, "k", gov.VersionID) {
		t.Fatal("tagging cleared the flag")
	}
	if _, err := s.Locks().SetLegalHold("bkt", "k", gov.VersionID, false); err != nil {
		t.Fatal(err)
	}
	if immutableFlag(t, s, "k", gov.VersionID) {
		t.Fatal("flag left after the legal hold went (GOVERNANCE retention)")
	}
	if _, err := s.Versions().DeleteWith("bkt", "k", gov.VersionID, DeleteOptions{BypassGovernance: true}); err != nil {
		t.Fatalf("delete of a GOVERNANCE version with bypass: %v", err)
	}
	// COMPLIANCE: extended, never shortened; once ended, deletable and
	// the flag goes.
	if _, err := s.Locks().SetRetention("bkt", "k", comp.VersionID, Retention{LockCompliance, now.Add(2 * day)}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Locks().SetRetention("bkt", "k", comp.VersionID, Retention{LockCompliance, now.Add(day)}, true); !errors.Is(err, ErrObjectLocked) {
		t.Fatalf("shortened COMPLIANCE: %v", err)
	}
	if _, err := s.Locks().SetRetention("bkt", "k", comp.VersionID, Retention{LockGovernance, now.Add(-day)}, true); !errors.Is(err, ErrInvalidRetention) {
		t.Fatalf("a date in the past: %v", err)
	}
	clock.advance(2*day + time.Second)
	if !immutableFlag(t, s, "k", comp.VersionID) {
		t.Fatal("the flag went before anybody touched the version")
	}
	if _, err := s.Versions().Delete("bkt", "k", comp.VersionID); err != nil {
		t.Fatalf("delete after the retention ended: %v", err)
	}
	if _, err := s.Versions().Head("bkt", "k", ""); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("key after its versions went: %v", err)
	}
}

func TestObjectLockDefaultsAndCopies(t *testing.T) {
	s, _, clock := newLockStore(t)
	if err := s.Locks().SetConfig("bkt", LockConfig{Enabled: true, DefaultMode: LockCompliance, Days: 3}); err != nil {
		t.Fatal(err)
	}
	if cfg, err := s.Locks().Config("bkt"); err != nil || cfg.Days != 3 {
		t.Fatalf("config: %+v %v", cfg, err)
	}
	big := strings.Repeat("x", 300<<10) // staged, not created in place
	for _, body := range []string{"small", big} {
		info := put(t, s, "bkt", "d", body, Meta{})
		lock, _, err := s.Locks().Get("bkt", "d", info.VersionID)
		want := clock.now().AddDate(0, 0, 3)
		if err != nil || lock.Mode != LockCompliance || !lock.Until.Equal(want) {
			t.Fatalf("default retention: %+v %v, want COMPLIANCE until %v", lock, err, want)
		}
		if !immutableFlag(t, s, "d", info.VersionID) {
			t.Fatal("default COMPLIANCE without the flag")
		}
	}
	// A copy gets the default, not the source's lock.
	src := put(t, s, "bkt", "src", "s", Meta{Lock: ObjectLock{LegalHold: true, Retention: Retention{LockGovernance, clock.now().Add(30 * day)}}})
	cp, err := s.Versions().Copy("bkt", "src", src.VersionID, "bkt", "copy", nil)
	if err != nil {
		t.Fatal(err)
	}
	lock, _, err := s.Locks().Get("bkt", "copy", cp.VersionID)
	if err != nil || lock.LegalHold || lock.Mode != LockCompliance {
		t.Fatalf("copy's lock: %+v %v", lock, err)
	}
	// Without object lock a lock is refused, and so is the config.
	if err := s.CreateBucket("plain"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutObject("plain", "k", strings.NewReader("x"), 1, Meta{Lock: ObjectLock{LegalHold: true}}); !errors.Is(err, ErrNoLockConfig) {
		t.Fatalf("lock in a bucket without object lock: %v", err)
	}
	if err := s.Locks().SetConfig("plain", LockConfig{Enabled: true}); !errors.Is(err, ErrInvalidBucketState) {
		t.Fatalf("object lock on an unversioned bucket: %v", err)
	}
	if _, err := s.Locks().SetLegalHold("plain", "k", "", true); !errors.Is(err, ErrNoLockConfig) {
		t.Fatalf("legal hold without object lock: %v", err)
	}
	if err := s.Versions().SetState("plain", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	if err := s.Locks().SetConfig("plain", LockConfig{Enabled: true}); err != nil {
		t.Fatalf("object lock on a versioned bucket: %v", err)
	}
}

// mLocked is the model's version in TestObjectLockModel.
type mLocked struct {
	id     string
	marker bool
	lock   ObjectLock
}

// TestObjectLockModel drives locked and unlocked versions through
// writes, markers, deletes by ID with and without bypass, retention
// changes, legal holds and time passing, against a model of S3's rules;
// then the kernel shows the immutable flag on exactly the versions the
// store says are locked, refuses to remove them, and xfs_repair is clean.
func TestObjectLockModel(t *testing.T) {
	for _, seed := range []int64{1, 2} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { objectLockModel(t, seed, 400) })
	}
}

func objectLockModel(t *testing.T, seed int64, ops int) {
	s, img, clock := newLockStore(t)
	rng := rand.New(rand.NewSource(seed))
	keys := []string{"a", "b", "c", "d", "e"}
	model := map[string][]mLocked{} // newest first
	randomRetention := func(now time.Time) Retention {
		switch rng.Intn(4) {
		case 0:
			return Retention{}
		case 1:
			return Retention{LockGovernance, now.Add(time.Duration(1+rng.Intn(72)) * time.Hour)}
		}
		return Retention{LockCompliance, now.Add(time.Duration(1+rng.Intn(72)) * time.Hour)}
	}
	pick := func(k string) (int, bool) {
		if len(model[k]) == 0 {
			return 0, false
		}
		return rng.Intn(len(model[k])), true
	}
	for i := 0; i < ops; i++ {
		k := keys[rng.Intn(len(keys))]
		now := clock.now()
		switch op := rng.Intn(10); {
		case op < 3:
			lock := ObjectLock{Retention: randomRetention(now), LegalHold: rng.Intn(5) == 0}
			info := put(t, s, "bkt", k, fmt.Sprint(i), Meta{Lock: lock})
			model[k] = append([]mLocked{{id: info.VersionID, lock: lock}}, model[k]...)
		case op == 3:
			res, err := s.Versions().Delete("bkt", k, "")
			if err != nil {
				t.Fatalf("op %d: marker on %q: %v", i, k, err)
			}
			model[k] = append([]mLocked{{id: res.VersionID, marker: true}}, model[k]...)
		case op == 4:
			j, ok := pick(k)
			if !ok {
				continue
			}
			v, bypass := model[k][j], rng.Intn(2) == 0
			_, err := s.Versions().DeleteWith("bkt", k, v.id, DeleteOptions{BypassGovernance: bypass})
			if protected := v.lock.protects(now, bypass); protected != errors.Is(err, ErrObjectLocked) || (!protected && err != nil) {
				t.Fatalf("op %d: delete %s@%s (lock %+v, bypass %v, now %v): %v", i, k, v.id, v.lock, bypass, now, err)
			}
			if err == nil {
				model[k] = append(model[k][:j:j], model[k][j+1:]...)
			}
		case op == 5 || op == 6:
			j, ok := pick(k)
			if !ok {
				continue
			}
			v, bypass := model[k][j], rng.Intn(2) == 0
			r := randomRetention(now)
			_, err := s.Locks().SetRetention("bkt", k, v.id, r, bypass)
			var want error
			switch {
			case v.marker:
				want = ErrMethodNotAllowed
			case checkRetentionChange(v.lock.Retention, r, now, bypass) != nil:
				want = ErrObjectLocked
			}
			if !errors.Is(err, want) || (want == nil && err != nil) {
				t.Fatalf("op %d: retention %+v on %s@%s (lock %+v, bypass %v): %v, want %v", i, r, k, v.id, v.lock, bypass, err, want)
			}
			if err == nil {
				model[k][j].lock.Retention = r
			}
		case op == 7:
			j, ok := pick(k)
			if !ok {
				continue
			}
			on := rng.Intn(2) == 0
			_, err := s.Locks().SetLegalHold("bkt", k, model[k][j].id, on)
			if model[k][j].marker != errors.Is(err, ErrMethodNotAllowed) || (!model[k][j].marker && err != nil) {
				t.Fatalf("op %d: legal hold on %s@%s: %v", i, k, model[k][j].id, err)
			}
			if err == nil {
				model[k][j].lock.LegalHold = on
			}
		default:
			clock.advance(time.Duration(rng.Intn(12)) * time.Hour)
		}
	}
	now := clock.now()
	locked := map[string]bool{} // kernel path → immutable
	for k, vs := range model {
		for j, v := range vs {
			if v.marker {
				continue
			}
			lock, _, err := s.Locks().Get("bkt", k, v.id)
			if err != nil || lock.Mode != v.lock.Mode || !lock.Until.Equal(v.lock.Until) || lock.LegalHold != v.lock.LegalHold {
				t.Fatalf("%s@%s: lock %+v %v, model %+v", k, v.id, lock, err, v.lock)
			}
			flag := immutableFlag(t, s, k, v.id)
			// The flag may outlive COMPLIANCE retention until the version
			// is touched, never the other way round.
			if v.lock.immutableAt(now) && !flag || flag && !v.lock.LegalHold && v.lock.Mode != LockCompliance {
				t.Fatalf("%s@%s: flag %v with lock %+v at %v", k, v.id, flag, v.lock, now)
			}
			p := filepath.Join("bkt", k)
			if j > 0 || vs[0].marker {
				p = filepath.Join("bkt", versionsDir, besideName(k), v.id)
			}
			locked[p] = flag
		}
	}
	nlocked := 0
	for _, flag := range locked {
		if flag {
			nlocked++
		}
	}
	if nlocked == 0 || nlocked == len(locked) {
		t.Fatalf("%d of %d versions locked at the end: the run tests too little", nlocked, len(locked))
	}
	t.Logf("%d versions, %d immutable", len(locked), nlocked)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount, "lsattr")
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	for p, flag := range locked {
		out, err := exec.Command("lsattr", "-d", filepath.Join(mnt, p)).CombinedOutput()
		if err != nil {
			t.Fatalf("lsattr %s: %v: %s", p, err, out)
		}
		attrs, _, _ := strings.Cut(string(out), " ")
		if strings.Contains(attrs, "i") != flag {
			t.Errorf("%s: lsattr %q, store's flag %v", p, attrs, flag)
		}
	}
}

// FuzzLockConfig: the stored configuration decodes or is refused, and
// what decodes encodes back the same.
func FuzzLockConfig(f *testing.F) {
	for _, s := range []string{"Enabled", "Enabled GOVERNANCE 30d", "Enabled COMPLIANCE 7y", "Enabled X 1d", "Enabled GOVERNANCE -1d", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseLockConfig(s)
		if err != nil {
			return
		}
		if again, err := parseLockConfig(c.String()); err != nil || again != c {
			t.Fatalf("%q: %+v, again %+v %v", s, c, again, err)
		}
		if err := c.check(); err != nil {
			t.Fatalf("%q parsed but does not check: %v", s, err)
		}
	})
}
