package s3api

import (
	"net/http"

	"github.com/xfs3/xfs3/store"
)

// PutBucketAcl and PutObjectAcl. Buckets here have ACLs disabled ("bucket
// owner enforced"), and S3 then accepts only ACLs that change nothing:
// the canned private or bucket-owner-full-control (x-amz-acl, checked
// with the other headers in semantics.go), or a body whose grants all
// give the owner FULL_CONTROL. Anything else is 400
// AccessControlListNotSupported, and nothing is changed either way.

// aclDocument is the part of an AccessControlPolicy body that decides
// whether it is acceptable.
type aclDocument struct {
	XMLName struct{} `xml:"AccessControlPolicy"`
	Grants  []struct {
		Grantee struct {
			ID           string
			URI          string
			EmailAddress string
		}
		Permission string
	} `xml:"AccessControlList>Grant"`
}

func (s *server) putACL(w http.ResponseWriter, r *http.Request, rq *request) error {
	data, err := readXMLBody(r, rq, maxXMLBody)
	if err != nil {
		return err
	}
	_, canned := r.Header["X-Amz-Acl"]
	switch {
	case canned && len(data) > 0:
		return errorf("UnexpectedContent", "This request does not support content with an x-amz-acl header.")
	case !canned && len(data) == 0:
		return errorf("MissingSecurityHeader", "Your request is missing a required header: x-amz-acl, or an AccessControlPolicy body.")
	case !canned:
		if err := checkOwnerOnlyACL(data, ownerOf(rq).ID); err != nil {
			return err
		}
	}
	if rq.key == "" {
		_, err = s.store.HeadBucket(rq.bucket)
	} else {
		var info store.ObjectInfo
		info, err = s.store.Versions().Head(rq.bucket, rq.key, rq.version)
		setVersionID(w.Header(), info.VersionID)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// checkOwnerOnlyACL accepts an AccessControlPolicy that grants the owner
// FULL_CONTROL and nothing to anyone else.
func checkOwnerOnlyACL(data []byte, ownerID string) error {
	var doc aclDocument
	if err := decodeXML(data, &doc); err != nil {
		return &s3Error{code: "MalformedACLError", cause: err}
	}
	if len(doc.Grants) == 0 {
		return errorf("AccessControlListNotSupported", "The bucket does not allow ACLs: only a grant of FULL_CONTROL to the owner is accepted.")
	}
	for _, g := range doc.Grants {
		if g.Grantee.ID != ownerID || g.Grantee.URI != "" || g.Grantee.EmailAddress != "" || g.Permission != "FULL_CONTROL" {
			return errorf("AccessControlListNotSupported", "The bucket does not allow ACLs: only a grant of FULL_CONTROL to the owner is accepted.")
		}
	}
	return nil
}
