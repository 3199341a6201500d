package s3api

import (
	"net/http"

	"github.com/xfs3/xfs3/store"
)

// maxTaggingBody bounds a Tagging document (50 bucket tags of at most 384
// characters each, with room for markup).
const maxTaggingBody = 64 << 10

type tagging struct {
	XMLName struct{} `xml:"Tagging"`
	Xmlns   string   `xml:"xmlns,attr,omitempty"`
	TagSet  []xmlTag `xml:"TagSet>Tag"`
}

type xmlTag struct {
	Key   string
	Value string
}

// parseTagging decodes a PutObjectTagging body into tags sorted by key.
func parseTagging(data []byte) ([]store.Tag, error) {
	var t tagging
	if err := decodeXML(data, &t); err != nil {
		return nil, err
	}
	tags := make([]store.Tag, 0, len(t.TagSet))
	for _, x := range t.TagSet {
		tags = append(tags, store.Tag{Key: x.Key, Value: x.Value})
	}
	return checkTags(tags)
}

func (s *server) getObjectTagging(w http.ResponseWriter, r *http.Request, rq *request) error {
	info, err := s.store.Versions().Head(rq.bucket, rq.key, rq.version)
	if err != nil {
		return err
	}
	setVersionID(w.Header(), info.VersionID)
	tags := info.Meta.Tags
	if err != nil {
		return err
	}
	writeTagging(w, tags)
	return nil
}

// writeTagging answers a GET ?tagging with tags.
func writeTagging(w http.ResponseWriter, tags []store.Tag) {
	out := tagging{Xmlns: xmlns, TagSet: []xmlTag{}}
	for _, t := range tags {
		out.TagSet = append(out.TagSet, xmlTag{Key: t.Key, Value: t.Value})
	}
	writeXML(w, http.StatusOK, out)
}

func (s *server) putObjectTagging(w http.ResponseWriter, r *http.Request, rq *request) error {
	data, err := readXMLBody(r, rq, maxTaggingBody)
	if err != nil {
		return err
	}
	tags, err := parseTagging(data)
	if err != nil {
		return err
	}
	version, err := s.store.Versions().PutTagging(rq.bucket, rq.key, rq.version, tags)
	if err != nil {
		return err
	}
	setVersionID(w.Header(), version)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *server) deleteObjectTagging(w http.ResponseWriter, r *http.Request, rq *request) error {
	version, err := s.store.Versions().DeleteTagging(rq.bucket, rq.key, rq.version)
	if err != nil {
		return err
	}
	setVersionID(w.Header(), version)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
