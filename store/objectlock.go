package store

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Object lock (package doc, "Object lock"): a bucket's configuration, and
// the retention and legal hold of its versions with the rules that
// guard them.

// Retention modes, as S3 names them.
const (
	LockGovernance = "GOVERNANCE"
	LockCompliance = "COMPLIANCE"
)

// Xattrs of object lock.
const (
	// xattrObjectLock on a bucket's directory holds its configuration
	// (LockConfig.String).
	xattrObjectLock = xattrPrefix + "object-lock"
	// xattrLockMode and xattrLockUntil on a version hold its retention
	// (the mode, and the retain-until date in RFC 3339 UTC).
	xattrLockMode  = xattrPrefix + "lock-mode"
	xattrLockUntil = xattrPrefix + "lock-until"
	// xattrLegalHold on a version is "ON" while it has a legal hold.
	xattrLegalHold = xattrPrefix + "legal-hold"
)

var (
	// ErrObjectLocked: the change would delete, replace or weaken the
	// lock of a version under retention or a legal hold.
	ErrObjectLocked = errors.New("the object version is protected by object lock")
	// ErrNoLockConfig: the bucket has no object lock.
	ErrNoLockConfig = errors.New("the bucket has no object lock configuration")
	// ErrInvalidRetention: a mode other than GOVERNANCE or COMPLIANCE, a
	// retain-until date that is not in the future, or a default rule
	// without exactly one of a positive Days or Years.
	ErrInvalidRetention = errors.New("invalid retention")
	// ErrInvalidBucketState: object lock needs versioning Enabled, and a
	// bucket with object lock cannot suspend it.
	ErrInvalidBucketState = errors.New("invalid bucket state for object lock")
)

// Retention is how long a version is kept: until Until, in Mode (""
// means none). GOVERNANCE retention can be shortened or removed by a
// change that bypasses governance; COMPLIANCE retention by nobody.
type Retention struct {
	Mode  string
	Until time.Time
}

// activeAt tells whether r protects its version at now.
func (r Retention) activeAt(now time.Time) bool { return r.Mode != "" && now.Before(r.Until) }

// ObjectLock is a version's lock: its retention and legal hold.
type ObjectLock struct {
	Retention
	LegalHold bool
}

// immutableAt tells whether the version's inode carries the engine's
// immutable flag at now: while it has a legal hold or COMPLIANCE
// retention that has not ended. GOVERNANCE retention, which a bypass may
// lift, does not set it.
func (l ObjectLock) immutableAt(now time.Time) bool {
	return l.LegalHold || (l.Mode == LockCompliance && l.activeAt(now))
}

// protects tells whether l forbids deleting its version at now; bypass
// lifts GOVERNANCE retention.
func (l ObjectLock) protects(now time.Time, bypass bool) bool {
	if l.LegalHold {
		return true
	}
	if !l.activeAt(now) {
		return false
	}
	return l.Mode == LockCompliance || !bypass
}

// isZero tells whether l holds nothing.
func (l ObjectLock) isZero() bool { return l.Mode == "" && !l.LegalHold }

// xattrs are the attributes that store l, and the names of those it
// leaves out (to remove).
func (l ObjectLock) xattrs() (set []xfs.Xattr, remove []string) {
	if l.Mode != "" {
		set = append(set, xattrOf(xattrLockMode, l.Mode), xattrOf(xattrLockUntil, formatLockTime(l.Until)))
	} else {
		remove = append(remove, xattrLockMode, xattrLockUntil)
	}
	if l.LegalHold {
		set = append(set, xattrOf(xattrLegalHold, "ON"))
	} else {
		remove = append(remove, xattrLegalHold)
	}
	return set, remove
}

// putXattrs adds l's attributes to out (Meta.metaXattrs).
func (l ObjectLock) putXattrs(out map[string]string) {
	set, _ := l.xattrs()
	for _, x := range set {
		out[x.FullName()] = string(x.Value)
	}
}

// readLock decodes a version's lock from its attributes by name. Values
// other tools set that do not parse read as no lock rather than making
// the object unreadable; the flag on the inode still guards it.
func readLock(byName map[string]string) ObjectLock {
	var l ObjectLock
	if m := byName[xattrLockMode]; m == LockGovernance || m == LockCompliance {
		if t, err := time.Parse(time.RFC3339Nano, byName[xattrLockUntil]); err == nil {
			l.Retention = Retention{Mode: m, Until: t}
		}
	}
	l.LegalHold = byName[xattrLegalHold] == "ON"
	return l
}

func formatLockTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// CheckRetention checks a retention a client asks for at now: a known
// mode and a retain-until date in the future, or none at all.
func CheckRetention(r Retention, now time.Time) error {
	switch r.Mode {
	case "":
		if !r.Until.IsZero() {
			return fmt.Errorf("a retain-until date without a mode: %w", ErrInvalidRetention)
		}
		return nil
	case LockGovernance, LockCompliance:
	default:
		return fmt.Errorf("mode %q (GOVERNANCE or COMPLIANCE): %w", r.Mode, ErrInvalidRetention)
	}
	if !r.Until.After(now) {
		return fmt.Errorf("retain-until date %s is not in the future: %w", formatLockTime(r.Until), ErrInvalidRetention)
	}
	return nil
}

// checkRetentionChange applies S3's rules to a change of a version's
// retention from old to r at now: COMPLIANCE retention that has not
// ended may only be extended, by anyone; GOVERNANCE retention may be
// extended or made COMPLIANCE, and shortened or removed only with
// bypass. Retention that has ended changes freely.
func checkRetentionChange(old, r Retention, now time.Time, bypass bool) error {
	if !old.activeAt(now) {
		return nil
	}
	stronger := r.Mode != "" && !r.Until.Before(old.Until) && (r.Mode == LockCompliance || old.Mode == LockGovernance)
	if stronger || (old.Mode == LockGovernance && bypass) {
		return nil
	}
	what := "shortened or removed"
	if old.Mode == LockCompliance && r.Mode == LockGovernance {
		what = "turned into GOVERNANCE"
	}
	return fmt.Errorf("%s retention until %s cannot be %s: %w", old.Mode, formatLockTime(old.Until), what, ErrObjectLocked)
}

// LockConfig is a bucket's object-lock configuration: whether object
// lock is on (it cannot be turned off), and the retention new versions
// get when their write names none: DefaultMode for Days days or Years
// years (exactly one of them positive), or none when DefaultMode is "".
type LockConfig struct {
	Enabled     bool
	DefaultMode string
	Days, Years int
}

// String is the stored form: "Enabled", then the mode and "<n>d" or
// "<n>y" (getfattr shows it).
func (c LockConfig) String() string {
	if !c.Enabled {
		return ""
	}
	switch {
	case c.DefaultMode == "":
		return "Enabled"
	case c.Years > 0:
		return fmt.Sprintf("Enabled %s %dy", c.DefaultMode, c.Years)
	}
	return fmt.Sprintf("Enabled %s %dd", c.DefaultMode, c.Days)
}

// maxLockDays bounds a default retention (100 years), as S3 does.
const maxLockDays = 36500

// check validates a configuration a client asks for.
func (c LockConfig) check() error {
	if !c.Enabled {
		return fmt.Errorf("object lock cannot be turned off: %w", ErrInvalidRetention)
	}
	if c.DefaultMode == "" {
		if c.Days != 0 || c.Years != 0 {
			return fmt.Errorf("a default retention period without a mode: %w", ErrInvalidRetention)
		}
		return nil
	}
	if c.DefaultMode != LockGovernance && c.DefaultMode != LockCompliance {
		return fmt.Errorf("mode %q (GOVERNANCE or COMPLIANCE): %w", c.DefaultMode, ErrInvalidRetention)
	}
	if (c.Days > 0) == (c.Years > 0) || c.Days < 0 || c.Years < 0 {
		return fmt.Errorf("a default retention needs exactly one of a positive Days or Years: %w", ErrInvalidRetention)
	}
	if c.Days > maxLockDays || c.Years > maxLockDays/365 {
		return fmt.Errorf("a default retention of at most %d days or %d years: %w", maxLockDays, maxLockDays/365, ErrInvalidRetention)
	}
	return nil
}

// parseLockConfig reads the stored form.
func parseLockConfig(s string) (LockConfig, error) {
	f := strings.Fields(s)
	if len(f) == 0 || f[0] != "Enabled" {
		return LockConfig{}, fmt.Errorf("object lock configuration %q: %w", s, ErrInvalidRetention)
	}
	c := LockConfig{Enabled: true}
	if len(f) == 1 {
		return c, nil
	}
	if len(f) != 3 || len(f[2]) < 2 {
		return LockConfig{}, fmt.Errorf("object lock configuration %q: %w", s, ErrInvalidRetention)
	}
	n, err := strconv.Atoi(f[2][:len(f[2])-1])
	if err != nil {
		return LockConfig{}, fmt.Errorf("object lock configuration %q: %w", s, ErrInvalidRetention)
	}
	c.DefaultMode = f[1]
	switch f[2][len(f[2])-1] {
	case 'd':
		c.Days = n
	case 'y':
		c.Years = n
	}
	return c, c.check()
}

// defaultRetention is the retention a version written at now gets from
// the bucket's default rule.
func (c LockConfig) defaultRetention(now time.Time) Retention {
	if c.DefaultMode == "" {
		return Retention{}
	}
	return Retention{Mode: c.DefaultMode, Until: now.AddDate(c.Years, 0, c.Days)}
}

// lockConfig returns the configuration of the bucket whose directory is
// b (held by the caller); a bucket without object lock has the zero one.
func (s *store) lockConfig(b format.Ino) (LockConfig, error) {
	return s.locksCfg.get(b, func() (LockConfig, error) {
		val, err := s.bucketXattr(b, xattrObjectLock)
		if err != nil || val == "" {
			return LockConfig{}, err
		}
		return parseLockConfig(val)
	})
}

// lockOfAttrs finds the lock among a new version's attributes.
func lockOfAttrs(attrs []xfs.Xattr) ObjectLock {
	byName := map[string]string{}
	for _, x := range attrs {
		switch full := x.FullName(); full {
		case xattrLockMode, xattrLockUntil, xattrLegalHold:
			byName[full] = string(x.Value)
		}
	}
	return readLock(byName)
}

// versionLock is what object lock adds to a new version: the
// attributes of its bucket's default retention when its write asked for
// none, and whether its inode is immutable.
type versionLock struct {
	add       []xfs.Xattr
	immutable bool
}

// newVersionLock is the lock a new version of a bucket (state its
// versioning) gets when placed at now: the one its write asked for, else
// the bucket's default retention. A lock asked for in a bucket without
// object lock gives ErrNoLockConfig.
func (s *store) newVersionLock(bucket format.Ino, state string, attrs []xfs.Xattr, now time.Time) (versionLock, error) {
	lock := lockOfAttrs(attrs)
	var cfg LockConfig
	if state != "" {
		var err error
		if cfg, err = s.lockConfig(bucket); err != nil {
			return versionLock{}, err
		}
	}
	if !cfg.Enabled {
		if !lock.isZero() {
			return versionLock{}, ErrNoLockConfig
		}
		return versionLock{}, nil
	}
	var vl versionLock
	if lock.Mode == "" {
		if lock.Retention = cfg.defaultRetention(now); lock.Mode != "" {
			vl.add, _ = ObjectLock{Retention: lock.Retention}.xattrs()
		}
	}
	vl.immutable = lock.immutableAt(now)
	return vl, nil
}

// isImmutable tells whether a stat shows the engine's immutable flag.
func isImmutable(st *xfs.Stat) bool { return st.Flags&format.DiflagImmutable != 0 }
