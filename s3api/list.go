package s3api

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"

	"github.com/xfs3/xfs3/store"
)

// listBucketResult is ListObjects' document; V2 uses its own fields (see
// listBucketResultV2). Elements are in the order S3 sends them. These
// types are the schema: responses are written by hand (listxml.go), and
// TestListXMLDifferential holds that to xml.Marshal of these.
type listBucketResult struct {
	XMLName        struct{} `xml:"ListBucketResult"`
	Xmlns          string   `xml:"xmlns,attr"`
	Name           string
	Prefix         string
	Marker         string
	NextMarker     string `xml:",omitempty"`
	MaxKeys        int
	Delimiter      string `xml:",omitempty"`
	EncodingType   string `xml:",omitempty"`
	IsTruncated    bool
	Contents       []listEntry
	CommonPrefixes []commonPrefix
}

type listBucketResultV2 struct {
	XMLName               struct{} `xml:"ListBucketResult"`
	Xmlns                 string   `xml:"xmlns,attr"`
	Name                  string
	Prefix                string
	StartAfter            string `xml:",omitempty"`
	ContinuationToken     string `xml:",omitempty"`
	NextContinuationToken string `xml:",omitempty"`
	KeyCount              int
	MaxKeys               int
	Delimiter             string `xml:",omitempty"`
	EncodingType          string `xml:",omitempty"`
	IsTruncated           bool
	Contents              []listEntry
	CommonPrefixes        []commonPrefix
}

type listEntry struct {
	Key          string
	LastModified string
	ETag         string
	Size         int64
	Owner        *owner `xml:",omitempty"`
	StorageClass string
	// With metadata=true (MinIO's extension, minio-go's WithMetadata).
	UserMetadata *listedMeta `xml:",omitempty"`
	UserTags     string      `xml:",omitempty"`
}

type commonPrefix struct {
	Prefix string
}

// listQuery is what ListObjects v1 and v2 share.
type listQuery struct {
	prefix, delimiter string
	maxKeys           int
	urlEncoding       bool
	metadata          bool // metadata=true: each object's metadata and tags too
}

func parseListQuery(q url.Values) (listQuery, error) {
	lq := listQuery{prefix: q.Get("prefix"), delimiter: q.Get("delimiter"), maxKeys: store.DefaultMaxKeys}
	if v, ok := q["max-keys"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 0 {
			return listQuery{}, errorf("InvalidArgument", "Provided max-keys not an integer or within integer range.")
		}
		lq.maxKeys = min(n, store.DefaultMaxKeys)
	}
	lq.metadata = q.Get("metadata") == "true"
	var err error
	lq.urlEncoding, err = urlEncodingRequested(q)
	return lq, err
}

// urlEncodingRequested reads encoding-type: absent, or "url".
func urlEncodingRequested(q url.Values) (bool, error) {
	switch q.Get("encoding-type") {
	case "":
		return false, nil
	case "url":
		return true, nil
	}
	return false, errorf("InvalidArgument", "Invalid Encoding Method specified in Request.")
}

// list fetches one page. max-keys=0 gives an empty, untruncated page (the
// store takes 0 for its default), after checking the bucket exists.
func (s *server) list(bucketName string, lq listQuery, startAfter string) (store.ListResult, error) {
	if lq.maxKeys == 0 {
		_, err := s.store.HeadBucket(bucketName)
		return store.ListResult{}, err
	}
	return s.store.ListObjects(bucketName, store.ListOptions{
		Prefix: lq.prefix, Delimiter: lq.delimiter, StartAfter: startAfter, MaxKeys: lq.maxKeys,
	})
}

func (s *server) listObjectsV1(w http.ResponseWriter, r *http.Request, rq *request) error {
	q := rq.query
	lq, err := parseListQuery(q)
	if err != nil {
		return err
	}
	marker := q.Get("marker")
	page, err := s.list(rq.bucket, lq, marker)
	if err != nil {
		return err
	}
	o := ownerOf(rq)
	l := objectListing{bucket: rq.bucket, q: lq, marker: marker, owner: &o, page: page}
	if lq.metadata {
		l.meta = s.listedMetas(rq.bucket, page)
	}
	writeXMLDoc(w, http.StatusOK, &l)
	return nil
}

func (s *server) listObjectsV2(w http.ResponseWriter, r *http.Request, rq *request) error {
	q := rq.query
	if v := q.Get("list-type"); v != "2" {
		return errorf("InvalidArgument", "Invalid list-type %q.", v)
	}
	lq, err := parseListQuery(q)
	if err != nil {
		return err
	}
	token, hasToken := q["continuation-token"]
	// An empty token is no token, as S3 takes it (SDKs send one on the
	// first page).
	hasToken = hasToken && token[0] != ""
	startAfter := q.Get("start-after")
	from := startAfter
	if hasToken {
		key, err := decodeContinuationToken(token[0])
		if err != nil {
			return err
		}
		from = key
	}
	page, err := s.list(rq.bucket, lq, from)
	if err != nil {
		return err
	}
	l := objectListing{v2: true, bucket: rq.bucket, q: lq, marker: startAfter, page: page}
	if hasToken {
		l.token = token[0]
	}
	if q.Get("fetch-owner") == "true" {
		o := ownerOf(rq)
		l.owner = &o
	}
	if lq.metadata {
		l.meta = s.listedMetas(rq.bucket, page)
	}
	writeXMLDoc(w, http.StatusOK, &l)
	return nil
}

// Continuation tokens are the base64 of the last key or common prefix of
// the previous page: opaque to clients, stateless here.
func encodeContinuationToken(key string) string {
	return base64.StdEncoding.EncodeToString([]byte(key))
}

func decodeContinuationToken(token string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(token)
	if err != nil || token == "" {
		return "", errorf("InvalidArgument", "The continuation token provided is incorrect.")
	}
	return string(b), nil
}

func encoder(url bool) func(string) string {
	if url {
		return urlEncode
	}
	return func(s string) string { return s }
}

// urlEncode is S3's encoding-type=url: percent-escaping (a space is
// %20, as S3 sends it) that keeps '/' readable; clients decode it with a
// query unescape.
func urlEncode(s string) string {
	return string(appendURLEncoded(make([]byte, 0, len(s)), s))
}

// appendURLEncoded appends urlEncode(s). Its output is letters, digits
// and "-_.~/*%": text that XML needs no escaping for.
func appendURLEncoded(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~', c == '/', c == '*':
			b = append(b, c)
		default:
			b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
		}
	}
	return b
}
