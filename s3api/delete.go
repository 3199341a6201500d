package s3api

import (
	"net/http"
)

// maxDeleteObjects is S3's limit of keys per DeleteObjects request.
const maxDeleteObjects = 1000

type deleteRequest struct {
	XMLName struct{} `xml:"Delete"`
	Quiet   bool
	Objects []struct {
		Key string
		// VersionID is nil when the element is absent; only "null" can
		// be deleted (checkVersionID).
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
	Key string
}

type deleteError struct {
	Key     string
	Code    string
	Message string
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
	// Keys naming a version other than "null" are answered with its error
	// and not deleted; the others go to the store in one batch.
	errs := make([]error, len(req.Objects))
	var keys []string
	var batch []int // index in req.Objects of each of keys
	for i, o := range req.Objects {
		if o.ETag != nil || o.LastModifiedTime != nil || o.Size != nil {
			errs[i] = errorf("NotImplemented", "Conditional deletes (ETag, LastModifiedTime, Size) are not supported.")
			continue
		}
		if o.VersionID != nil {
			if errs[i] = checkVersionID(*o.VersionID); errs[i] != nil {
				continue
			}
		}
		keys, batch = append(keys, o.Key), append(batch, i)
	}
	for j, err := range s.store.DeleteObjects(rq.bucket, keys) {
		errs[batch[j]] = err
	}
	for i, o := range req.Objects {
		if err := errs[i]; err != nil {
			e := toS3Error(err)
			if e.code == "InternalError" {
				s.log.Error().Str("request_id", rq.id).Str("key", o.Key).Err(err).Msg("DeleteObjects entry")
			}
			out.Errors = append(out.Errors, deleteError{Key: o.Key, Code: e.code, Message: messageOf(e)})
			continue
		}
		if !req.Quiet {
			out.Deleted = append(out.Deleted, deletedObject{Key: o.Key})
		}
	}
	writeXML(w, http.StatusOK, out)
	return nil
}
