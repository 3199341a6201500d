package s3api

import (
	"net/http"

	"github.com/xfs3/xfs3/s3api/admin"
)

// The bucket quota endpoints: MinIO's two, which mc drives, and xfs3's
// own. Documents and rules are package admin's; these handlers only read
// the request and write the answer.

// maxAdminBody bounds admin request bodies: small JSON documents.
const maxAdminBody = 64 << 10

// quotaBucket is the bucket a quota request names in ?bucket=.
func quotaBucket(r *http.Request) (string, error) {
	b := r.URL.Query().Get("bucket")
	if b == "" {
		return "", &admin.Error{Status: http.StatusBadRequest, Code: "XMinioAdminInvalidArgument",
			Message: "The bucket parameter is missing: " + r.URL.Path + "?bucket=NAME."}
	}
	return b, nil
}

// adminBody reads an admin request's body, checked against the signed
// payload hash.
func adminBody(r *http.Request, rq *request) ([]byte, error) {
	return readXMLBody(r, rq, maxAdminBody)
}

// quotaPut reads what a PUT on a bucket's quota carries: the bucket named
// in ?bucket= and the body.
func quotaPut(r *http.Request, rq *request) (bucket string, body []byte, err error) {
	if bucket, err = quotaBucket(r); err != nil {
		return "", nil, err
	}
	body, err = adminBody(r, rq)
	return bucket, body, err
}

// setBucketQuota is MinIO's PUT set-bucket-quota?bucket=B (mc quota set,
// mc quota clear): 200 with an empty body.
func (s *server) setBucketQuota(w http.ResponseWriter, r *http.Request, rq *request) error {
	bucket, body, err := quotaPut(r, rq)
	if err != nil {
		return err
	}
	m, err := admin.DecodeMinioQuota(body)
	if err != nil {
		return err
	}
	if err := admin.SetMinioQuota(s.store, bucket, m); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// getBucketQuota is MinIO's GET get-bucket-quota?bucket=B (mc quota info).
func (s *server) getBucketQuota(w http.ResponseWriter, r *http.Request, rq *request) error {
	bucket, err := quotaBucket(r)
	if err != nil {
		return err
	}
	m, err := admin.GetMinioQuota(s.store, bucket)
	if err != nil {
		return err
	}
	return writeJSON(w, m)
}

// quotaReport is GET /xfs3/quota[?bucket=B].
func (s *server) quotaReport(w http.ResponseWriter, r *http.Request, rq *request) error {
	rep, err := admin.Report(s.store, r.URL.Query().Get("bucket"))
	if err != nil {
		return err
	}
	return writeJSON(w, rep)
}

// setQuota is PUT /xfs3/quota?bucket=B: answers the bucket's quota after.
func (s *server) setQuota(w http.ResponseWriter, r *http.Request, rq *request) error {
	bucket, body, err := quotaPut(r, rq)
	if err != nil {
		return err
	}
	l, err := admin.DecodeLimits(body)
	if err != nil {
		return err
	}
	q, err := admin.UpdateQuota(s.store, bucket, l)
	if err != nil {
		return err
	}
	return writeJSON(w, q)
}

// setQuotaGrace is PUT /xfs3/quota/grace: answers the grace periods after.
func (s *server) setQuotaGrace(w http.ResponseWriter, r *http.Request, rq *request) error {
	body, err := adminBody(r, rq)
	if err != nil {
		return err
	}
	g, err := admin.DecodeGrace(body)
	if err != nil {
		return err
	}
	g, err = admin.SetGrace(s.store, g)
	if err != nil {
		return err
	}
	return writeJSON(w, g)
}
