package s3api

import (
	"errors"
	"net/http"
	"net/url"
	"sync"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/store/lifecycle"
)

// Bucket lifecycle configurations, as S3 takes them:
//
//	PUT/GET/DELETE /b?lifecycle ─► the bucket's LifecycleConfiguration,
//	   checked by lifecycle.Parse and kept in canonical form
//	   (store.LifecycleConfig); the store's scanner acts on it
//
//	PUT, copy, Complete, GET, HEAD of an object ─► x-amz-expiration:
//	   when the current version expires by the rules (lifecycle.Expiry)
//
// The parsed rules are cached by bucket until the store's configuration
// generation moves, as CORS rules are (cors.go): a request to a bucket
// without rules costs a map lookup.

// lifecycleConfigs caches parsed configurations by bucket name: a nil
// entry is a bucket without one. Buckets that cannot be read are not
// cached.
type lifecycleConfigs struct {
	mu  sync.RWMutex
	gen uint64 // the store's configuration generation m was read at
	m   map[string]*lifecycle.Config
}

// bucketLifecycle returns a bucket's rules (nil: none, or a bucket that
// cannot be read), from the cache when nothing changed since they were
// read.
func (s *server) bucketLifecycle(bucket string) *lifecycle.Config {
	cfgs := s.store.BucketConfigs()
	gen := cfgs.Generation()
	c := &s.lifecycles
	c.mu.RLock()
	lc, ok := c.m[bucket]
	fresh := c.gen == gen
	c.mu.RUnlock()
	if ok && fresh {
		return lc
	}
	doc, err := cfgs.Get(bucket, store.LifecycleConfig)
	switch {
	case errors.Is(err, store.ErrNoSuchConfig):
		lc = nil
	case err != nil:
		return nil // the operation reports a bucket it cannot read
	default:
		lc = s.loadLifecycle(bucket, doc)
	}
	c.mu.Lock()
	if c.gen != gen || c.m == nil {
		c.gen, c.m = gen, map[string]*lifecycle.Config{}
	}
	c.m[bucket] = lc
	c.mu.Unlock()
	return lc
}

// loadLifecycle parses a stored configuration. Only checked ones are
// stored; one that no longer parses (damage, a newer build's) has no
// rules here, as it has none for the scanner.
func (s *server) loadLifecycle(bucket string, doc []byte) *lifecycle.Config {
	c, err := lifecycle.Parse(doc)
	if err != nil {
		s.log.Error().Str("bucket", bucket).Err(err).Msg("stored lifecycle configuration does not parse; ignored")
		return nil
	}
	return &c
}

func (s *server) putBucketLifecycle(w http.ResponseWriter, r *http.Request, rq *request) error {
	// Read up to the XML bound: the canonical form, not the body, must
	// fit the store's limit (a pretty-printed body is larger).
	data, err := readXMLBody(r, rq, maxXMLBody)
	if err != nil {
		return err
	}
	c, err := lifecycle.Parse(data)
	var refused *lifecycle.Error
	if errors.As(err, &refused) {
		return errorf(refused.Code, "%s", refused.Message)
	}
	if err != nil {
		return err
	}
	return s.putCanonical(w, rq, store.LifecycleConfig, "lifecycle", c.Encode())
}

func (s *server) getBucketLifecycle(w http.ResponseWriter, r *http.Request, rq *request) error {
	return s.getCanonical(w, rq, store.LifecycleConfig, "NoSuchLifecycleConfiguration", "The lifecycle configuration does not exist")
}

func (s *server) deleteBucketLifecycle(w http.ResponseWriter, r *http.Request, rq *request) error {
	return s.deleteConfig(w, rq, store.LifecycleConfig)
}

// setExpiration sends x-amz-expiration for info, the version of rq.key
// an answer is about, when the bucket's rules expire it: as S3 writes it,
// expiry-date="Fri, 23 Dec 2012 00:00:00 GMT", rule-id="<URL-encoded ID>".
// A version read by ID gets it only while it is the current one: rules
// expire current versions, and noncurrent ones by another clock.
func (s *server) setExpiration(h http.Header, rq *request, info store.ObjectInfo) {
	lc := s.bucketLifecycle(rq.bucket)
	if lc == nil {
		return
	}
	o := lifecycle.Object{Key: rq.key, Size: info.Size, ModTime: info.LastModified, IsLatest: true}
	if lc.NeedsTags() {
		for _, t := range info.Meta.Tags {
			o.Tags = append(o.Tags, lifecycle.Tag(t))
		}
	}
	at, ruleID, ok := lc.Expiry(o, s.lifecycleDay)
	if !ok || rq.version != "" && !s.isCurrentVersion(rq, info.VersionID) {
		return
	}
	h.Set("X-Amz-Expiration", `expiry-date="`+at.UTC().Format(http.TimeFormat)+`", rule-id="`+url.QueryEscape(ruleID)+`"`)
}

// isCurrentVersion tells whether id is the current version of rq.key.
func (s *server) isCurrentVersion(rq *request, id string) bool {
	cur, err := s.store.Versions().Head(rq.bucket, rq.key, "")
	return err == nil && cur.VersionID == id
}
