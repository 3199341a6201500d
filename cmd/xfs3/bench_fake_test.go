package main

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeS3 is an in-memory S3 server with just what bench uses: buckets,
// PUT (plain or aws-chunked), GET, HEAD, DELETE and ListObjectsV2. It checks no
// signature; denyAll answers every request as a server refusing the
// credentials would.
type fakeS3 struct {
	denyAll bool

	mu      sync.Mutex
	buckets map[string]map[string][]byte // guarded by mu
}

func newFakeS3(t *testing.T, denyAll bool) (*fakeS3, string) {
	t.Helper()
	f := &fakeS3{denyAll: denyAll, buckets: map[string]map[string][]byte{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// bucketNames lists the buckets that exist.
func (f *fakeS3) bucketNames() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for b := range f.buckets {
		names = append(names, b)
	}
	return names
}

// objectCount is the number of objects in bucket.
func (f *fakeS3) objectCount(bucket string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.buckets[bucket])
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.denyAll {
		s3Error(w, http.StatusForbidden, "InvalidAccessKeyId", "The Access Key Id you provided does not exist in our records.")
		return
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	f.mu.Lock()
	defer f.mu.Unlock()
	objs, ok := f.buckets[bucket]
	if !ok && !(key == "" && r.Method == http.MethodPut) {
		s3Error(w, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist")
		return
	}
	switch {
	case key == "" && r.Method == http.MethodPut:
		f.buckets[bucket] = map[string][]byte{}
	case key == "" && r.Method == http.MethodHead:
	case key == "" && r.Method == http.MethodDelete:
		if len(objs) > 0 {
			s3Error(w, http.StatusConflict, "BucketNotEmpty", "The bucket you tried to delete is not empty")
			return
		}
		delete(f.buckets, bucket)
		w.WriteHeader(http.StatusNoContent)
	case key == "" && r.Method == http.MethodGet:
		f.list(w, r, objs)
	case r.Method == http.MethodPut:
		data, err := readS3Body(r)
		if err != nil {
			s3Error(w, http.StatusBadRequest, "IncompleteBody", err.Error())
			return
		}
		objs[key] = data
		w.Header().Set("ETag", `"fake"`)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		data, ok := objs[key]
		if !ok && r.Method == http.MethodHead {
			w.WriteHeader(http.StatusNotFound) // a HEAD answer has no body
			return
		}
		if !ok {
			s3Error(w, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
		w.Header().Set("ETag", `"fake"`)
		if r.Method == http.MethodGet {
			w.Write(data)
		}
	case r.Method == http.MethodDelete:
		delete(objs, key)
		w.WriteHeader(http.StatusNoContent)
	default:
		s3Error(w, http.StatusNotImplemented, "NotImplemented", r.Method+" "+r.URL.String())
	}
}

// readS3Body decodes an aws-chunked body, minio-go's default over http,
// or returns a plain one.
func readS3Body(r *http.Request) ([]byte, error) {
	if !strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
		return io.ReadAll(r.Body)
	}
	br := bufio.NewReader(r.Body)
	var data []byte
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		hexSize, _, _ := strings.Cut(strings.TrimSpace(line), ";")
		n, err := strconv.ParseInt(hexSize, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("chunk header %q", line)
		}
		if n == 0 {
			return data, nil
		}
		chunk := make([]byte, n+2) // and its CRLF
		if _, err := io.ReadFull(br, chunk); err != nil {
			return nil, err
		}
		data = append(data, chunk[:n]...)
	}
}

// list answers ListObjectsV2; the continuation token is the last key sent.
func (f *fakeS3) list(w http.ResponseWriter, r *http.Request, objs map[string][]byte) {
	q := r.URL.Query()
	prefix, delim, after := q.Get("prefix"), q.Get("delimiter"), q.Get("continuation-token")
	maxKeys := 1000
	if m, err := strconv.Atoi(q.Get("max-keys")); err == nil && m > 0 {
		maxKeys = min(m, 1000)
	}
	type content struct {
		Key          string
		Size         int
		LastModified string
		ETag         string
	}
	type commonPrefix struct{ Prefix string }
	res := struct {
		XMLName               xml.Name `xml:"ListBucketResult"`
		Name, Prefix          string
		KeyCount, MaxKeys     int
		IsTruncated           bool
		NextContinuationToken string `xml:",omitempty"`
		Contents              []content
		CommonPrefixes        []commonPrefix
	}{Prefix: prefix, MaxKeys: maxKeys}
	var keys []string
	for k := range objs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix) || k <= after {
			continue
		}
		if res.KeyCount == maxKeys {
			res.IsTruncated = true
			break
		}
		if i := strings.Index(k[len(prefix):], delim); delim != "" && i >= 0 {
			p := k[:len(prefix)+i+len(delim)]
			if n := len(res.CommonPrefixes); n == 0 || res.CommonPrefixes[n-1].Prefix != p {
				res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{p})
				res.KeyCount++
			}
		} else {
			res.Contents = append(res.Contents, content{k, len(objs[k]), "2026-01-01T00:00:00.000Z", `"fake"`})
			res.KeyCount++
		}
		res.NextContinuationToken = k
	}
	if !res.IsTruncated {
		res.NextContinuationToken = ""
	}
	w.Header().Set("Content-Type", "application/xml")
	xml.NewEncoder(w).Encode(res)
}

func s3Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<Error><Code>%s</Code><Message>%s</Message></Error>", code, msg)
}
