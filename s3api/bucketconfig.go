package s3api

import (
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"

	"github.com/xfs3/xfs3/store"
)

// Bucket configuration documents kept in canonical XML (CORS,
// lifecycle): the store holds the bytes, GET answers them as they are.

// putCanonical stores doc, the canonical form of a configuration the
// handler validated, as kind (what names it in errors).
func (s *server) putCanonical(w http.ResponseWriter, rq *request, kind store.ConfigKind, what string, doc []byte) error {
	if limit := kind.MaxSize(); len(doc) > limit {
		// Escaping and empty elements written out make a canonical form
		// larger than the body it came from.
		return errorf("MaxMessageLengthExceeded", "The %s configuration is %d bytes in canonical form, over %d.", what, len(doc), limit)
	}
	if err := s.store.BucketConfigs().Put(rq.bucket, kind, doc); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// getCanonical answers the stored document of kind, or the S3 error
// code (with message) of a bucket without one.
func (s *server) getCanonical(w http.ResponseWriter, rq *request, kind store.ConfigKind, code, message string) error {
	doc, err := s.store.BucketConfigs().Get(rq.bucket, kind)
	if errors.Is(err, store.ErrNoSuchConfig) {
		return errorf(code, "%s", message)
	}
	if err != nil {
		return err
	}
	body := append([]byte(xml.Header), doc...)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
	return nil
}

// deleteConfig removes the document of kind (204, also when none).
func (s *server) deleteConfig(w http.ResponseWriter, rq *request, kind store.ConfigKind) error {
	if err := s.store.BucketConfigs().Delete(rq.bucket, kind); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
