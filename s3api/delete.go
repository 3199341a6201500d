package s3api

import (
	"github.com/xfs3/xfs3/s3api/iam"

	"net/http"

	"github.com/xfs3/xfs3/store"
)

// maxDeleteObjects is S3's limit of keys per DeleteObjects request.
const maxDeleteObjects = 1000

type deleteRequest struct {
	XMLName struct{} `xml:"Delete"`
	Quiet   bool
	Objects []struct {
		Key string
		// VersionID is nil when the element is absent.
		VersionID *string `xml:"VersionId"`
		// Conditions on one key, which this server does not check: a key
		// that carries one is answered NotImplemented and kept.
		ETag             *string
		LastModifiedTime *string
		Size             *string
	} `xml:"Object"`
}

type deleteResult struct {
	XMLName struct{}        `xml:"DeleteResult"`
	Xmlns   string          `xml:"xmlns,attr"`
	Deleted []deletedObject `xml:"Deleted"`
	Errors  []deleteError   `xml:"Error"`
}

type deletedObject struct {
	Key                   string
	VersionId             string `xml:",omitempty"`
	DeleteMarker          bool   `xml:",omitempty"`
	DeleteMarkerVersionId string `xml:",omitempty"`
}

type deleteError struct {
	Key       string
	VersionId string `xml:",omitempty"`
	Code      string
	Message   string
}

// parseDeleteRequest decodes and bounds a DeleteObjects body.
func parseDeleteRequest(data []byte) (deleteRequest, error) {
	var req deleteRequest
	if err := decodeXML(data, &req); err != nil {
		return deleteRequest{}, err
	}
	if len(req.Objects) == 0 || len(req.Objects) > maxDeleteObjects {
		return deleteRequest{}, errorf("MalformedXML", "A Delete request names 1 to %d objects, not %d.", maxDeleteObjects, len(req.Objects))
	}
	return req, nil
}

func (s *server) deleteObjects(w http.ResponseWriter, r *http.Request, rq *request) error {
	data, err := readXMLBody(r, rq, maxXMLBody)
	if err != nil {
		return err
	}
	req, err := parseDeleteRequest(data)
	if err != nil {
		return err
	}
	if _, err := s.store.HeadBucket(rq.bucket); err != nil {
		return err
	}
	out := deleteResult{Xmlns: xmlns}
	// Keys with a condition or a malformed version ID are answered with
	// their error and not deleted; the others go to the store together.
	errs := make([]error, len(req.Objects))
	// objs[1] are the keys whose governance retention the request may
	// bypass (and asks to), objs[0] the others.
	var objs [2][]store.ObjectVersion
	var batch [2][]int // index in req.Objects of each of objs
	for i, o := range req.Objects {
		if o.ETag != nil || o.LastModifiedTime != nil || o.Size != nil {
			errs[i] = errorf("NotImplemented", "Conditional deletes (ETag, LastModifiedTime, Size) are not supported.")
			continue
		}
		ov := store.ObjectVersion{Key: o.Key}
		if o.VersionID != nil {
			if errs[i] = checkVersionID(*o.VersionID); errs[i] != nil {
				continue
			}
			ov.VersionID = *o.VersionID
		}
		if errs[i] = s.allowedDelete(r, rq, ov); errs[i] != nil {
			continue
		}
		b := 0
		if s.bypassGovernance(r, rq, ov.Key) {
			b = 1
		}
		objs[b], batch[b] = append(objs[b], ov), append(batch[b], i)
	}
	results := make([]store.DeleteResult, len(req.Objects))
	for b := range objs {
		if len(objs[b]) == 0 {
			continue
		}
		opt := store.DeleteOptions{BypassGovernance: b == 1}
		res, berrs := s.store.Versions().DeleteManyWith(rq.bucket, objs[b], opt)
		for j, err := range berrs {
			errs[batch[b][j]], results[batch[b][j]] = err, res[j]
		}
	}
	for i, o := range req.Objects {
		if err := errs[i]; err != nil {
			e := toS3Error(err)
			if e.code == "InternalError" {
				s.log.Error().Str("request_id", rq.id).Str("key", o.Key).Err(err).Msg("DeleteObjects entry")
			}
			de := deleteError{Key: o.Key, Code: e.code, Message: messageOf(e)}
			if o.VersionID != nil {
				de.VersionId = *o.VersionID
			}
			out.Errors = append(out.Errors, de)
			continue
		}
		if !req.Quiet {
			out.Deleted = append(out.Deleted, deleted(o.Key, o.VersionID != nil, results[i]))
		}
	}
	writeXML(w, http.StatusOK, out)
	return nil
}

// allowedDelete authorizes one key of a DeleteObjects as the
// DeleteObject of it would be.
func (s *server) allowedDelete(r *http.Request, rq *request, ov store.ObjectVersion) error {
	if rq.root {
		return nil
	}
	perms, _ := iam.Permissions("DeleteObject", ov.VersionID != "")
	return s.allowed(r, rq, perms[0].Action, rq.bucket, iam.ObjectARN(rq.bucket, ov.Key))
}

// deleted is the Deleted entry of a key: the version named (byVersion),
// and the delete marker removed or made.
func deleted(key string, byVersion bool, res store.DeleteResult) deletedObject {
	d := deletedObject{Key: key, DeleteMarker: res.DeleteMarker}
	if byVersion {
		d.VersionId = res.VersionID
	}
	if res.DeleteMarker {
		d.DeleteMarkerVersionId = res.VersionID
	}
	return d
}
