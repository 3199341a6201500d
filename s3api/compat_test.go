package s3api

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/store"
)

// TestMetadataBeyondASCII: UTF-8 metadata goes out RFC 2047-encoded, as S3
// sends it, and minio-go reads back what it wrote; bytes that are not
// UTF-8 go back as they came.
func TestMetadataBeyondASCII(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	mustBucket(t, ts, "meta")
	body := strings.NewReader("x")
	if _, err := ts.client.PutObject(c, "meta", "utf8", body, 1, minio.PutObjectOptions{UserMetadata: map[string]string{"city": "Zürich é 日本"}}); err != nil {
		t.Fatal(err)
	}
	info, err := ts.client.StatObject(c, "meta", "utf8", minio.StatObjectOptions{})
	if err != nil || info.UserMetadata["City"] != "Zürich é 日本" {
		t.Fatalf("minio-go reads %q, %v", info.UserMetadata, err)
	}
	resp, _ := ts.do(t, "HEAD", "/meta/utf8", nil, nil)
	if got := resp.Header.Get("X-Amz-Meta-City"); got != "=?UTF-8?b?WsO8cmljaCDDqSDml6XmnKw=?=" {
		t.Errorf("header %q, want the RFC 2047 form", got)
	}
	if got, err := ts.store.HeadObject("meta", "utf8"); err != nil || got.Meta.User["city"] != "Zürich é 日本" {
		t.Errorf("stored %q, %v: want UTF-8 on the volume", got.Meta.User, err)
	}

	// A Latin-1 byte (what Python's http.client sends for "é").
	resp, _ = ts.do(t, "PUT", "/meta/latin1", []byte("x"), http.Header{"X-Amz-Meta-Name": {"caf\xe9"}})
	if resp.StatusCode != 200 {
		t.Fatalf("PUT: %d", resp.StatusCode)
	}
	resp, _ = ts.do(t, "HEAD", "/meta/latin1", nil, nil)
	if got := resp.Header.Get("X-Amz-Meta-Name"); got != "caf\xe9" {
		t.Errorf("header %q, want the bytes sent", got)
	}
}

// TestListCompat: an empty continuation token is no token; metadata=true
// lists metadata and tags (minio-go's WithMetadata).
func TestListCompat(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	mustBucket(t, ts, "lst")
	mustPut(t, ts, "lst", "a", "1", store.Meta{ContentType: "text/plain", User: map[string]string{"camera": "x100", "odd@name": "v"},
		Tags: []store.Tag{{Key: "k", Value: "v w"}}})
	mustPut(t, ts, "lst", "b", "2", store.Meta{})

	resp, body := ts.do(t, "GET", "/lst?list-type=2&continuation-token=", nil, nil)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("<Key>a</Key>")) {
		t.Errorf("empty continuation token: %d %s", resp.StatusCode, body)
	}

	var got []minio.ObjectInfo
	for o := range ts.client.ListObjects(c, "lst", minio.ListObjectsOptions{WithMetadata: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		got = append(got, o)
	}
	if len(got) != 2 || got[0].UserMetadata["X-Amz-Meta-Camera"] != "x100" || got[0].UserMetadata["content-type"] != "text/plain" ||
		got[0].UserMetadataStripped["Camera"] != "x100" || got[0].UserTags["k"] != "v w" || len(got[1].UserTags) != 0 {
		t.Errorf("WithMetadata: %+v", got)
	}
	_, body = ts.do(t, "GET", "/lst?metadata=true", nil, nil)
	var doc struct {
		Contents []struct {
			Key      string
			UserTags string
		}
	}
	if err := xml.Unmarshal(body, &doc); err != nil || len(doc.Contents) != 2 || doc.Contents[0].UserTags != "k=v+w" {
		t.Errorf("v1 with metadata: %+v, %v\n%s", doc, err, body)
	}
	if bytes.Contains(body, []byte("odd")) {
		t.Errorf("a metadata name that is no XML name was listed: %s", body)
	}
}

// TestNewBucketNamesRefused: S3's later rule against "-." and ".-".
func TestNewBucketNamesRefused(t *testing.T) {
	ts := newTestServer(t)
	for _, name := range []string{"a-.b", "a.-b"} {
		resp, body := ts.do(t, "PUT", "/"+name, nil, nil)
		wantError(t, resp, body, 400, "InvalidBucketName")
	}
}
