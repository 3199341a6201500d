package s3api

import (
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/xfs3/xfs3/store"
)

func TestTaggingMinio(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "tags")
	c := ctx(t)
	_, err := ts.client.PutObject(c, "tags", "k", strings.NewReader("x"), 1,
		minio.PutObjectOptions{UserTags: map[string]string{"b": "2", "a": "1 + more"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ts.client.GetObjectTagging(c, "tags", "k", minio.GetObjectTaggingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := got.ToMap(); len(m) != 2 || m["a"] != "1 + more" || m["b"] != "2" {
		t.Errorf("tags from PUT: %v", m)
	}
	resp, _ := ts.do(t, "HEAD", "/tags/k", nil, nil)
	if resp.Header.Get("X-Amz-Tagging-Count") != "2" {
		t.Errorf("x-amz-tagging-count: %v", resp.Header)
	}

	set, _ := tags.NewTags(map[string]string{"only": "one"}, true)
	if err := ts.client.PutObjectTagging(c, "tags", "k", set, minio.PutObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = ts.client.GetObjectTagging(c, "tags", "k", minio.GetObjectTaggingOptions{})
	if err != nil || got.ToMap()["only"] != "one" || len(got.ToMap()) != 1 {
		t.Errorf("after PutObjectTagging: %v %v", got, err)
	}

	// Copies keep tags (COPY) or take x-amz-tagging (REPLACE).
	if _, err := ts.client.CopyObject(c, minio.CopyDestOptions{Bucket: "tags", Object: "kept"}, minio.CopySrcOptions{Bucket: "tags", Object: "k"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.client.CopyObject(c, minio.CopyDestOptions{Bucket: "tags", Object: "replaced", UserTags: map[string]string{"new": "tag"}, ReplaceTags: true},
		minio.CopySrcOptions{Bucket: "tags", Object: "k"}); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"kept": "only", "replaced": "new"} {
		tg, err := ts.store.GetObjectTagging("tags", key)
		if err != nil || len(tg) != 1 || tg[0].Key != want {
			t.Errorf("%s: tags %v %v", key, tg, err)
		}
	}

	if err := ts.client.RemoveObjectTagging(c, "tags", "k", minio.RemoveObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	resp, body := ts.do(t, "GET", "/tags/k?tagging", nil, nil)
	want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet></TagSet></Tagging>`
	if resp.StatusCode != 200 || string(body) != want {
		t.Errorf("empty tagging document: %d %s", resp.StatusCode, body)
	}
	resp, body = ts.do(t, "GET", "/tags/missing?tagging", nil, nil)
	wantError(t, resp, body, 404, "NoSuchKey")
}

func TestTaggingHeaderParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []store.Tag
		code string
	}{
		{in: "", want: []store.Tag{}},
		{in: "b=2&a=1", want: []store.Tag{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}}},
		{in: "a=", want: []store.Tag{{Key: "a", Value: ""}}},
		{in: "k=%20v%2B", want: []store.Tag{{Key: "k", Value: " v+"}}},
		{in: "a=1&a=2", code: "InvalidTag"},
		{in: "=v", code: "InvalidTag"},
		{in: "a=%zz", code: "InvalidTag"},
		{in: strings.Repeat("k", 129) + "=v", code: "InvalidTag"},
		{in: "k=" + strings.Repeat("v", 257), code: "InvalidTag"},
	} {
		got, err := parseTaggingHeader(c.in)
		if c.code != "" {
			if err == nil || toS3Error(err).code != c.code {
				t.Errorf("%q: %v, want %s", c.in, err, c.code)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %v %v", c.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: %v, want %v", c.in, got, c.want)
			}
		}
	}
}
