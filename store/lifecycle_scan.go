package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/store/lifecycle"
)

// The lifecycle scanner's store side (package doc, "Lifecycle"): bounded
// batches of a pass over the buckets with rules, each version judged by
// lifecycle.Config.Eval and expired through the ordinary delete paths
// with a condition that what was judged still holds.

// Lifecycle is the role of a Store the lifecycle scanner (gc.Lifecycle)
// drives: it is the scanner's gc.Expirer.
type Lifecycle struct{ *store }

// Lifecycle returns the store's lifecycle role.
func (s *Store) Lifecycle() Lifecycle { return Lifecycle{s.store} }

var _ gc.Expirer = Lifecycle{}

// lifecycleBatch bounds the versions (or uploads) one batch looks at
// (tests lower it).
var lifecycleBatch = 128

// DefaultLifecycleDay is the length of a lifecycle "day".
const DefaultLifecycleDay = 24 * time.Hour

// lifecycleFile is the system file that holds a pass's cursor.
const lifecycleFile = "lifecycle-cursor"

// lifecycleCursor is where a pass stands: in Bucket, at Phase
// ("versions", then "uploads"), after the entry (Key, Version) of the
// listing; Newer counts the noncurrent versions of Key already passed,
// and Since is when the last of them (or the latest) was written, which
// is when the next one stopped being current.
type lifecycleCursor struct {
	Bucket  string    `json:"bucket"`
	Phase   string    `json:"phase"`
	Key     string    `json:"key,omitempty"`
	Version string    `json:"version,omitempty"`
	Newer   int       `json:"newer,omitempty"`
	Since   time.Time `json:"since,omitzero"`
}

const (
	phaseVersions = "versions"
	phaseUploads  = "uploads"
)

// SaveCursor keeps a pass's cursor in .xfs3/config (SystemFiles), and
// makes the batch before it durable. Neither counts as a client's change
// (settleQuietly), so a pass does not pace itself on its own work.
func (l Lifecycle) SaveCursor(cursor string) (err error) {
	defer l.settleQuietly(&err)
	return SystemFiles{l.store}.write(lifecycleFile, []byte(cursor))
}

// LoadCursor reads the cursor SaveCursor kept ("" when none).
func (l Lifecycle) LoadCursor() (string, error) {
	b, err := SystemFiles{l.store}.Read(lifecycleFile)
	if errors.Is(err, ErrNoSuchSystemFile) {
		return "", nil
	}
	return string(b), err
}

// ExpireBatch does one batch of a pass: up to lifecycleBatch versions of
// one bucket, or its uploads, judged at now.
func (l Lifecycle) ExpireBatch(ctx context.Context, cursor string, now time.Time) (string, gc.LifecycleCounts, error) {
	var c gc.LifecycleCounts
	var cur lifecycleCursor
	if cursor != "" && json.Unmarshal([]byte(cursor), &cur) != nil {
		// A cursor that does not decode (a damaged system file, a format
		// of another version) cannot say where the pass stood: the pass
		// starts over, which only looks at some versions twice.
		cur = lifecycleCursor{}
	}
	if cur.Bucket == "" {
		if cur = (lifecycleCursor{Bucket: l.nextRulesBucket("")}); cur.Bucket == "" {
			return "", c, nil
		}
	}
	if cur.Phase == "" {
		cur.Phase = phaseVersions
	}
	cfg, ok := l.bucketRules(cur.Bucket)
	var done bool
	var err error
	switch {
	case !ok:
		done = true
	case cur.Phase == phaseVersions:
		done, err = l.expireVersions(ctx, &cur, cfg, now, &c)
		if done {
			cur, done = lifecycleCursor{Bucket: cur.Bucket, Phase: phaseUploads}, false
		}
	default:
		done, err = l.abortUploads(ctx, &cur, cfg, now, &c)
	}
	if err != nil {
		return cursor, c, err
	}
	if done {
		if cur = (lifecycleCursor{Bucket: l.nextRulesBucket(cur.Bucket)}); cur.Bucket == "" {
			return "", c, nil
		}
	}
	next, err := json.Marshal(cur)
	return string(next), c, err
}

// nextRulesBucket returns the first bucket after after (by name) that has
// lifecycle rules, "" when none.
func (l Lifecycle) nextRulesBucket(after string) string {
	buckets, err := (&Store{l.store}).ListBuckets()
	if err != nil {
		return ""
	}
	for _, b := range buckets {
		if b.Name > after {
			if _, ok := l.bucketRules(b.Name); ok {
				return b.Name
			}
		}
	}
	return ""
}

// bucketRules returns a bucket's lifecycle configuration, if it has one
// that decodes.
func (l Lifecycle) bucketRules(bucket string) (lifecycle.Config, bool) {
	doc, err := BucketConfigs{l.store}.Get(bucket, LifecycleConfig)
	if err != nil {
		return lifecycle.Config{}, false
	}
	cfg, err := lifecycle.Parse(doc)
	return cfg, err == nil && len(cfg.Rules) > 0
}

// day is the length of a lifecycle day.
func (s *store) day() time.Duration {
	if s.lifecycleDay > 0 {
		return s.lifecycleDay
	}
	return DefaultLifecycleDay
}

// expireVersions judges a page of the bucket's versions after the
// cursor and expires what the rules say; done tells that the listing
// ended.
func (l Lifecycle) expireVersions(ctx context.Context, cur *lifecycleCursor, cfg lifecycle.Config, now time.Time, c *gc.LifecycleCounts) (done bool, err error) {
	state, err := l.bucketVersioning(cur.Bucket)
	if errors.Is(err, ErrNoSuchBucket) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	page, err := l.listVersions(cur.Bucket, VersionListOptions{KeyMarker: cur.Key, VersionIDMarker: cur.Version, MaxKeys: lifecycleBatch + 1})
	if errors.Is(err, ErrNoSuchBucket) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	vs := page.Versions
	if len(vs) > lifecycleBatch {
		vs = vs[:lifecycleBatch] // the one more is only looked at
	}
	for i, v := range vs {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if v.Key != cur.Key {
			cur.Newer, cur.Since = 0, time.Time{}
		}
		o := lifecycle.Object{Key: v.Key, Size: v.Size, ModTime: v.LastModified, IsLatest: v.IsLatest, DeleteMarker: v.DeleteMarker}
		if !v.IsLatest {
			o.NoncurrentSince, o.NewerNoncurrent = cur.Since, cur.Newer
		}
		if v.IsLatest && v.DeleteMarker {
			next := i + 1
			o.OnlyMarker = next < len(page.Versions) && page.Versions[next].Key != v.Key || next == len(page.Versions) && !page.IsTruncated
		}
		c.Scanned++
		if cfg.NeedsTags() && !v.DeleteMarker {
			if tags, err := l.getTagging(cur.Bucket, v.Key, v.VersionID); err == nil {
				for _, t := range tags {
					o.Tags = append(o.Tags, lifecycle.Tag{Key: t.Key, Value: t.Value})
				}
			}
		}
		l.expire(cur.Bucket, state, v, o, cfg, now, c)
		if !v.IsLatest {
			cur.Newer++
		}
		cur.Key, cur.Version, cur.Since = v.Key, v.VersionID, v.LastModified
	}
	return !page.IsTruncated && len(vs) == len(page.Versions), nil
}

// expire carries out what the rules say of version v (o as they see
// it) in a bucket of versioning state, counting it in c.
func (l Lifecycle) expire(bucket, state string, v ObjectInfo, o lifecycle.Object, cfg lifecycle.Config, now time.Time, c *gc.LifecycleCounts) {
	action, _ := cfg.Eval(o, now, l.day())
	var opt DeleteOptions
	id := v.VersionID
	switch action {
	case lifecycle.None:
		return
	case lifecycle.ExpireCurrent:
		if state == "" {
			opt.ifModified = v.LastModified
		} else {
			opt.ifCurrent = id
		}
		id = ""
	case lifecycle.DeleteVersion:
		opt.ifNoncurrent = true
	case lifecycle.DeleteMarker:
		opt.ifSoleMarker = true
	}
	_, err := l.deleteKey(bucket, v.Key, id, opt)
	switch {
	case errors.Is(err, errChanged) || errors.Is(err, ErrNoSuchKey) || errors.Is(err, ErrNoSuchBucket):
		return
	case errors.Is(err, ErrObjectLocked):
		c.Locked++
		return
	case err != nil:
		c.Errors++
		return
	}
	switch action {
	case lifecycle.ExpireCurrent:
		c.Expired++
		if state == "" {
			c.BytesFreed += v.Size
		}
	case lifecycle.DeleteVersion:
		c.Versions++
		c.BytesFreed += v.Size
	case lifecycle.DeleteMarker:
		c.Markers++
	}
}

// abortUploads aborts the bucket's uploads the rules say are abandoned,
// a page after the cursor at a time.
func (l Lifecycle) abortUploads(ctx context.Context, cur *lifecycleCursor, cfg lifecycle.Config, now time.Time, c *gc.LifecycleCounts) (done bool, err error) {
	up := Uploads{l.store}
	page, err := up.List(cur.Bucket, ListUploadsOptions{KeyMarker: cur.Key, UploadIDMarker: cur.Version, MaxUploads: lifecycleBatch})
	if errors.Is(err, ErrNoSuchBucket) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	for _, u := range page.Uploads {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		c.Scanned++
		cur.Key, cur.Version = u.Key, u.UploadID
		if _, ok := cfg.AbortUpload(u.Key, u.Initiated, now, l.day()); !ok {
			continue
		}
		switch err := up.abort(cur.Bucket, u.Key, u.UploadID); {
		case err == nil:
			c.Uploads++
		case !errors.Is(err, ErrNoSuchUpload):
			c.Errors++
		}
	}
	return !page.IsTruncated || len(page.Uploads) == 0, nil
}

// The lifecycle scanner's types as the layers above see them (package
// gc owns them).
type (
	LifecyclePass   = gc.LifecyclePass
	LifecycleStatus = gc.LifecycleStatus
	LifecycleCounts = gc.LifecycleCounts
)

// Pass is a pass of the store's paced workers (the lifecycle scanner,
// the scrubber), as package gc keeps it.
type Pass[C any] = gc.Pass[C]

// Start asks the scanner for a pass now (gc.Lifecycle.Start).
func (l Lifecycle) Start() (LifecyclePass, error) { return l.expirer.Start() }

// Status is the scanner's pass under way, last pass and totals.
func (l Lifecycle) Status() LifecycleStatus { return l.expirer.Status() }

// Day is the length of a lifecycle rule's day.
func (l Lifecycle) Day() time.Duration { return l.day() }
