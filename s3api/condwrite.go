package s3api

import (
	"errors"
	"net/http"

	"github.com/xfs3/xfs3/store"
)

// Conditional writes (If-None-Match: *, If-Match: "etag") on PutObject and
// CompleteMultipartUpload. The condition is tested twice: before the body
// is read (failing there is 412 PreconditionFailed, and no bytes are
// taken), and by the store in the step that renames the object into
// place, atomically with it. A condition that held at the start but fails
// at the rename lost a race with a concurrent write: 409
// ConditionalRequestConflict, as S3 answers a conflicting operation during
// the upload.

// writePrecondition reads the conditional-write headers. If-None-Match
// takes only "*" (S3 refuses an ETag there as not implemented).
func writePrecondition(h http.Header) (store.Precondition, error) {
	var c store.Precondition
	if v, ok := h["If-None-Match"]; ok {
		if len(v) != 1 || v[0] != "*" {
			return c, errorf("NotImplemented", "If-None-Match on a write takes only the value *.")
		}
		c.IfNoneMatch = true
	}
	if v, ok := h["If-Match"]; ok {
		if len(v) != 1 || v[0] == "" {
			return c, errorf("InvalidArgument", "If-Match takes one ETag.")
		}
		c.IfMatch = v[0]
	}
	return c, nil
}

// checkWritePrecondition refuses a conditional write whose condition does
// not hold now, before its body is read.
func (s *server) checkWritePrecondition(rq *request, c store.Precondition) error {
	return s.store.CheckPrecondition(rq.bucket, rq.key, c)
}

// raceLost turns the store's late precondition failure into 409.
func raceLost(err error) error {
	if errors.Is(err, store.ErrPreconditionFailed) {
		return &s3Error{code: "ConditionalRequestConflict", cause: err}
	}
	return err
}
