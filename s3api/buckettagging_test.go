package s3api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/xfs3/xfs3/store"
)

func TestBucketTagging(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "tagged")
	c := ctx(t)
	if _, err := ts.client.GetBucketTagging(c, "tagged"); err == nil || !strings.Contains(err.Error(), "TagSet") {
		t.Fatalf("tags of an untagged bucket: %v", err)
	}
	resp, body := ts.do(t, "GET", "/tagged?tagging", nil, nil)
	wantError(t, resp, body, 404, "NoSuchTagSet")

	many := map[string]string{}
	for i := range 50 {
		many[fmt.Sprintf("key-%02d", i)] = strings.Repeat("v", 256)
	}
	many[strings.Repeat("k", 128)] = "long key"
	delete(many, "key-00") // 50 in all
	set, err := tags.NewTags(many, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.client.SetBucketTagging(c, "tagged", set); err != nil {
		t.Fatal(err)
	}
	got, err := ts.client.GetBucketTagging(c, "tagged")
	if err != nil || len(got.ToMap()) != 50 || got.ToMap()["key-49"] != strings.Repeat("v", 256) {
		t.Fatalf("tags read back: %d, %v", len(got.ToMap()), err)
	}
	// Object tags and bucket tags are apart.
	mustPut(t, ts, "tagged", "obj", "x", store.Meta{})
	if tg, err := ts.store.GetObjectTagging("tagged", "obj"); err != nil || len(tg) != 0 {
		t.Fatalf("object tags %v %v", tg, err)
	}

	doc := func(n int, key, value string) []byte {
		var b strings.Builder
		b.WriteString("<Tagging><TagSet>")
		for i := range n {
			fmt.Fprintf(&b, "<Tag><Key>%s%d</Key><Value>%s</Value></Tag>", key, i, value)
		}
		b.WriteString("</TagSet></Tagging>")
		return []byte(b.String())
	}
	for _, c := range []struct {
		name string
		body []byte
		code string
	}{
		{"51 tags", doc(51, "k", "v"), "InvalidTag"},
		{"key of 129", doc(1, strings.Repeat("k", 128), "v"), "InvalidTag"},
		{"value of 257", doc(1, "k", strings.Repeat("v", 257)), "InvalidTag"},
		{"system key", doc(1, "aws:k", "v"), "InvalidTag"},
		{"duplicate", []byte("<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>a</Key><Value>2</Value></Tag></TagSet></Tagging>"), "InvalidTag"},
		{"not xml", []byte("<Tagging"), "MalformedXML"},
	} {
		resp, body := ts.do(t, "PUT", "/tagged?tagging", c.body, nil)
		wantError(t, resp, body, 400, c.code)
	}
	if got, err := ts.client.GetBucketTagging(c, "tagged"); err != nil || len(got.ToMap()) != 50 {
		t.Fatalf("refused puts changed the tags: %d %v", len(got.ToMap()), err)
	}
	resp, body = ts.do(t, "PUT", "/missing?tagging", doc(1, "k", "v"), nil)
	wantError(t, resp, body, 404, "NoSuchBucket")

	if err := ts.client.RemoveBucketTagging(c, "tagged"); err != nil {
		t.Fatal(err)
	}
	resp, body = ts.do(t, "GET", "/tagged?tagging", nil, nil)
	wantError(t, resp, body, 404, "NoSuchTagSet")
	resp, _ = ts.do(t, "DELETE", "/tagged?tagging", nil, nil)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete of no tags: %d", resp.StatusCode)
	}
}
