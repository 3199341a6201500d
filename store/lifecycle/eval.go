package lifecycle

import (
	"math"
	"slices"
	"strings"
	"time"
)

// Object is one version as the scanner sees it.
type Object struct {
	Key             string
	Size            int64
	Tags            []Tag     // filled only when the config NeedsTags
	ModTime         time.Time // when the version was written (its creation)
	IsLatest        bool
	DeleteMarker    bool
	NoncurrentSince time.Time // when it stopped being current (noncurrent versions)
	NewerNoncurrent int       // noncurrent versions of its key newer than it
	OnlyMarker      bool      // a latest delete marker with no other version of its key left
}

// Action is what a configuration decides for one version.
type Action int

const (
	None          Action = iota
	ExpireCurrent        // the latest version (not a marker) expires: delete it (unversioned), or add a delete marker (versioning on)
	DeleteVersion        // a noncurrent version (or noncurrent marker) goes for good
	DeleteMarker         // a latest delete marker with no versions left goes (ExpiredObjectDeleteMarker)
)

// day24 is a day as S3 counts it; other lengths are for tests and demos.
const day24 = 24 * time.Hour

// never is an expiry too far away to count.
var never = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// NeedsTags tells whether any enabled rule filters by tags (the scanner
// then reads an object's tags).
func (c Config) NeedsTags() bool {
	return slices.ContainsFunc(c.Rules, func(r Rule) bool { return r.Enabled && len(r.Filter.Tags) > 0 })
}

// Eval decides what happens to o at now, where a "day" lasts day (24h
// normally; shorter only in tests and demos); ruleID names the rule that
// decided. The state of o (latest, marker, noncurrent) admits one kind
// of action only, so rules never conflict: the first enabled rule in
// configuration order whose filter matches and whose time has come
// decides.
func (c Config) Eval(o Object, now time.Time, day time.Duration) (a Action, ruleID string) {
	for i := range c.Rules {
		r := &c.Rules[i]
		if !r.Enabled || !r.Filter.matches(o) {
			continue
		}
		if a := r.decide(o, now, day); a != None {
			return a, r.ID
		}
	}
	return None, ""
}

func (r *Rule) decide(o Object, now time.Time, day time.Duration) Action {
	e, ne := r.Expiration, r.NoncurrentExpiration
	switch {
	case !o.IsLatest:
		if ne != nil && o.NewerNoncurrent >= ne.NewerNoncurrentVersions &&
			(ne.NoncurrentDays == 0 || !now.Before(ExpiresAt(o.NoncurrentSince, ne.NoncurrentDays, day))) {
			return DeleteVersion
		}
	case o.DeleteMarker:
		// An Expiration by age also removes a marker left alone once the
		// marker is that old (S3: "When you specify the Days tag, Amazon
		// S3 automatically performs ExpiredObjectDeleteMarker cleanup").
		if e != nil && o.OnlyMarker && (e.ExpiredObjectDeleteMarker || e.due(o.ModTime, now, day)) {
			return DeleteMarker
		}
	default:
		if e != nil && e.due(o.ModTime, now, day) {
			return ExpireCurrent
		}
	}
	return None
}

// at is when a version written at modTime expires by e; ok is false
// for an Expiration that only removes markers.
func (e *Expiration) at(modTime time.Time, day time.Duration) (t time.Time, ok bool) {
	switch {
	case e.Days > 0:
		return ExpiresAt(modTime, e.Days, day), true
	case !e.Date.IsZero():
		return e.Date, true
	}
	return time.Time{}, false
}

func (e *Expiration) due(modTime, now time.Time, day time.Duration) bool {
	t, ok := e.at(modTime, day)
	return ok && !now.Before(t)
}

// Expiry is when the current object o expires by an Expiration rule (for
// x-amz-expiration on PUT, GET and HEAD): the earliest over matching
// enabled rules (the first in configuration order among equals); ok false
// when none applies.
func (c Config) Expiry(o Object, day time.Duration) (at time.Time, ruleID string, ok bool) {
	if o.DeleteMarker {
		return time.Time{}, "", false
	}
	for i := range c.Rules {
		r := &c.Rules[i]
		if !r.Enabled || r.Expiration == nil || !r.Filter.matches(o) {
			continue
		}
		if t, has := r.Expiration.at(o.ModTime, day); has && (!ok || t.Before(at)) {
			at, ruleID, ok = t, r.ID, true
		}
	}
	return at, ruleID, ok
}

// AbortUpload tells whether an upload of key initiated at initiated is
// abandoned at now by an AbortIncompleteMultipartUpload rule. Uploads are
// matched by prefix only: S3 refuses tag filters on such rules, and an
// upload has no size yet.
func (c Config) AbortUpload(key string, initiated, now time.Time, day time.Duration) (ruleID string, ok bool) {
	for _, r := range c.Rules {
		if r.Enabled && r.AbortIncompleteUpload > 0 && strings.HasPrefix(key, r.Filter.Prefix) &&
			!now.Before(ExpiresAt(initiated, r.AbortIncompleteUpload, day)) {
			return r.ID, true
		}
	}
	return "", false
}

// ExpiresAt is when an age of days (counted from t) is reached, rounded up
// to the next day boundary: with day = 24h the next midnight UTC, as S3
// does ("the next midnight UTC after the age is reached"); other day
// lengths round up to multiples of day since the Unix epoch. A time
// already on a boundary stays. day <= 0 counts as 24h.
func ExpiresAt(t time.Time, days int, day time.Duration) time.Time {
	if day <= 0 {
		day = day24
	}
	if day == day24 {
		// Calendar days: no overflow for any number of days.
		at := t.UTC().AddDate(0, 0, days)
		midnight := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
		if midnight.Before(at) {
			midnight = midnight.AddDate(0, 0, 1)
		}
		return midnight
	}
	// Short days, for tests and demos: times within ±292 years of the
	// epoch, where a time.Duration reaches; beyond, never.
	if int64(days) > math.MaxInt64/int64(day) {
		return never
	}
	at := t.UTC().Add(time.Duration(days) * day)
	rem := at.Sub(time.Unix(0, 0)) % day
	switch {
	case rem > 0:
		at = at.Add(day - rem)
	case rem < 0:
		at = at.Add(-rem)
	}
	return at
}

// matches tells whether the filter selects o. Delete markers have neither
// size nor tags: size bounds do not apply to them (as MinIO reads S3),
// and a filter with tags never selects one.
func (f *Filter) matches(o Object) bool {
	if !strings.HasPrefix(o.Key, f.Prefix) {
		return false
	}
	for _, t := range f.Tags {
		if !slices.Contains(o.Tags, t) {
			return false
		}
	}
	if o.DeleteMarker {
		return true
	}
	return (f.SizeGreaterThan == 0 || o.Size > f.SizeGreaterThan) &&
		(f.SizeLessThan == 0 || o.Size < f.SizeLessThan)
}
