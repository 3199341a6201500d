package s3api

import (
	"strings"

	"github.com/xfs3/xfs3/s3api/iam"

	"errors"
	"net/http"
	"slices"

	"github.com/xfs3/xfs3/store"
)

type listAllMyBucketsResult struct {
	XMLName struct{} `xml:"ListAllMyBucketsResult"`
	Xmlns   string   `xml:"xmlns,attr"`
	Owner   owner
	Buckets []bucketEntry `xml:"Buckets>Bucket"`
	// ContinuationToken resumes after this page; only when one follows.
	ContinuationToken string `xml:",omitempty"`
	Prefix            string `xml:",omitempty"`
}

type bucketEntry struct {
	Name         string
	CreationDate string
	BucketRegion string
}

func (s *server) listBuckets(w http.ResponseWriter, r *http.Request, rq *request) error {
	sel, err := parseBucketSelection(rq.query)
	if err != nil {
		return err
	}
	buckets, err := s.store.ListBuckets()
	if err != nil {
		return err
	}
	if region := rq.query.Get("bucket-region"); region != "" {
		buckets = slices.DeleteFunc(buckets, func(b store.BucketInfo) bool { return s.bucketRegion(b.Name) != region })
	}
	if buckets, err = s.visibleBuckets(r, rq, buckets); err != nil {
		return err
	}
	page, next := sel.page(buckets)
	out := listAllMyBucketsResult{Xmlns: xmlns, Owner: ownerOf(rq), Buckets: []bucketEntry{}, Prefix: sel.prefix}
	for _, b := range page {
		out.Buckets = append(out.Buckets, bucketEntry{Name: b.Name, CreationDate: isoTime(b.Created), BucketRegion: s.bucketRegion(b.Name)})
	}
	if next != "" {
		out.ContinuationToken = encodeContinuationToken(next)
	}
	writeXML(w, http.StatusOK, out)
	return nil
}

// visibleBuckets are the buckets a ListBuckets shows: all of them to a
// requester allowed s3:ListAllMyBuckets; otherwise, as MinIO does, those
// it may list (s3:ListBucket), and AccessDenied when there are none.
func (s *server) visibleBuckets(r *http.Request, rq *request, all []store.BucketInfo) ([]store.BucketInfo, error) {
	if rq.root {
		return all, nil
	}
	if err := s.allowed(r, rq, "s3:ListAllMyBuckets", "", iam.AllBucketsARN); err == nil {
		return all, nil
	} else if rq.anonymous {
		return nil, err
	}
	var some []store.BucketInfo
	for _, b := range all {
		if s.decide(r, rq, "s3:ListBucket", b.Name, iam.BucketARN(b.Name)).Allowed() {
			some = append(some, b)
		}
	}
	if some == nil {
		return nil, s.denied(rq, rq.decision, "s3:ListAllMyBuckets or s3:ListBucket on any bucket")
	}
	return some, nil
}

// createBucketConfiguration may name the bucket's region: any region
// while the server has none configured, else the server's own; another
// is refused, not ignored, since the bucket would not be where the
// client asked for it (region.go).
type createBucketConfiguration struct {
	XMLName            struct{} `xml:"CreateBucketConfiguration"`
	LocationConstraint string
}

func (s *server) createBucket(w http.ResponseWriter, r *http.Request, rq *request) error {
	data, err := readXMLBody(r, rq, maxXMLBody)
	if err != nil {
		return err
	}
	constraint := ""
	if len(data) > 0 {
		var conf createBucketConfiguration
		if err := decodeXML(data, &conf); err != nil {
			return err
		}
		constraint = conf.LocationConstraint
	}
	region, err := s.newBucketRegion(constraint)
	if err != nil {
		return err
	}
	err = s.store.CreateBucket(rq.bucket)
	created := err == nil
	if errors.Is(err, store.ErrBucketExists) && region == DefaultRegion && s.bucketRegion(rq.bucket) == DefaultRegion {
		// S3's legacy us-east-1 behaviour: re-creating a bucket you own
		// succeeds (there is one owner, so every bucket is yours).
		err = nil
	} else if err == nil && constraint != "" {
		err = s.recordRegion(rq.bucket, region)
	}
	if created && err == nil && strings.EqualFold(r.Header.Get(hdrBucketLockOn), "true") {
		// With object lock, versioning comes Enabled (and stays so).
		err = s.store.Locks().Enable(rq.bucket)
	}
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/"+rq.bucket)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *server) headBucket(w http.ResponseWriter, r *http.Request, rq *request) error {
	if _, err := s.store.HeadBucket(rq.bucket); err != nil {
		return err
	}
	w.Header().Set("X-Amz-Bucket-Region", s.bucketRegion(rq.bucket))
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *server) deleteBucket(w http.ResponseWriter, r *http.Request, rq *request) error {
	if err := s.store.DeleteBucket(rq.bucket); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type locationConstraint struct {
	XMLName struct{} `xml:"LocationConstraint"`
	Xmlns   string   `xml:"xmlns,attr"`
	Region  string   `xml:",chardata"`
}

func (s *server) getBucketLocation(w http.ResponseWriter, r *http.Request, rq *request) error {
	if _, err := s.store.HeadBucket(rq.bucket); err != nil {
		return err
	}
	out := locationConstraint{Xmlns: xmlns}
	if region := s.bucketRegion(rq.bucket); region != DefaultRegion { // S3 reports us-east-1 as empty
		out.Region = region
	}
	writeXML(w, http.StatusOK, out)
	return nil
}

// versioningConfiguration is the body of GET and PUT ?versioning. A
// bucket that never had versioning has no Status.
type versioningConfiguration struct {
	XMLName   struct{} `xml:"VersioningConfiguration"`
	Xmlns     string   `xml:"xmlns,attr,omitempty"`
	Status    string   `xml:",omitempty"`
	MfaDelete string   `xml:",omitempty"`
}

func (s *server) getBucketVersioning(w http.ResponseWriter, r *http.Request, rq *request) error {
	state, err := s.store.Versions().State(rq.bucket)
	if err != nil {
		return err
	}
	writeXML(w, http.StatusOK, versioningConfiguration{Xmlns: xmlns, Status: state})
	return nil
}

// maxVersioningBody bounds a PUT ?versioning body.
const maxVersioningBody = 4 << 10

func (s *server) putBucketVersioning(w http.ResponseWriter, r *http.Request, rq *request) error {
	data, err := readXMLBody(r, rq, maxVersioningBody)
	if err != nil {
		return err
	}
	var c versioningConfiguration
	if err := decodeXML(data, &c); err != nil {
		return err
	}
	switch {
	case c.MfaDelete == "Enabled":
		return errorf("NotImplemented", "MFA delete is not supported.")
	case c.MfaDelete != "" && c.MfaDelete != "Disabled":
		return errorf("IllegalVersioningConfigurationException", "MfaDelete must be Enabled or Disabled, not %q.", c.MfaDelete)
	case c.Status != store.VersioningEnabled && c.Status != store.VersioningSuspended:
		return errorf("IllegalVersioningConfigurationException", "The versioning Status must be Enabled or Suspended, not %q.", c.Status)
	}
	if err := s.store.Versions().SetState(rq.bucket, c.Status); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// accessControlPolicy is the canned ACL returned for GET ?acl: the owner
// has FULL_CONTROL, nobody else has anything, which is what this server
// enforces.
type accessControlPolicy struct {
	XMLName struct{} `xml:"AccessControlPolicy"`
	Xmlns   string   `xml:"xmlns,attr"`
	Owner   owner
	Grants  []grant `xml:"AccessControlList>Grant"`
}

type grant struct {
	Grantee    grantee
	Permission string
}

type grantee struct {
	XMLNSXSI    string `xml:"xmlns:xsi,attr"`
	Type        string `xml:"xsi:type,attr"`
	ID          string
	DisplayName string
}

func (s *server) getACL(w http.ResponseWriter, r *http.Request, rq *request) error {
	if rq.key == "" {
		if _, err := s.store.HeadBucket(rq.bucket); err != nil {
			return err
		}
	} else if info, err := s.store.Versions().Head(rq.bucket, rq.key, rq.version); err != nil {
		return err
	} else {
		setVersionID(w.Header(), info.VersionID)
	}
	o := ownerOf(rq)
	writeXML(w, http.StatusOK, accessControlPolicy{
		Xmlns: xmlns,
		Owner: o,
		Grants: []grant{{
			Grantee: grantee{
				XMLNSXSI: "http://www.w3.org/2001/XMLSchema-instance", Type: "CanonicalUser",
				ID: o.ID, DisplayName: o.DisplayName,
			},
			Permission: "FULL_CONTROL",
		}},
	})
	return nil
}
