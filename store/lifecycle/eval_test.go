package lifecycle

import (
	"testing"
	"time"
)

const day = 24 * time.Hour

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestExpiresAt(t *testing.T) {
	tests := []struct {
		name string
		t    string
		days int
		day  time.Duration
		want time.Time
	}{
		// AWS, "Lifecycle rules: Based on an object's age": an object made
		// 1/15/2014 10:30 AM UTC with 3 days is due 1/19/2014 00:00 UTC.
		{"AWS example: next midnight after the age", "2014-01-15T10:30:00Z", 3, day, utc("2014-01-19T00:00:00Z")},
		{"midnight stays", "2014-01-15T00:00:00Z", 3, day, utc("2014-01-18T00:00:00Z")},
		{"one nanosecond past midnight", "2014-01-15T00:00:00.000000001Z", 1, day, utc("2014-01-17T00:00:00Z")},
		{"other zones count in UTC", "2014-01-15T23:30:00-05:00", 1, day, utc("2014-01-18T00:00:00Z")},
		{"zero day is 24h", "2014-01-15T10:30:00Z", 1, 0, utc("2014-01-17T00:00:00Z")},
		{"a month boundary", "2024-02-28T12:00:00Z", 1, day, utc("2024-03-01T00:00:00Z")},
		{"the largest Days", "2014-01-15T10:30:00Z", 1<<31 - 1, day, time.Date(2014, 1, 16+1<<31-1, 0, 0, 0, 0, time.UTC)},
		{"short days: multiples of day", "1970-01-01T00:00:25Z", 1, 10 * time.Second, utc("1970-01-01T00:00:40Z")},
		{"short days: on a boundary", "1970-01-01T00:00:30Z", 2, 10 * time.Second, utc("1970-01-01T00:00:50Z")},
		{"short days before the epoch", "1969-12-31T23:59:55Z", 0, 10 * time.Second, utc("1970-01-01T00:00:00Z")},
		{"short days beyond a Duration", "2014-01-15T10:30:00Z", 1<<31 - 1, 1000 * time.Hour, utc("9999-12-31T00:00:00Z")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExpiresAt(utc(tt.t), tt.days, tt.day); !got.Equal(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// Rules of AWS's user guide, "Examples of S3 Lifecycle configurations"
// and "Lifecycle configuration elements".
var (
	taxRule = Rule{ID: "Transition and Expiration Rule", Enabled: true, Filter: Filter{Prefix: "tax/"},
		Expiration: &Expiration{Days: 3650}}
	disabledRule = Rule{ID: "Rule1", Enabled: false, Filter: Filter{Prefix: "logs/"},
		Expiration: &Expiration{Days: 1}}
	noncurrentRule = Rule{ID: "sample-rule", Enabled: true,
		NoncurrentExpiration: &NoncurrentExpiration{NoncurrentDays: 90}}
	keepFiveRule = Rule{ID: "keep-5", Enabled: true,
		NoncurrentExpiration: &NoncurrentExpiration{NoncurrentDays: 30, NewerNoncurrentVersions: 5}}
	markerRule = Rule{ID: "Rule 2", Enabled: true, Filter: Filter{Prefix: "logs/"},
		Expiration: &Expiration{ExpiredObjectDeleteMarker: true}}
	tagRule = Rule{ID: "tags", Enabled: true, Filter: Filter{Prefix: "tax/", Tags: []Tag{{"key1", "value1"}, {"key2", ""}}},
		Expiration: &Expiration{Days: 1}}
	sizeRule = Rule{ID: "Allow small object transitions", Enabled: true, Filter: Filter{SizeGreaterThan: 500, SizeLessThan: 64000},
		Expiration: &Expiration{Days: 1}, NoncurrentExpiration: &NoncurrentExpiration{NoncurrentDays: 1}}
	dateRule = Rule{ID: "date", Enabled: true, Expiration: &Expiration{Date: utc("2026-12-31T00:00:00Z")}}
)

func TestEval(t *testing.T) {
	made := utc("2026-01-15T10:30:00Z")
	current := func(key string, size int64, tags ...Tag) Object {
		return Object{Key: key, Size: size, Tags: tags, ModTime: made, IsLatest: true}
	}
	noncurrent := func(key string, newer int) Object {
		return Object{Key: key, Size: 1, ModTime: made.Add(-day), NoncurrentSince: made, NewerNoncurrent: newer}
	}
	marker := func(key string, only bool) Object {
		return Object{Key: key, ModTime: made, IsLatest: true, DeleteMarker: true, OnlyMarker: only}
	}
	tests := []struct {
		name   string
		rules  []Rule
		o      Object
		now    string
		want   Action
		wantID string
	}{
		{"Example 1: tax/ after 3650 days", []Rule{taxRule}, current("tax/doc1.txt", 1), "2036-01-14T00:00:00Z", ExpireCurrent, taxRule.ID},
		{"Example 1: tax/ one second early", []Rule{taxRule}, current("tax/doc1.txt", 1), "2036-01-13T23:59:59Z", None, ""},
		{"Example 1: outside the prefix", []Rule{taxRule}, current("doc1.txt", 1), "2040-01-01T00:00:00Z", None, ""},
		{"Example 2: a disabled rule does nothing", []Rule{disabledRule}, current("logs/a", 1), "2040-01-01T00:00:00Z", None, ""},
		{"Example 6: noncurrent 90 days", []Rule{noncurrentRule}, noncurrent("a", 0), "2026-04-16T00:00:00Z", DeleteVersion, noncurrentRule.ID},
		{"Example 6: noncurrent 89 days", []Rule{noncurrentRule}, noncurrent("a", 0), "2026-04-15T23:59:59Z", None, ""},
		{"Example 6: the current version stays", []Rule{noncurrentRule}, current("a", 1), "2040-01-01T00:00:00Z", None, ""},
		{"Example 6: a noncurrent marker goes too", []Rule{noncurrentRule}, Object{Key: "a", DeleteMarker: true, NoncurrentSince: made}, "2026-04-16T00:00:00Z", DeleteVersion, noncurrentRule.ID},
		{"NewerNoncurrentVersions: the fifth newest is kept", []Rule{keepFiveRule}, noncurrent("a", 4), "2030-01-01T00:00:00Z", None, ""},
		{"NewerNoncurrentVersions: the sixth newest goes", []Rule{keepFiveRule}, noncurrent("a", 5), "2026-02-15T00:00:00Z", DeleteVersion, keepFiveRule.ID},
		{"NewerNoncurrentVersions: not before its days", []Rule{keepFiveRule}, noncurrent("a", 9), "2026-02-14T23:59:59Z", None, ""},
		{"NewerNoncurrentVersions alone: no age", []Rule{{ID: "n", Enabled: true, NoncurrentExpiration: &NoncurrentExpiration{NewerNoncurrentVersions: 2}}}, noncurrent("a", 2), "2026-01-15T10:30:00Z", DeleteVersion, "n"},
		{"Example 7: a marker left alone goes at once", []Rule{markerRule}, marker("logs/a", true), "2026-01-15T10:30:00Z", DeleteMarker, markerRule.ID},
		{"Example 7: a marker over versions stays", []Rule{markerRule}, marker("logs/a", false), "2040-01-01T00:00:00Z", None, ""},
		{"Example 7: ExpiredObjectDeleteMarker leaves objects", []Rule{markerRule}, current("logs/a", 1), "2040-01-01T00:00:00Z", None, ""},
		{"Days removes a marker left alone once old enough", []Rule{taxRule}, marker("tax/a", true), "2036-01-14T00:00:00Z", DeleteMarker, taxRule.ID},
		{"Days: a marker left alone, too young", []Rule{taxRule}, marker("tax/a", true), "2036-01-13T00:00:00Z", None, ""},
		{"Date: expires from midnight of the date", []Rule{dateRule}, current("a", 1), "2026-12-31T00:00:00Z", ExpireCurrent, "date"},
		{"Date: not the day before", []Rule{dateRule}, current("a", 1), "2026-12-30T23:59:59Z", None, ""},
		{"Date: objects made after the date too", []Rule{dateRule}, Object{Key: "a", ModTime: utc("2027-03-01T00:00:00Z"), IsLatest: true}, "2027-03-01T00:00:01Z", ExpireCurrent, "date"},
		{"tags: all present with their values", []Rule{tagRule}, current("tax/a", 1, Tag{"key2", ""}, Tag{"other", "x"}, Tag{"key1", "value1"}), "2026-01-17T00:00:00Z", ExpireCurrent, "tags"},
		{"tags: one missing", []Rule{tagRule}, current("tax/a", 1, Tag{"key1", "value1"}), "2040-01-01T00:00:00Z", None, ""},
		{"tags: another value", []Rule{tagRule}, current("tax/a", 1, Tag{"key1", "value1"}, Tag{"key2", "v"}), "2040-01-01T00:00:00Z", None, ""},
		{"tags: a marker has none", []Rule{tagRule}, marker("tax/a", true), "2040-01-01T00:00:00Z", None, ""},
		{"Example 9: size within the bounds", []Rule{sizeRule}, current("a", 501), "2026-01-17T00:00:00Z", ExpireCurrent, sizeRule.ID},
		{"Example 9: greater than is strict", []Rule{sizeRule}, current("a", 500), "2040-01-01T00:00:00Z", None, ""},
		{"Example 9: less than is strict", []Rule{sizeRule}, current("a", 64000), "2040-01-01T00:00:00Z", None, ""},
		{"size bounds do not apply to markers", []Rule{sizeRule}, Object{Key: "a", DeleteMarker: true, NoncurrentSince: made}, "2026-01-17T00:00:00Z", DeleteVersion, sizeRule.ID},
		{"Expiration leaves noncurrent versions", []Rule{taxRule}, noncurrent("tax/a", 0), "2040-01-01T00:00:00Z", None, ""},
		{"the first deciding rule names the action", []Rule{disabledRule, {ID: "late", Enabled: true, Expiration: &Expiration{Days: 30}}, {ID: "first", Enabled: true, Expiration: &Expiration{Days: 1}}, {ID: "second", Enabled: true, Expiration: &Expiration{Days: 2}}},
			current("logs/a", 1), "2026-02-01T00:00:00Z", ExpireCurrent, "first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, id := Config{Rules: tt.rules}.Eval(tt.o, utc(tt.now), day)
			if a != tt.want || id != tt.wantID {
				t.Errorf("Eval = %v %q, want %v %q", a, id, tt.want, tt.wantID)
			}
		})
	}
}

// TestEvalShortDay: with a short day, Days count in that day, a Date
// stays a date.
func TestEvalShortDay(t *testing.T) {
	c := Config{Rules: []Rule{{ID: "d", Enabled: true, Expiration: &Expiration{Days: 2}}}}
	o := Object{Key: "k", ModTime: time.Unix(25, 0), IsLatest: true}
	for _, tt := range []struct {
		now  int64
		want Action
	}{{49, None}, {50, ExpireCurrent}} {
		if a, _ := c.Eval(o, time.Unix(tt.now, 0), 10*time.Second); a != tt.want {
			t.Errorf("at %ds: %v, want %v", tt.now, a, tt.want)
		}
	}
	c = Config{Rules: []Rule{dateRule}}
	if a, _ := c.Eval(o, utc("2026-12-30T23:59:59Z"), time.Second); a != None {
		t.Errorf("a Date rule with short days: %v before the date", a)
	}
}

func TestExpiry(t *testing.T) {
	made := utc("2026-01-15T10:30:00Z")
	obj := Object{Key: "tax/a", Size: 1000, ModTime: made, IsLatest: true, Tags: []Tag{{"key1", "value1"}, {"key2", ""}}}
	days := func(id string, n int) Rule { return Rule{ID: id, Enabled: true, Expiration: &Expiration{Days: n}} }
	tests := []struct {
		name   string
		rules  []Rule
		o      Object
		want   string // "": none
		wantID string
	}{
		{"AWS: the x-amz-expiration example's kind of rule", []Rule{taxRule}, obj, "2036-01-14T00:00:00Z", taxRule.ID},
		{"overlapping expirations: the shorter is honoured", []Rule{days("long", 30), days("short", 7)}, obj, "2026-01-23T00:00:00Z", "short"},
		{"equal ones: the first in order", []Rule{days("a", 7), days("b", 7)}, obj, "2026-01-23T00:00:00Z", "a"},
		{"a Date before the Days", []Rule{days("days", 400), dateRule}, obj, "2026-12-31T00:00:00Z", "date"},
		{"tags and size filters match", []Rule{tagRule, sizeRule}, obj, "2026-01-17T00:00:00Z", "tags"},
		{"disabled rules are not counted", []Rule{disabledRule, days("on", 9)}, Object{Key: "logs/x", ModTime: made, IsLatest: true}, "2026-01-25T00:00:00Z", "on"},
		{"noncurrent and marker rules give no expiry", []Rule{noncurrentRule, markerRule}, Object{Key: "logs/x", ModTime: made, IsLatest: true}, "", ""},
		{"a delete marker has none", []Rule{taxRule}, Object{Key: "tax/a", DeleteMarker: true, IsLatest: true}, "", ""},
		{"no rule matches", []Rule{taxRule}, Object{Key: "a", ModTime: made}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, id, ok := Config{Rules: tt.rules}.Expiry(tt.o, day)
			if tt.want == "" {
				if ok {
					t.Errorf("Expiry = %v %q, want none", at, id)
				}
				return
			}
			if !ok || !at.Equal(utc(tt.want)) || id != tt.wantID {
				t.Errorf("Expiry = %v %q %v, want %s %q", at, id, ok, tt.want, tt.wantID)
			}
		})
	}
}

func TestAbortUpload(t *testing.T) {
	// AWS Example 8: abort uploads 7 days after they were initiated.
	abort := Rule{ID: "sample-rule", Enabled: true, Filter: Filter{Prefix: "SomeKeyPrefix/"}, AbortIncompleteUpload: 7}
	c := Config{Rules: []Rule{disabledRule, taxRule, abort}}
	began := utc("2026-01-15T10:30:00Z")
	tests := []struct {
		name, key, now string
		want           bool
	}{
		{"Example 8: after 7 days", "SomeKeyPrefix/big", "2026-01-23T00:00:00Z", true},
		{"Example 8: before", "SomeKeyPrefix/big", "2026-01-22T23:59:59Z", false},
		{"Example 8: outside the prefix", "big", "2030-01-01T00:00:00Z", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := c.AbortUpload(tt.key, began, utc(tt.now), day)
			if ok != tt.want || ok && id != abort.ID {
				t.Errorf("AbortUpload = %q %v, want %v", id, ok, tt.want)
			}
		})
	}
	abort.Enabled = false
	if _, ok := (Config{Rules: []Rule{abort}}).AbortUpload("SomeKeyPrefix/big", began, utc("2030-01-01T00:00:00Z"), day); ok {
		t.Error("a disabled rule aborted an upload")
	}
}

func TestNeedsTags(t *testing.T) {
	off := tagRule
	off.Enabled = false
	for _, tt := range []struct {
		rules []Rule
		want  bool
	}{
		{[]Rule{taxRule, sizeRule}, false},
		{[]Rule{taxRule, tagRule}, true},
		{[]Rule{off}, false},
	} {
		if got := (Config{Rules: tt.rules}).NeedsTags(); got != tt.want {
			t.Errorf("NeedsTags(%v) = %v", tt.rules, got)
		}
	}
}
