package s3api

import (
	"net/http"
	"strings"

	"github.com/xfs3/xfs3/store"
)

// Bucket tagging: GET, PUT and DELETE /bucket?tagging. The document is the
// Tagging of object tags, with up to store.MaxBucketTags tags; keys
// starting "aws:" are the system's, and S3 refuses them from a requester.

// parseBucketTagging decodes a PutBucketTagging body into tags sorted by key.
func parseBucketTagging(data []byte) ([]store.Tag, error) {
	var t tagging
	if err := decodeXML(data, &t); err != nil {
		return nil, err
	}
	if len(t.TagSet) > store.MaxBucketTags {
		return nil, errorf("InvalidTag", "Bucket tag count cannot be greater than %d.", store.MaxBucketTags)
	}
	tags := make([]store.Tag, 0, len(t.TagSet))
	for _, x := range t.TagSet {
		if strings.HasPrefix(strings.ToLower(x.Key), "aws:") {
			return nil, errorf("InvalidTag", "System tags cannot be added/updated by requester.")
		}
		tags = append(tags, store.Tag{Key: x.Key, Value: x.Value})
	}
	return checkTagValues(tags)
}

func (s *server) getBucketTagging(w http.ResponseWriter, r *http.Request, rq *request) error {
	tags, err := s.store.GetBucketTagging(rq.bucket)
	if err != nil {
		return err
	}
	writeTagging(w, tags)
	return nil
}

func (s *server) putBucketTagging(w http.ResponseWriter, r *http.Request, rq *request) error {
	data, err := readXMLBody(r, rq, maxTaggingBody)
	if err != nil {
		return err
	}
	tags, err := parseBucketTagging(data)
	if err != nil {
		return err
	}
	if err := s.store.PutBucketTagging(rq.bucket, tags); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent) // S3 answers 204
	return nil
}

func (s *server) deleteBucketTagging(w http.ResponseWriter, r *http.Request, rq *request) error {
	if err := s.store.DeleteBucketTagging(rq.bucket); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
