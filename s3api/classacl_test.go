package s3api

import (
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/store"
)

// TestStorageClass: every S3 class is accepted, stored and returned (HEAD,
// GET, listings, uploads); STANDARD is not echoed on HEAD, as in S3; a
// copy takes the class it asks for, STANDARD by default.
func TestStorageClass(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "classes")
	c := ctx(t)
	for _, class := range storageClasses {
		key := "obj-" + class
		if _, err := ts.client.PutObject(c, "classes", key, strings.NewReader("x"), 1, minio.PutObjectOptions{StorageClass: class}); err != nil {
			t.Fatalf("%s: %v", class, err)
		}
		resp, _ := ts.do(t, "HEAD", "/classes/"+key, nil, nil)
		want := class
		if class == "STANDARD" {
			want = ""
		}
		if got := resp.Header.Get("X-Amz-Storage-Class"); got != want {
			t.Errorf("HEAD %s: x-amz-storage-class %q", class, got)
		}
	}
	for _, versions := range []bool{false, true} {
		for obj := range ts.client.ListObjects(c, "classes", minio.ListObjectsOptions{WithVersions: versions}) {
			if obj.Err != nil || "obj-"+obj.StorageClass != obj.Key {
				t.Errorf("listed (versions %v) %s with class %q (%v)", versions, obj.Key, obj.StorageClass, obj.Err)
			}
		}
	}
	for _, class := range storageClasses {
		attrs, err := ts.client.GetObjectAttributes(c, "classes", "obj-"+class, minio.ObjectAttributesOptions{})
		if err != nil || attrs.StorageClass != class {
			t.Errorf("GetObjectAttributes of obj-%s: class %q (%v)", class, attrs.StorageClass, err)
		}
	}
	resp, body := ts.do(t, "PUT", "/classes/bad", []byte("x"), http.Header{"X-Amz-Storage-Class": {"COLD"}})
	wantError(t, resp, body, 400, "InvalidStorageClass")

	// Copies: the class is the request's, not the source's.
	if _, err := ts.client.CopyObject(c, minio.CopyDestOptions{Bucket: "classes", Object: "copy"}, minio.CopySrcOptions{Bucket: "classes", Object: "obj-GLACIER"}); err != nil {
		t.Fatal(err)
	}
	if info, _ := ts.store.HeadObject("classes", "copy"); info.Meta.StorageClass != "" {
		t.Errorf("copy without a class: %q", info.Meta.StorageClass)
	}
	// A copy onto itself that changes only the class is allowed.
	resp, body = ts.do(t, "PUT", "/classes/copy", nil, http.Header{"X-Amz-Copy-Source": {"/classes/copy"}, "X-Amz-Storage-Class": {"ONEZONE_IA"}})
	if resp.StatusCode != 200 {
		t.Fatalf("self copy to another class: %d %s", resp.StatusCode, body)
	}
	if info, _ := ts.store.HeadObject("classes", "copy"); info.Meta.StorageClass != "ONEZONE_IA" {
		t.Errorf("self copy: class %q", info.Meta.StorageClass)
	}

	// Multipart: the class given at creation is listed and kept.
	id, err := ts.core.NewMultipartUpload(c, "classes", "mp", minio.PutObjectOptions{StorageClass: "INTELLIGENT_TIERING"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ts.core.ListMultipartUploads(c, "classes", "", "", "", "", 10)
	if err != nil || len(res.Uploads) != 1 || res.Uploads[0].StorageClass != "INTELLIGENT_TIERING" {
		t.Fatalf("uploads %+v %v", res.Uploads, err)
	}
	part, err := ts.core.PutObjectPart(c, "classes", "mp", id, 1, strings.NewReader("p"), 1, minio.PutObjectPartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.core.CompleteMultipartUpload(c, "classes", "mp", id, []minio.CompletePart{{PartNumber: 1, ETag: part.ETag}}, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if info, _ := ts.store.HeadObject("classes", "mp"); info.Meta.StorageClass != "INTELLIGENT_TIERING" {
		t.Errorf("completed upload: class %q", info.Meta.StorageClass)
	}
}

// TestPutACL: PUT ?acl takes the canned ACLs that change nothing or a body
// granting only the owner FULL_CONTROL; anything else is refused.
func TestPutACL(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "acls")
	mustPut(t, ts, "acls", "k", "x", store.Meta{})
	ownerOnly := func(id, perm string) []byte {
		return []byte(`<AccessControlPolicy><Owner><ID>` + id + `</ID></Owner><AccessControlList><Grant>` +
			`<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>` + id + `</ID></Grantee>` +
			`<Permission>` + perm + `</Permission></Grant></AccessControlList></AccessControlPolicy>`)
	}
	me := ownerID(testAccessKey)
	allUsers := []byte(`<AccessControlPolicy><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group">` +
		`<URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`)
	for _, target := range []string{"/acls?acl", "/acls/k?acl"} {
		for _, c := range []struct {
			name   string
			header http.Header
			body   []byte
			status int
			code   string
		}{
			{"private", http.Header{"X-Amz-Acl": {"private"}}, nil, 200, ""},
			{"bucket-owner-full-control", http.Header{"X-Amz-Acl": {"bucket-owner-full-control"}}, nil, 200, ""},
			{"owner FULL_CONTROL", nil, ownerOnly(me, "FULL_CONTROL"), 200, ""},
			{"public-read", http.Header{"X-Amz-Acl": {"public-read"}}, nil, 400, "AccessControlListNotSupported"},
			{"grant header", http.Header{"X-Amz-Grant-Read": {"uri=http://acs.amazonaws.com/groups/global/AllUsers"}}, nil, 400, "AccessControlListNotSupported"},
			{"owner READ only", nil, ownerOnly(me, "READ"), 400, "AccessControlListNotSupported"},
			{"another owner", nil, ownerOnly(ownerID("someone"), "FULL_CONTROL"), 400, "AccessControlListNotSupported"},
			{"all users", nil, allUsers, 400, "AccessControlListNotSupported"},
			{"nothing", nil, nil, 400, "MissingSecurityHeader"},
			{"both", http.Header{"X-Amz-Acl": {"private"}}, ownerOnly(me, "FULL_CONTROL"), 400, "UnexpectedContent"},
			{"not xml", nil, []byte("<AccessControlPolicy"), 400, "MalformedACLError"},
		} {
			resp, body := ts.do(t, "PUT", target, c.body, c.header)
			if c.code != "" {
				wantError(t, resp, body, c.status, c.code)
			} else if resp.StatusCode != c.status {
				t.Errorf("%s %s: %d %s", target, c.name, resp.StatusCode, body)
			}
		}
	}
	resp, body := ts.do(t, "PUT", "/acls/missing?acl", nil, http.Header{"X-Amz-Acl": {"private"}})
	wantError(t, resp, body, 404, "NoSuchKey")
	// Canned ACLs on multipart and copy: accepted or refused as on PUT.
	resp, body = ts.do(t, "POST", "/acls/mp?uploads", nil, http.Header{"X-Amz-Acl": {"bucket-owner-full-control"}})
	if resp.StatusCode != 200 {
		t.Errorf("CreateMultipartUpload with a canned ACL: %d %s", resp.StatusCode, body)
	}
	resp, body = ts.do(t, "PUT", "/acls/copy", nil, http.Header{"X-Amz-Copy-Source": {"/acls/k"}, "X-Amz-Acl": {"public-read"}})
	wantError(t, resp, body, 400, "AccessControlListNotSupported")
}

// TestPresignedExpiryEdges: S3's answers for presigned URLs out of their
// validity: expired, not valid yet, X-Amz-Expires out of range.
func TestPresignedExpiryEdges(t *testing.T) {
	var shift atomic.Int64 // the server's clock minus the client's
	ts := newTestServer(t, func(c *Config) {
		c.Now = func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
	})
	mustBucket(t, ts, "presign")
	mustPut(t, ts, "presign", "k", "x", store.Meta{})
	presigned := func(expires int64) string {
		req := ts.rawRequest(t, "GET", "/presign/k", nil, nil)
		return signer.PreSignV4(*req, testAccessKey, testSecretKey, "", testRegion, expires).URL.String()
	}
	get := func(u string) (*http.Response, []byte) {
		req, err := http.NewRequest("GET", u, nil)
		if err != nil {
			t.Fatal(err)
		}
		return send(t, req)
	}
	if resp, body := get(presigned(604800)); resp.StatusCode != 200 || string(body) != "x" {
		t.Fatalf("7-day URL: %d %s", resp.StatusCode, body)
	}
	for _, expires := range []string{"604801", "0", "-5", "soon"} {
		p, _ := url.Parse(presigned(60))
		q := p.Query()
		q.Set("X-Amz-Expires", expires)
		p.RawQuery = q.Encode()
		resp, body := get(p.String())
		wantError(t, resp, body, 400, "AuthorizationQueryParametersError")
	}
	for _, c := range []struct {
		shift   time.Duration
		status  int
		message string
	}{
		{59 * time.Second, 200, ""},
		{61 * time.Second, 403, "Request has expired"},
		{-14 * time.Minute, 200, ""}, // signed ahead of the server, within the skew
		{-16 * time.Minute, 403, "Request is not yet valid"},
	} {
		u := presigned(60)
		shift.Store(int64(c.shift))
		resp, body := get(u)
		shift.Store(0)
		if c.status == 200 {
			if resp.StatusCode != 200 {
				t.Errorf("server clock %v: %d %s", c.shift, resp.StatusCode, body)
			}
			continue
		}
		wantError(t, resp, body, c.status, "AccessDenied")
		if !strings.Contains(string(body), c.message) {
			t.Errorf("server clock %v: %s", c.shift, body)
		}
	}
}
