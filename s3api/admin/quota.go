package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/xfs3/xfs3/store"
)

// Bucket quotas: each bucket is an XFS project whose limits the engine
// enforces at every write (package store). MinIO's two endpoints see only
// the hard byte limit; xfs3's own see every limit, the exact usage and
// the grace periods.

// MaxLimitBytes bounds byte limits (1 EiB), far above any volume, so that
// rounding them up to whole blocks cannot overflow.
const MaxLimitBytes = 1 << 60

// MaxGraceSeconds is the longest grace period: the kernel keeps it in a
// 32-bit field of project 0's record.
const MaxGraceSeconds = math.MaxUint32

// MinioQuota is MinIO's bucket quota document: the body of
// set-bucket-quota and the answer of get-bucket-quota.
type MinioQuota struct {
	// Quota is the byte limit as older clients send it (today's mc:
	// {"quota":N,"size":0,...}); Size is the same as newer clients send
	// it and wins when non-zero. Both zero clears the bucket's limits.
	Quota uint64 `json:"quota"`
	Size  uint64 `json:"size"`
	// Rate and Requests are MinIO's request limits: only 0 is accepted.
	Rate     uint64 `json:"rate"`
	Requests uint64 `json:"requests"`
	// Type is "hard" or empty (mc's clear sends none).
	Type string `json:"quotatype,omitempty"`
}

// Limit is the byte limit the document sets: Size when non-zero, else
// Quota, as MinIO reads it.
func (m MinioQuota) Limit() uint64 {
	if m.Size != 0 {
		return m.Size
	}
	return m.Quota
}

// DecodeMinioQuota parses a set-bucket-quota body. Unknown fields are
// ignored, as MinIO ignores them, so newer clients keep working.
func DecodeMinioQuota(body []byte) (MinioQuota, error) {
	var m MinioQuota
	if err := json.Unmarshal(body, &m); err != nil {
		return m, invalid("The bucket quota is not a JSON object of numbers quota, size, rate, requests and a string quotatype: " + err.Error())
	}
	switch {
	case m.Type != "" && m.Type != "hard":
		return m, invalid(fmt.Sprintf("Quota type %q is not supported: only \"hard\" is.", m.Type))
	case m.Rate != 0 || m.Requests != 0:
		return m, invalid("Rate and request limits are not supported: only a byte limit (quota or size) is.")
	case m.Limit() > MaxLimitBytes:
		return m, invalid(fmt.Sprintf("A byte limit of %d is above the largest, %d.", m.Limit(), uint64(MaxLimitBytes)))
	}
	return m, nil
}

// SetMinioQuota applies a set-bucket-quota document: its limit becomes
// the bucket's hard byte limit and the limits MinIO does not know (soft
// bytes, objects) stay; a limit of zero clears every limit of the bucket.
func SetMinioQuota(st *store.Store, bucket string, m MinioQuota) error {
	limit := m.Limit()
	_, err := st.Quotas().Update(bucket, func(q store.BucketQuota) store.BucketQuota {
		if limit == 0 {
			return store.BucketQuota{}
		}
		q.HardBytes = limit
		return q
	})
	return err
}

// GetMinioQuota answers get-bucket-quota: the bucket's hard byte limit,
// or XMinioAdminNoSuchQuotaConfiguration (404) when it has none.
func GetMinioQuota(st *store.Store, bucket string) (MinioQuota, error) {
	u, err := st.Quotas().Get(bucket)
	if err != nil && !errors.Is(err, store.ErrNoQuota) {
		return MinioQuota{}, err
	}
	if u.Quota.HardBytes == 0 {
		return MinioQuota{}, &Error{Status: http.StatusNotFound, Code: "XMinioAdminNoSuchQuotaConfiguration",
			Message: "The quota configuration does not exist: bucket " + bucket + " has no hard byte limit."}
	}
	h := u.Quota.HardBytes
	return MinioQuota{Quota: h, Size: h, Type: "hard"}, nil
}

// BucketQuota is one bucket's limits and exact usage, as the engine
// charges them in every transaction (xfs3's own document). Byte counts
// are whole filesystem blocks; a limit of 0 is no limit.
type BucketQuota struct {
	Bucket      string `json:"bucket"`
	Project     uint32 `json:"project"` // the bucket directory's XFS project ID
	Bytes       uint64 `json:"bytes"`   // in use
	Objects     uint64 `json:"objects"` // inodes in use: objects, prefix directories, uploads
	HardBytes   uint64 `json:"hard_bytes"`
	SoftBytes   uint64 `json:"soft_bytes"`
	HardObjects uint64 `json:"hard_objects"`
	SoftObjects uint64 `json:"soft_objects"`
	// BytesGraceEnds and ObjectsGraceEnds are when a passed soft limit
	// starts refusing writes; absent while no grace period runs.
	BytesGraceEnds   *time.Time `json:"bytes_grace_ends,omitempty"`
	ObjectsGraceEnds *time.Time `json:"objects_grace_ends,omitempty"`
}

// Grace is how long a bucket may stay over a soft limit, in seconds. In a
// request, 0 (or absent) keeps the current value.
type Grace struct {
	BytesSeconds   int64 `json:"bytes_grace_seconds"`
	ObjectsSeconds int64 `json:"objects_grace_seconds"`
}

// QuotaReport is what GET /xfs3/quota answers: the grace periods and the
// buckets, by name.
type QuotaReport struct {
	Grace
	Buckets []BucketQuota `json:"buckets"`
}

// Limits is the body of PUT /xfs3/quota?bucket=B: the limits to change;
// an absent one keeps its value, 0 removes it.
type Limits struct {
	HardBytes   *uint64 `json:"hard_bytes,omitempty"`
	SoftBytes   *uint64 `json:"soft_bytes,omitempty"`
	HardObjects *uint64 `json:"hard_objects,omitempty"`
	SoftObjects *uint64 `json:"soft_objects,omitempty"`
}

// Apply returns q with l's changes.
func (l Limits) Apply(q store.BucketQuota) store.BucketQuota {
	for _, f := range []struct {
		to   *uint64
		from *uint64
	}{{&q.HardBytes, l.HardBytes}, {&q.SoftBytes, l.SoftBytes}, {&q.HardObjects, l.HardObjects}, {&q.SoftObjects, l.SoftObjects}} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
	return q
}

// check refuses byte limits that could not be kept.
func (l Limits) check() error {
	for _, b := range []*uint64{l.HardBytes, l.SoftBytes} {
		if b != nil && *b > MaxLimitBytes {
			return invalid(fmt.Sprintf("A byte limit of %d is above the largest, %d.", *b, uint64(MaxLimitBytes)))
		}
	}
	return nil
}

// check refuses grace periods the volume cannot keep.
func (g Grace) check() error {
	for _, s := range []int64{g.BytesSeconds, g.ObjectsSeconds} {
		if s < 0 || s > MaxGraceSeconds {
			return invalid(fmt.Sprintf("A grace period of %d seconds is outside 1 to %d (0 keeps the current one).", s, int64(MaxGraceSeconds)))
		}
	}
	return nil
}

// DecodeLimits parses the body of PUT /xfs3/quota. Unknown fields are
// refused, so that a misspelt limit is never taken for an absent one.
func DecodeLimits(body []byte) (Limits, error) {
	var l Limits
	if err := decodeStrict(body, &l, "hard_bytes, soft_bytes, hard_objects, soft_objects"); err != nil {
		return l, err
	}
	return l, l.check()
}

// DecodeGrace parses the body of PUT /xfs3/quota/grace, strictly too.
func DecodeGrace(body []byte) (Grace, error) {
	var g Grace
	if err := decodeStrict(body, &g, "bytes_grace_seconds, objects_grace_seconds"); err != nil {
		return g, err
	}
	return g, g.check()
}

// decodeStrict decodes one JSON object with only the fields of v (named
// in fields, for the error message).
func decodeStrict(body []byte, v any, fields string) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.Decode(new(json.RawMessage)) != io.EOF {
		err = errors.New("more than one JSON value")
	}
	if err != nil {
		return invalid(fmt.Sprintf("The body is not a JSON object of the fields %s: %v.", fields, err))
	}
	return nil
}

// UpdateQuota applies l to a bucket's limits and returns them with the
// usage after the change.
func UpdateQuota(st *store.Store, bucket string, l Limits) (BucketQuota, error) {
	if err := l.check(); err != nil {
		return BucketQuota{}, err
	}
	u, err := st.Quotas().Update(bucket, l.Apply)
	if err != nil {
		return BucketQuota{}, err
	}
	return BucketQuotaOf(u), nil
}

// SetGrace sets the grace periods (0 keeps one) and returns them after.
func SetGrace(st *store.Store, g Grace) (Grace, error) {
	if err := g.check(); err != nil {
		return Grace{}, err
	}
	if err := st.Quotas().SetGrace(time.Duration(g.BytesSeconds)*time.Second, time.Duration(g.ObjectsSeconds)*time.Second); err != nil {
		return Grace{}, err
	}
	now, err := st.Quotas().Grace()
	return GraceOf(now), err
}

// Report answers GET /xfs3/quota: every bucket, or only the one named.
func Report(st *store.Store, bucket string) (QuotaReport, error) {
	var us []store.BucketUsage
	if bucket == "" {
		var err error
		if us, err = st.Quotas().List(); err != nil {
			return QuotaReport{}, err
		}
	} else {
		u, err := st.Quotas().Get(bucket)
		if err != nil && !errors.Is(err, store.ErrNoQuota) {
			return QuotaReport{}, err
		}
		us = []store.BucketUsage{u}
	}
	g, err := st.Quotas().Grace()
	if err != nil {
		return QuotaReport{}, err
	}
	return ReportOf(us, g, "")
}

// ReportOf builds a report from the store's figures (from a running store
// or read offline by store.ReadQuotas), keeping only the bucket named
// when one is.
func ReportOf(us []store.BucketUsage, g store.QuotaGrace, bucket string) (QuotaReport, error) {
	r := QuotaReport{Grace: GraceOf(g), Buckets: []BucketQuota{}}
	for _, u := range us {
		if bucket == "" || u.Bucket == bucket {
			r.Buckets = append(r.Buckets, BucketQuotaOf(u))
		}
	}
	if bucket != "" && len(r.Buckets) == 0 {
		return r, fmt.Errorf("bucket %q: %w", bucket, store.ErrNoSuchBucket)
	}
	return r, nil
}

// BucketQuotaOf is the document of a bucket's usage.
func BucketQuotaOf(u store.BucketUsage) BucketQuota {
	at := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		t = t.UTC()
		return &t
	}
	return BucketQuota{
		Bucket: u.Bucket, Project: u.Project, Bytes: u.Bytes, Objects: u.Objects,
		HardBytes: u.Quota.HardBytes, SoftBytes: u.Quota.SoftBytes,
		HardObjects: u.Quota.HardObjects, SoftObjects: u.Quota.SoftObjects,
		BytesGraceEnds: at(u.BytesGraceEnds), ObjectsGraceEnds: at(u.ObjectsGraceEnds),
	}
}

// GraceOf is the document of the grace periods.
func GraceOf(g store.QuotaGrace) Grace {
	return Grace{BytesSeconds: int64(g.Bytes / time.Second), ObjectsSeconds: int64(g.Objects / time.Second)}
}
