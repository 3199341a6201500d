package integration

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// versionIDForm is how the store's version IDs look: 26 characters of
// lowercase base32hex (store package doc, "Versions").
var versionIDForm = regexp.MustCompile(`^[0-9a-v]{26}$`)

// wantVersionID fails the test unless id is a version ID the store makes
// (not "null").
func wantVersionID(t *testing.T, what, id string) {
	t.Helper()
	if !versionIDForm.MatchString(id) {
		t.Errorf("%s: version ID %q, want 26 characters of lowercase base32hex", what, id)
	}
}

// verEntry is one version or delete marker as ListObjectVersions shows
// it, with the sha256 of the version's bytes read back by its ID.
type verEntry struct {
	Key, VersionID string
	Latest, Marker bool
	Size           int64
	SHA256         string // "" for a delete marker
}

func (e verEntry) String() string {
	s := e.Key + "@" + e.VersionID
	if e.Marker {
		s += "(marker)"
	}
	if e.Latest {
		s += "(latest)"
	}
	return s
}

// bucketVersions lists every version and delete marker of bucket with
// minio-go's ListObjects WithVersions (recursive: the requests of
// mc ls --versions --recursive) and reads every version whole by its ID.
func bucketVersions(t *testing.T, c *minio.Client, bucket string) []verEntry {
	t.Helper()
	ctx := context.Background()
	var out []verEntry
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{WithVersions: true, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("list versions of %s: %v", bucket, o.Err)
		}
		e := verEntry{Key: o.Key, VersionID: o.VersionID, Latest: o.IsLatest, Marker: o.IsDeleteMarker, Size: o.Size}
		if !e.Marker {
			r, err := c.GetObject(ctx, bucket, o.Key, minio.GetObjectOptions{VersionID: o.VersionID})
			if err != nil {
				t.Fatalf("get %s: %v", e, err)
			}
			h := sha256.New()
			n, err := io.Copy(h, r)
			r.Close()
			if err != nil || n != o.Size {
				t.Fatalf("read %s: %d bytes of %d (%v)", e, n, o.Size, err)
			}
			e.SHA256 = hex.EncodeToString(h.Sum(nil))
		}
		out = append(out, e)
	}
	return out
}

// versionsOf is bucketVersions of every bucket, by bucket name.
func versionsOf(t *testing.T, c *minio.Client) map[string][]verEntry {
	t.Helper()
	buckets, err := c.ListBuckets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all := map[string][]verEntry{}
	for _, b := range buckets {
		all[b.Name] = bucketVersions(t, c, b.Name)
	}
	return all
}

// Names of the versions layout on the volume (store package doc,
// "Versions").
const (
	versionsTree       = ".xfs3.versions/"
	besidePrefix       = ".xfs3.o."
	xattrVersionName   = "user.xfs3.version"
	xattrDeleteMarker  = "user.xfs3.delete-marker"
	xattrDeletedBy     = "user.xfs3.deleted-by"
	nullVersionSuffix  = ".null"
	reservedNamePrefix = ".xfs3."
)

// place is where a version is on the volume, for checkKernelVersions.
type place struct {
	bucket, key, version string
	current              bool // the plain file at the key
}

// checkKernelVersion checks the kernel's file e, at place p, against the
// version expect has there, and takes it off.
func checkKernelVersion(t *testing.T, e oracle.Entry, expect map[place]verEntry, p place) {
	t.Helper()
	v, ok := expect[p]
	if !ok {
		t.Errorf("kernel shows %s (version %s of %q, current %v, %d bytes), which the API does not list", e.Path, p.version, p.key, p.current, e.Size)
		return
	}
	delete(expect, p)
	_, marker := e.Xattrs[xattrDeleteMarker]
	switch {
	case marker != v.Marker:
		t.Errorf("%s: delete marker %v on the kernel mount, the API says %v", e.Path, marker, v.Marker)
	case marker && e.Size != 0:
		t.Errorf("%s: a delete marker of %d bytes", e.Path, e.Size)
	case !marker && (e.Size != v.Size || e.SHA256 != v.SHA256):
		t.Errorf("%s: kernel sees %d bytes sha256 %s, API gave %d bytes sha256 %s", e.Path, e.Size, e.SHA256, v.Size, v.SHA256)
	}
}

// checkKernelVersions stops the server, checks the volume with
// xfs_repair -n, mounts it read-only and requires the kernel to show
// exactly the versions of want (from versionsOf): each bucket's current
// versions as plain files at their keys, every other version and every
// delete marker in the bucket's versions tree, laid out as the store's
// package doc says: .xfs3.versions/<prefix directories>/.xfs3.o.<last
// component>/<ID>, the null version named <sequence>.null, or in file
// form the version itself at .xfs3.o.<last component>, whose
// user.xfs3.deleted-by names the delete marker above it; each file's
// user.xfs3.version names its version and delete markers are empty
// files with user.xfs3.delete-marker. Keys must be plain names (no
// component the store escapes). The volume is unmounted again before it
// returns, so that it can be served again. It returns how many keys it
// found in file form.
//
// checkKernelView cannot be used on a volume with versions: it takes
// every file in a bucket for a current object, so each file of a
// versions tree is one the API "does not list".
func (s *server) checkKernelVersions(t *testing.T, want map[string][]verEntry) (held int) {
	t.Helper()
	s.stop(t)
	oracle.Repair(t, s.Volume)
	mnt := oracle.Mount(t, s.Volume, true)
	snap, err := oracle.SnapshotDir(mnt)
	oracle.Unmount(t, mnt)
	if err != nil {
		t.Fatal(err)
	}
	expect := map[place]verEntry{}
	for b, vs := range want {
		for _, v := range vs {
			expect[place{b, v.Key, v.VersionID, v.Latest && !v.Marker}] = v
		}
	}
	seenBuckets := map[string]bool{}
	files := 0
	for _, e := range snap {
		if e.Path == "." || e.Path == ".xfs3" || strings.HasPrefix(e.Path, ".xfs3/") {
			continue
		}
		bucket, rest, inBucket := strings.Cut(e.Path, "/")
		if !inBucket {
			if _, ok := want[bucket]; !ok || e.Type != oracle.TypeDir {
				t.Errorf("kernel shows %s (a %s), which is no bucket the API lists", e.Path, e.Type)
			}
			seenBuckets[bucket] = true
			continue
		}
		if e.Type == oracle.TypeDir {
			continue
		}
		if e.Type != oracle.TypeFile {
			t.Errorf("kernel shows %s, a %s", e.Path, e.Type)
			continue
		}
		files++
		name := e.Xattrs[xattrVersionName]
		var p place
		if tree, ok := strings.CutPrefix(rest, versionsTree); ok {
			dir, file := path.Split(tree)
			if key, ok := strings.CutPrefix(file, besidePrefix); ok {
				// A key's versions in file form: the version, and the
				// marker above it.
				by := e.Xattrs[xattrDeletedBy]
				m, ok := expect[place{bucket: bucket, key: dir + key, version: by}]
				if !ok || !m.Marker || strings.Contains("/"+dir, "/"+reservedNamePrefix) {
					t.Errorf("kernel shows %s: versions in file form whose marker %q (%v) the API does not list", e.Path, by, m)
					continue
				}
				delete(expect, place{bucket: bucket, key: dir + key, version: by})
				held++
				p = place{bucket: bucket, key: dir + key, version: name}
				if strings.HasSuffix(name, nullVersionSuffix) {
					p.version = "null"
				}
				files++
				checkKernelVersion(t, e, expect, p)
				continue
			}
			parent, last := path.Split(strings.TrimSuffix(dir, "/"))
			key, ok := strings.CutPrefix(last, besidePrefix)
			if !ok || strings.Contains("/"+parent, "/"+reservedNamePrefix) {
				t.Errorf("kernel shows %s: not a plain key's versions directory", e.Path)
				continue
			}
			p = place{bucket: bucket, key: parent + key, version: file}
			if base, null := strings.CutSuffix(file, nullVersionSuffix); null {
				p.version = "null"
				// Written before versioning, a null version has no name
				// of its own.
				if name != "" && name != file {
					t.Errorf("%s: %s is %q", e.Path, xattrVersionName, name)
				}
				if !versionIDForm.MatchString(base) {
					t.Errorf("%s: the null version's sequence %q is malformed", e.Path, base)
				}
			} else if name != file {
				t.Errorf("%s: %s is %q, want its file name", e.Path, xattrVersionName, name)
			}
		} else {
			if strings.Contains("/"+rest, "/"+reservedNamePrefix) {
				t.Errorf("kernel shows %s: not a plain key", e.Path)
				continue
			}
			p = place{bucket: bucket, key: rest, version: name, current: true}
			if name == "" || strings.HasSuffix(name, nullVersionSuffix) {
				p.version = "null"
			}
		}
		checkKernelVersion(t, e, expect, p)
	}
	for p, v := range expect {
		t.Errorf("the kernel does not show %s of bucket %s (current %v)", v, p.bucket, p.current)
	}
	for b := range want {
		if !seenBuckets[b] {
			t.Errorf("the kernel does not show bucket %s", b)
		}
	}
	if !t.Failed() {
		t.Logf("kernel mount matches the API: %d buckets, %d files of versions (%d keys in file form)", len(want), files, held)
	}
	return held
}

// TestVersioningAwsCLI drives bucket versioning through the real binary
// with the aws CLI: put/get-bucket-versioning, versions made by
// put-object, list-object-versions, get/head-object --version-id, delete
// markers made and removed, delete-object --version-id, a copy of an old
// version restoring it, a suspended bucket's null versions, a bucket that
// cannot be deleted while versions remain; the volume is checked with
// xfs_repair and a kernel mount while versions exist, versions survive a
// restart, and once every version is deleted so is the bucket. Each aws
// command costs most of a second, so requests that only check a result
// go through minio-go.
func TestVersioningAwsCLI(t *testing.T) {
	s := startServer(t, "1G")
	aws, home := awsClient(t, s)
	c := s.client(t)
	ctx := context.Background()
	file := func(content string) string {
		t.Helper()
		p := filepath.Join(home, "body")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const b = "vcli"
	aws.run("s3api", "create-bucket", "--bucket", b)
	if err := c.MakeBucket(ctx, "vcli-plain", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if info := mustPut(t, ctx, c, "vcli-plain", "plain.txt", []byte("never versioned"), minio.PutObjectOptions{}); info.VersionID != "" {
		t.Errorf("PUT to a bucket that was never versioned: x-amz-version-id %q", info.VersionID)
	}

	var state struct{ Status string }
	if cfg, err := c.GetBucketVersioning(ctx, b); err != nil || cfg.Status != "" {
		t.Errorf("versioning of a new bucket: %+v %v", cfg, err)
	}
	aws.run("s3api", "put-bucket-versioning", "--bucket", b, "--versioning-configuration", "Status=Enabled")
	decode(t, aws.run("s3api", "get-bucket-versioning", "--bucket", b), &state)
	if state.Status != "Enabled" {
		t.Errorf("get-bucket-versioning: %+v, want Enabled", state)
	}

	put := func(key, content string) string {
		t.Helper()
		var r struct{ VersionId string }
		decode(t, aws.run("s3api", "put-object", "--bucket", b, "--key", key, "--body", file(content)), &r)
		return r.VersionId
	}
	bodies := []string{"version one", "version two, longer", "version three"}
	v1, v2, v3 := put("doc.txt", bodies[0]), put("doc.txt", bodies[1]), put("doc.txt", bodies[2])
	for i, v := range []string{v1, v2, v3} {
		wantVersionID(t, fmt.Sprintf("put-object %d", i+1), v)
	}
	if v1 == v2 || v2 == v3 || v1 == v3 {
		t.Fatalf("three put-objects gave version IDs %s %s %s", v1, v2, v3)
	}

	// list renders list-object-versions: its Versions in order, then its
	// DeleteMarkers in order (the aws CLI keeps them apart).
	list := func() []string {
		t.Helper()
		var l struct {
			Versions []struct {
				Key, VersionId string
				IsLatest       bool
				Size           int64
			}
			DeleteMarkers []struct {
				Key, VersionId string
				IsLatest       bool
			}
		}
		if out := aws.run("s3api", "list-object-versions", "--bucket", b); strings.TrimSpace(out) != "" {
			decode(t, out, &l)
		}
		var got []string
		for _, v := range l.Versions {
			got = append(got, fmt.Sprintf("%s %s latest=%v size=%d", v.Key, v.VersionId, v.IsLatest, v.Size))
		}
		for _, m := range l.DeleteMarkers {
			got = append(got, fmt.Sprintf("%s %s latest=%v marker", m.Key, m.VersionId, m.IsLatest))
		}
		return got
	}
	version := func(key, id string, latest bool, body string) string {
		return fmt.Sprintf("%s %s latest=%v size=%d", key, id, latest, len(body))
	}
	marker := func(key, id string, latest bool) string {
		return fmt.Sprintf("%s %s latest=%v marker", key, id, latest)
	}
	wantList := func(what string, want ...string) {
		t.Helper()
		if got := list(); !slices.Equal(got, want) {
			t.Errorf("list-object-versions %s:\n got %q\nwant %q", what, got, want)
		}
	}
	wantList("after three puts", version("doc.txt", v3, true, bodies[2]), version("doc.txt", v2, false, bodies[1]), version("doc.txt", v1, false, bodies[0]))
	// current reads key through minio-go: its bytes and version.
	current := func(key string) (string, string) {
		t.Helper()
		o, err := c.GetObject(ctx, b, key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		data, err := io.ReadAll(o)
		if err != nil {
			return "", "error " + errCode(err)
		}
		st, _ := o.Stat()
		return string(data), st.VersionID
	}

	outFile := filepath.Join(home, "out")
	var got struct {
		VersionId     string
		ContentLength int64
	}
	decode(t, aws.run("s3api", "get-object", "--bucket", b, "--key", "doc.txt", "--version-id", v1, outFile), &got)
	if data, _ := os.ReadFile(outFile); string(data) != bodies[0] || got.VersionId != v1 {
		t.Errorf("get-object --version-id of the oldest: %q, version %s", data, got.VersionId)
	}
	got.VersionId = ""
	decode(t, aws.run("s3api", "head-object", "--bucket", b, "--key", "doc.txt", "--version-id", v2), &got)
	if got.VersionId != v2 || got.ContentLength != int64(len(bodies[1])) {
		t.Errorf("head-object --version-id: %+v", got)
	}

	// A delete without a version ID makes a delete marker: the key reads
	// as missing, its versions stay.
	type deleted struct {
		DeleteMarker bool
		VersionId    string
	}
	var del deleted
	decode(t, aws.run("s3api", "delete-object", "--bucket", b, "--key", "doc.txt"), &del)
	m1 := del.VersionId
	wantVersionID(t, "delete marker", m1)
	if !del.DeleteMarker || m1 == v3 {
		t.Errorf("delete-object on a versioned bucket: %+v", del)
	}
	if out, err := aws.try("s3api", "head-object", "--bucket", b, "--key", "doc.txt"); err == nil || !strings.Contains(out, "404") {
		t.Errorf("head-object of a deleted key: %v\n%s", err, out)
	}
	if out, err := aws.try("s3api", "get-object", "--bucket", b, "--key", "doc.txt", "--version-id", m1, outFile); err == nil || !strings.Contains(out, "MethodNotAllowed") {
		t.Errorf("get-object --version-id of a delete marker: %v\n%s", err, out)
	}
	wantList("after a delete", version("doc.txt", v3, false, bodies[2]), version("doc.txt", v2, false, bodies[1]),
		version("doc.txt", v1, false, bodies[0]), marker("doc.txt", m1, true))

	// Deleting the marker by its ID brings the object back.
	del = deleted{}
	decode(t, aws.run("s3api", "delete-object", "--bucket", b, "--key", "doc.txt", "--version-id", m1), &del)
	if !del.DeleteMarker || del.VersionId != m1 {
		t.Errorf("delete-object --version-id of the marker: %+v, want DeleteMarker true and VersionId %s", del, m1)
	}
	if data, id := current("doc.txt"); data != bodies[2] || id != v3 {
		t.Errorf("doc.txt after its marker was deleted: %q, version %s, want %s", data, id, v3)
	}

	// Deleting a version by ID removes it for good, and asking again for
	// a version that is gone is no error; a malformed ID is one.
	del = deleted{}
	decode(t, aws.run("s3api", "delete-object", "--bucket", b, "--key", "doc.txt", "--version-id", v2), &del)
	if del.DeleteMarker || del.VersionId != v2 {
		t.Errorf("delete-object --version-id of a version: %+v", del)
	}
	if err := c.RemoveObject(ctx, b, "doc.txt", minio.RemoveObjectOptions{VersionID: v2}); err != nil {
		t.Errorf("DELETE ?versionId of a version already gone: %v", err)
	}
	if out, err := aws.try("s3api", "delete-object", "--bucket", b, "--key", "doc.txt", "--version-id", "not-a-version"); err == nil || !strings.Contains(out, "InvalidArgument") {
		t.Errorf("delete-object --version-id not-a-version: %v\n%s", err, out)
	}
	_, err := c.StatObject(ctx, b, "doc.txt", minio.StatObjectOptions{VersionID: v2})
	if minio.ToErrorResponse(err).StatusCode != 404 {
		t.Errorf("HEAD of a deleted version: %v, want 404", err)
	}

	// Copying the oldest version onto its own key restores it as a new
	// version.
	var cp struct {
		CopySourceVersionId, VersionId string
		CopyObjectResult               struct{ ETag string }
	}
	decode(t, aws.run("s3api", "copy-object", "--bucket", b, "--key", "doc.txt", "--copy-source", b+"/doc.txt?versionId="+v1), &cp)
	v4 := cp.VersionId
	wantVersionID(t, "copy-object", v4)
	if cp.CopySourceVersionId != v1 || v4 == v3 || v4 == v1 || cp.CopyObjectResult.ETag == "" {
		t.Errorf("copy-object of version %s onto its key: %+v", v1, cp)
	}
	if data, id := current("doc.txt"); data != bodies[0] || id != v4 {
		t.Errorf("doc.txt after copying its oldest version onto it: %q, version %s, want %s", data, id, v4)
	}

	// Suspended: writes make the null version, replacing the previous
	// null version, and deletes make a null delete marker.
	aws.run("s3api", "put-bucket-versioning", "--bucket", b, "--versioning-configuration", "Status=Suspended")
	if cfg, err := c.GetBucketVersioning(ctx, b); err != nil || cfg.Status != "Suspended" {
		t.Errorf("versioning after put-bucket-versioning Suspended: %+v %v", cfg, err)
	}
	if info := mustPut(t, ctx, c, b, "doc.txt", []byte("suspended write"), minio.PutObjectOptions{}); info.VersionID != "null" {
		t.Errorf("PUT on a suspended bucket: version %q, want null", info.VersionID)
	}
	if id := put("doc.txt", "suspended again"); id != "null" {
		t.Errorf("put-object on a suspended bucket: version %q, want null", id)
	}
	wantList("after deleting v2 and two suspended puts", version("doc.txt", "null", true, "suspended again"), version("doc.txt", v4, false, bodies[0]),
		version("doc.txt", v3, false, bodies[2]), version("doc.txt", v1, false, bodies[0]))
	cp.VersionId, cp.CopySourceVersionId = "", ""
	decode(t, aws.run("s3api", "copy-object", "--bucket", b, "--key", "other.txt", "--copy-source", b+"/doc.txt?versionId="+v3), &cp)
	if cp.CopySourceVersionId != v3 || cp.VersionId != "null" {
		t.Errorf("copy-object of a version in a suspended bucket: %+v", cp)
	}
	if data, id := current("other.txt"); data != bodies[2] || id != "null" {
		t.Errorf("copy of version %s reads %q, version %q", v3, data, id)
	}
	for _, key := range []string{"doc.txt", "other.txt"} {
		del = deleted{}
		decode(t, aws.run("s3api", "delete-object", "--bucket", b, "--key", key), &del)
		if !del.DeleteMarker || del.VersionId != "null" {
			t.Errorf("delete-object %s on a suspended bucket: %+v, want a null delete marker", key, del)
		}
	}
	wantList("after suspended deletes", version("doc.txt", v4, false, bodies[0]), version("doc.txt", v3, false, bodies[2]),
		version("doc.txt", v1, false, bodies[0]), marker("doc.txt", "null", true), marker("other.txt", "null", true))
	if out, err := aws.try("s3api", "delete-bucket", "--bucket", b); err == nil || !strings.Contains(out, "BucketNotEmpty") {
		t.Errorf("delete-bucket with versions left: %v\n%s", err, out)
	}

	// A key deleted once keeps its version as one file in the versions
	// tree (file form, store package doc), read as the version and its
	// marker; undoing such a DELETE brings the key back.
	const once = "vonce"
	aws.run("s3api", "create-bucket", "--bucket", once)
	aws.run("s3api", "put-bucket-versioning", "--bucket", once, "--versioning-configuration", "Status=Enabled")
	onceIDs := map[string][2]string{} // key: version, marker
	for _, key := range []string{"kept.txt", "undo.txt"} {
		var r struct{ VersionId string }
		decode(t, aws.run("s3api", "put-object", "--bucket", once, "--key", key, "--body", file("body of "+key)), &r)
		del = deleted{}
		decode(t, aws.run("s3api", "delete-object", "--bucket", once, "--key", key), &del)
		if !del.DeleteMarker || del.VersionId == r.VersionId {
			t.Fatalf("delete-object %s: %+v (its version %s)", key, del, r.VersionId)
		}
		onceIDs[key] = [2]string{r.VersionId, del.VersionId}
	}
	if out, err := aws.try("s3api", "head-object", "--bucket", once, "--key", "kept.txt"); err == nil || !strings.Contains(out, "404") {
		t.Errorf("head-object of a key deleted once: %v\n%s", err, out)
	}
	aws.run("s3api", "get-object", "--bucket", once, "--key", "kept.txt", "--version-id", onceIDs["kept.txt"][0], outFile)
	if got, err := os.ReadFile(outFile); err != nil || string(got) != "body of kept.txt" {
		t.Errorf("get-object of the version a marker hides: %q %v", got, err)
	}
	aws.run("s3api", "delete-object", "--bucket", once, "--key", "undo.txt", "--version-id", onceIDs["undo.txt"][1])
	if got := mustGet(t, ctx, c, once, "undo.txt", minio.GetObjectOptions{}); string(got) != "body of undo.txt" {
		t.Errorf("undo.txt after removing its marker: %q", got)
	}

	// The volume holds what the API lists, the versions survive a
	// restart.
	want := versionsOf(t, c)
	if len(want[b]) != 5 || len(want["vcli-plain"]) != 1 || len(want[once]) != 3 {
		t.Fatalf("versions before the restart: %v", want)
	}
	if held := s.checkKernelVersions(t, want); held != 1 {
		t.Errorf("%d keys in file form on the volume, want 1 (%s/kept.txt)", held, once)
	}
	s = startServerOn(t, s.Volume, "1G")
	aws, _ = awsClient(t, s)
	c = s.client(t)
	if after := versionsOf(t, c); !equalVersions(after, want) {
		t.Errorf("versions after a restart:\n%v\nbefore:\n%v", after, want)
	}

	// Deleting every version and marker by ID (one delete-objects)
	// empties the bucket, which can then be deleted.
	var objects []map[string]string
	for _, v := range want[b] {
		objects = append(objects, map[string]string{"Key": v.Key, "VersionId": v.VersionID})
	}
	spec, _ := json.Marshal(map[string]any{"Objects": objects})
	var gone struct {
		Deleted []struct{ Key, VersionId string }
		Errors  []any
	}
	decode(t, aws.run("s3api", "delete-objects", "--bucket", b, "--delete", string(spec)), &gone)
	if len(gone.Deleted) != len(objects) || len(gone.Errors) != 0 {
		t.Errorf("delete-objects of every version: %+v", gone)
	}
	if left := bucketVersions(t, c, b); len(left) != 0 {
		t.Errorf("versions left: %v", left)
	}
	aws.run("s3api", "delete-bucket", "--bucket", b)
	if ok, err := c.BucketExists(ctx, b); ok || err != nil {
		t.Errorf("bucket after delete-bucket: exists %v (%v)", ok, err)
	}
	// The key in file form goes by ID too, version first.
	for _, id := range onceIDs["kept.txt"] {
		aws.run("s3api", "delete-object", "--bucket", once, "--key", "kept.txt", "--version-id", id)
	}
	aws.run("s3api", "delete-object", "--bucket", once, "--key", "undo.txt", "--version-id", onceIDs["undo.txt"][0])
	aws.run("s3api", "delete-bucket", "--bucket", once)
	s.checkKernelView(t, s.apiView(t))
}

// equalVersions tells whether two versionsOf results are the same.
func equalVersions(a, b map[string][]verEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

// botoEntry is one entry of a list_object_versions page as
// testdata/versioning.py prints it.
type botoEntry struct {
	Key       string `json:"key"`
	VersionID string `json:"version_id"`
	Latest    bool   `json:"latest"`
	Marker    bool   `json:"marker"`
	Size      int64  `json:"size"`
}

// botoFailure is a refused request as testdata/versioning.py prints it
// (null when the request succeeded).
type botoFailure struct {
	Status       int    `json:"status"`
	Code         string `json:"code"`
	DeleteMarker string `json:"delete_marker"`
	VersionID    string `json:"version_id"`
}

// botoTags is a get_object_tagging answer.
type botoTags struct {
	VersionID string `json:"version_id"`
	Tags      []struct{ Key, Value string }
}

// botoRead is an object read and the version it said it was.
type botoRead struct {
	Body      string `json:"body"`
	VersionID string `json:"version_id"`
}

// flattenPages joins a paginated walk of at most size entries a page.
// boto3 splits each page into Versions and DeleteMarkers, so the order
// inside a page is rebuilt: by key, then newest first, which for this
// server's IDs (time first) is descending ID, with the null version
// taken for the oldest, as it is in every walk of this test.
func flattenPages(t *testing.T, what string, pages [][]botoEntry, size int) []botoEntry {
	t.Helper()
	var all []botoEntry
	for i, p := range pages {
		if (len(p) == 0 && len(pages) > 1) || len(p) > size {
			t.Errorf("%s: page %d of %d has %d entries, want 1 to %d", what, i+1, len(pages), len(p), size)
		}
		p = slices.Clone(p)
		slices.SortFunc(p, func(a, b botoEntry) int {
			age := func(e botoEntry) string {
				if e.VersionID == "null" {
					return ""
				}
				return e.VersionID
			}
			return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(age(b), age(a)))
		})
		all = append(all, p...)
	}
	return all
}

// TestVersioningBoto3 runs testdata/versioning.py against the real
// binary: versioning switched on, versions and delete markers made with
// put_object and delete_object, the list_object_versions paginator with
// pages of one and two entries (key-marker and version-id-marker paging)
// walking exactly every version and marker, reads, heads, tags and
// attributes by VersionId, delete_objects naming versions, a multipart
// upload with a part copied from an old version, then
// bucket.object_versions.delete() emptying the bucket so that
// delete_bucket succeeds. A second bucket with null versions (from
// before versioning and from a suspended bucket) stays, and the volume
// is checked with xfs_repair and a kernel mount against every version.
func TestVersioningBoto3(t *testing.T) {
	py := boto3Python(t)
	s := startServer(t, "1G")
	cmd := exec.Command(py, "testdata/versioning.py", s.URL, accessKey, secretKey, region)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("boto3 script: %v\n%s", err, stderr.String())
	}
	t.Logf("boto3 script ran in %v", time.Since(start).Round(time.Millisecond))
	var out struct {
		StateNew      string          `json:"state_new"`
		MFADelete     *botoFailure    `json:"mfa_delete"`
		StateAfterMFA string          `json:"state_after_mfa"`
		StateEnabled  string          `json:"state_enabled"`
		MarkersMade   map[string]bool `json:"delete_markers_made"`
		IDs           map[string]string
		Walk2         [][]botoEntry `json:"walk2"`
		Walk1         [][]botoEntry `json:"walk1"`
		GetA1         botoRead      `json:"get_a1"`
		HeadA2        struct {
			Size      int64  `json:"size"`
			VersionID string `json:"version_id"`
		} `json:"head_a2"`
		GetA                botoRead                      `json:"get_a"`
		GetLatestMarker     *botoFailure                  `json:"get_latest_marker"`
		HeadLatestMarker    *botoFailure                  `json:"head_latest_marker"`
		GetMarkerByID       *botoFailure                  `json:"get_marker_by_id"`
		HeadMarkerByID      *botoFailure                  `json:"head_marker_by_id"`
		GetOtherKeysVersion *botoFailure                  `json:"get_other_keys_version"`
		GetMalformed        *botoFailure                  `json:"get_malformed_version"`
		TagsA1              botoTags                      `json:"tags_a1"`
		TagsCurrent         botoTags                      `json:"tags_current"`
		PutTagsCurrent      string                        `json:"put_tags_current_version"`
		DeleteTagsCurrent   string                        `json:"delete_tags_current_version"`
		TagsA1After         []struct{ Key, Value string } `json:"tags_a1_after"`
		AttributesA2        struct {
			VersionID string `json:"version_id"`
			Size      int64  `json:"size"`
		} `json:"attributes_a2"`
		DeleteObjects struct {
			Deleted []struct {
				Key, VersionId        string
				DeleteMarker          bool
				DeleteMarkerVersionId string
			} `json:"deleted"`
			Errors []struct{ Key, VersionId, Code, Message string } `json:"errors"`
		} `json:"delete_objects"`
		BAfter       botoRead      `json:"b_after_marker_removed"`
		WalkAfterDel [][]botoEntry `json:"walk_after_delete_objects"`
		PartCopySrc  string        `json:"part_copy_source_version"`
		MPVersion    string        `json:"mp_version"`
		MPGet        struct {
			Same      bool   `json:"same"`
			VersionID string `json:"version_id"`
		} `json:"mp_get"`
		MPPart2 struct {
			Body      string `json:"body"`
			Parts     int    `json:"parts"`
			VersionID string `json:"version_id"`
		} `json:"mp_part2"`
		CopyFromMarker     *botoFailure     `json:"copy_from_marker"`
		CopyFromDeletedKey *botoFailure     `json:"copy_from_deleted_key"`
		DeleteBucketFull   *botoFailure     `json:"delete_bucket_with_versions"`
		CountBeforeEmpty   int              `json:"count_before_empty"`
		EmptyDeleted       int              `json:"empty_deleted"`
		EmptyErrors        []map[string]any `json:"empty_errors"`
		WalkAfterEmpty     [][]botoEntry    `json:"walk_after_empty"`
		HeadDeletedBucket  *botoFailure     `json:"head_deleted_bucket"`
		Keep               struct {
			UnversionedPut  string `json:"unversioned_put"`
			EnabledPut      string `json:"enabled_put"`
			State           string `json:"state"`
			SuspendedPut    string `json:"suspended_put"`
			SuspendedDelete struct {
				Marker    bool   `json:"marker"`
				VersionID string `json:"version_id"`
			} `json:"suspended_delete"`
			SuspendedPut2 string        `json:"suspended_put2"`
			OldNull       botoRead      `json:"old_null"`
			Walk          [][]botoEntry `json:"walk"`
		} `json:"keep"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	wantFailure := func(what string, got *botoFailure, status int, code string) {
		t.Helper()
		if got == nil {
			t.Errorf("%s succeeded, want %d %s", what, status, code)
		} else if got.Status != status || got.Code != code {
			t.Errorf("%s: %d %s, want %d %s", what, got.Status, got.Code, status, code)
		}
	}
	wantMarkerHeaders := func(what string, got *botoFailure, id string) {
		t.Helper()
		if got != nil && (got.DeleteMarker != "true" || got.VersionID != id) {
			t.Errorf("%s: x-amz-delete-marker %q, x-amz-version-id %q; want true and %s", what, got.DeleteMarker, got.VersionID, id)
		}
	}

	if out.StateNew != "" || out.StateAfterMFA != "" || out.StateEnabled != "Enabled" {
		t.Errorf("versioning states: new %q, after the refused MFADelete %q, enabled %q", out.StateNew, out.StateAfterMFA, out.StateEnabled)
	}
	wantFailure("put_bucket_versioning with MFADelete Enabled", out.MFADelete, 501, "NotImplemented")
	id := out.IDs
	seen := map[string]string{}
	for _, name := range []string{"a1", "a2", "a3", "b1", "b2", "bm", "c1", "cm1", "c2"} {
		wantVersionID(t, name, id[name])
		if other, dup := seen[id[name]]; dup {
			t.Errorf("%s and %s have the same version ID %s", other, name, id[name])
		}
		seen[id[name]] = name
	}
	if !out.MarkersMade["bm"] || !out.MarkersMade["cm1"] {
		t.Errorf("delete_object responses without DeleteMarker: %v", out.MarkersMade)
	}

	entry := func(key, name string, latest, marker bool, body string) botoEntry {
		return botoEntry{Key: key, VersionID: id[name], Latest: latest, Marker: marker, Size: int64(len(body))}
	}
	all := []botoEntry{
		entry("a.txt", "a3", true, false, "a three"), entry("a.txt", "a2", false, false, "a two!"), entry("a.txt", "a1", false, false, "a one"),
		entry("c.txt", "c2", true, false, "c two"), entry("c.txt", "cm1", false, true, ""), entry("c.txt", "c1", false, false, "c one"),
		entry("dir/b.txt", "bm", true, true, ""), entry("dir/b.txt", "b2", false, false, "b two"), entry("dir/b.txt", "b1", false, false, "b one"),
	}
	if got := flattenPages(t, "walk of one entry a page", out.Walk1, 1); !slices.Equal(got, all) {
		t.Errorf("list_object_versions, MaxKeys 1:\n got %+v\nwant %+v", got, all)
	}
	if got := flattenPages(t, "walk of two entries a page", out.Walk2, 2); !slices.Equal(got, all) {
		t.Errorf("list_object_versions, MaxKeys 2:\n got %+v\nwant %+v", got, all)
	}
	if len(out.Walk1) != 9 || len(out.Walk2) != 5 {
		t.Errorf("%d pages of one and %d pages of two for 9 entries, want 9 and 5", len(out.Walk1), len(out.Walk2))
	}

	if out.GetA1 != (botoRead{"a one", id["a1"]}) || out.GetA != (botoRead{"a three", id["a3"]}) {
		t.Errorf("get_object of version a1 %+v, of the key %+v", out.GetA1, out.GetA)
	}
	if out.HeadA2.Size != 6 || out.HeadA2.VersionID != id["a2"] {
		t.Errorf("head_object of version a2: %+v", out.HeadA2)
	}
	wantFailure("get_object of a key whose latest is a delete marker", out.GetLatestMarker, 404, "NoSuchKey")
	wantMarkerHeaders("get_object of a key whose latest is a delete marker", out.GetLatestMarker, id["bm"])
	wantFailure("head_object of a key whose latest is a delete marker", out.HeadLatestMarker, 404, "404")
	wantMarkerHeaders("head_object of a key whose latest is a delete marker", out.HeadLatestMarker, id["bm"])
	wantFailure("get_object of a delete marker by VersionId", out.GetMarkerByID, 405, "MethodNotAllowed")
	wantMarkerHeaders("get_object of a delete marker by VersionId", out.GetMarkerByID, id["bm"])
	wantFailure("head_object of a delete marker by VersionId", out.HeadMarkerByID, 405, "405")
	wantMarkerHeaders("head_object of a delete marker by VersionId", out.HeadMarkerByID, id["bm"])
	wantFailure("get_object with another key's VersionId", out.GetOtherKeysVersion, 404, "NoSuchVersion")
	wantFailure("get_object with a malformed VersionId", out.GetMalformed, 400, "InvalidArgument")

	if out.TagsA1.VersionID != id["a1"] || len(out.TagsA1.Tags) != 1 || out.TagsA1.Tags[0].Value != "oldest" {
		t.Errorf("get_object_tagging of version a1: %+v", out.TagsA1)
	}
	if out.TagsCurrent.VersionID != id["a3"] || len(out.TagsCurrent.Tags) != 0 {
		t.Errorf("get_object_tagging of the current version: %+v (the tags of a1 must stay on a1)", out.TagsCurrent)
	}
	if out.PutTagsCurrent != id["a3"] {
		t.Errorf("put_object_tagging without VersionId: VersionId %q, want the current %s", out.PutTagsCurrent, id["a3"])
	}
	if out.DeleteTagsCurrent != id["a3"] {
		t.Errorf("delete_object_tagging without VersionId: VersionId %q, want the current %s", out.DeleteTagsCurrent, id["a3"])
	}
	if len(out.TagsA1After) != 1 || out.TagsA1After[0].Value != "oldest" {
		t.Errorf("tags of version a1 after the current version's were set and deleted: %+v", out.TagsA1After)
	}
	if out.AttributesA2.VersionID != id["a2"] || out.AttributesA2.Size != 6 {
		t.Errorf("get_object_attributes of version a2: %+v", out.AttributesA2)
	}

	// delete_objects: a version, a marker by its ID (the key comes back),
	// a key without a version (a new marker), a well-formed ID the key
	// does not have (deleted, as S3 answers) and a malformed ID (an
	// Error entry naming the key and the version, as S3's do).
	d := out.DeleteObjects
	if len(d.Errors) != 1 || len(d.Deleted) != 4 {
		t.Fatalf("delete_objects: %+v", d)
	}
	if e := d.Errors[0]; e.Key != "a.txt" || e.VersionId != "not-a-version" || e.Code == "" {
		t.Errorf("delete_objects Error of a malformed version ID: %+v, want Key a.txt and VersionId not-a-version", e)
	}
	cm2 := d.Deleted[2].DeleteMarkerVersionId
	wantVersionID(t, "delete_objects' new marker", cm2)
	type deletedEntry = struct {
		Key, VersionId        string
		DeleteMarker          bool
		DeleteMarkerVersionId string
	}
	for i, w := range []deletedEntry{
		{Key: "a.txt", VersionId: id["a2"]},
		{Key: "dir/b.txt", VersionId: id["bm"], DeleteMarker: true, DeleteMarkerVersionId: id["bm"]},
		{Key: "c.txt", DeleteMarker: true, DeleteMarkerVersionId: cm2},
		{Key: "a.txt", VersionId: id["b1"]},
	} {
		if d.Deleted[i] != w {
			t.Errorf("delete_objects Deleted[%d]: %+v, want %+v", i, d.Deleted[i], w)
		}
	}
	if out.BAfter != (botoRead{"b two", id["b2"]}) {
		t.Errorf("dir/b.txt after its marker was deleted: %+v", out.BAfter)
	}
	after := []botoEntry{
		entry("a.txt", "a3", true, false, "a three"), entry("a.txt", "a1", false, false, "a one"),
		{Key: "c.txt", VersionID: cm2, Latest: true, Marker: true}, entry("c.txt", "c2", false, false, "c two"),
		entry("c.txt", "cm1", false, true, ""), entry("c.txt", "c1", false, false, "c one"),
		entry("dir/b.txt", "b2", true, false, "b two"), entry("dir/b.txt", "b1", false, false, "b one"),
	}
	if got := flattenPages(t, "walk after delete_objects", out.WalkAfterDel, 1000); !slices.Equal(got, after) {
		t.Errorf("list_object_versions after delete_objects:\n got %+v\nwant %+v", got, after)
	}

	if out.PartCopySrc != id["a1"] {
		t.Errorf("upload_part_copy from version a1: CopySourceVersionId %q", out.PartCopySrc)
	}
	wantVersionID(t, "complete_multipart_upload", out.MPVersion)
	if !out.MPGet.Same || out.MPGet.VersionID != out.MPVersion {
		t.Errorf("get_object of the multipart object: %+v, want the parts and version %s", out.MPGet, out.MPVersion)
	}
	if out.MPPart2.Body != "a one" || out.MPPart2.Parts != 2 || out.MPPart2.VersionID != out.MPVersion {
		t.Errorf("get_object PartNumber 2 by VersionId: %+v", out.MPPart2)
	}
	wantFailure("copy_object naming a delete marker by VersionId", out.CopyFromMarker, 400, "InvalidRequest")
	wantFailure("copy_object from a key whose latest is a delete marker", out.CopyFromDeletedKey, 404, "NoSuchKey")
	wantFailure("delete_bucket with versions left", out.DeleteBucketFull, 409, "BucketNotEmpty")
	if out.CountBeforeEmpty != 9 || out.EmptyDeleted != 9 || len(out.EmptyErrors) != 0 {
		t.Errorf("object_versions.delete(): %d entries listed, %d deleted, errors %v; want 9, 9, none", out.CountBeforeEmpty, out.EmptyDeleted, out.EmptyErrors)
	}
	if got := flattenPages(t, "walk after emptying", out.WalkAfterEmpty, 1000); len(got) != 0 {
		t.Errorf("versions left after object_versions.delete(): %+v", got)
	}
	wantFailure("head_bucket of the deleted bucket", out.HeadDeletedBucket, 404, "404")

	k := out.Keep
	wantVersionID(t, "put_object on an enabled bucket", k.EnabledPut)
	if k.State != "Suspended" || k.SuspendedPut != "null" || k.SuspendedPut2 != "null" || !k.SuspendedDelete.Marker || k.SuspendedDelete.VersionID != "null" {
		t.Errorf("suspended bucket: %+v", k)
	}
	if k.UnversionedPut != "" {
		t.Errorf("put_object to a bucket never versioned: VersionId %q, want none", k.UnversionedPut)
	}
	if k.OldNull != (botoRead{"written before versioning", "null"}) {
		t.Errorf("get_object VersionId null of an object written before versioning: %+v", k.OldNull)
	}
	keep := []botoEntry{
		{Key: "old.txt", VersionID: k.EnabledPut, Latest: true, Size: int64(len("written with versioning"))},
		{Key: "old.txt", VersionID: "null", Size: int64(len("written before versioning"))},
		{Key: "sub/kept.txt", VersionID: "null", Latest: true, Size: 4},
		{Key: "sub/new.txt", VersionID: "null", Latest: true, Marker: true},
	}
	if got := flattenPages(t, "walk of the kept bucket", k.Walk, 1000); !slices.Equal(got, keep) {
		t.Errorf("list_object_versions of the kept bucket:\n got %+v\nwant %+v", got, keep)
	}

	want := versionsOf(t, s.client(t))
	if len(want) != 1 || len(want["boto-keep"]) != 4 {
		t.Fatalf("versions left: %v", want)
	}
	s.checkKernelVersions(t, want)
}

// readErr is the error of reading version id of key whole with minio-go.
func readErr(ctx context.Context, c *minio.Client, bucket, key, id string) error {
	o, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{VersionID: id})
	if err != nil {
		return err
	}
	defer o.Close()
	_, err = io.ReadAll(o)
	return err
}

// TestVersioningMinio drives bucket versioning through the real binary
// with minio-go: SetBucketVersioning and GetBucketVersioning
// (EnableVersioning, SuspendVersioning), PutObject's VersionID,
// ListObjects WithVersions (paged by key and version markers),
// StatObject and GetObject by VersionID, RemoveObject with a VersionID
// and RemoveObjects with version IDs.
//
// It also sends the requests of mc's versioning commands. mc is MinIO's
// AGPL client, not installed here (mcNotRun, readme_test.go); it is
// built on minio-go, so each command below is the sequence mc sends,
// made with the same minio-go calls:
//
//	mc version enable|suspend ALIAS/B   SetBucketVersioning (PUT ?versioning)
//	mc version info ALIAS/B             GetBucketVersioning (GET ?versioning)
//	mc ls --versions [-r] ALIAS/B       ListObjects WithVersions (ListObjectVersions, delimited unless -r)
//	mc cp --version-id V ALIAS/B/K DST  StatObject and GetObject with the VersionID to a file;
//	                                    CopyObject naming the version to another key of the alias
//	mc rm --versions --force -r ALIAS/B ListObjects WithVersions, then RemoveObjectsWithResult of
//	                                    every version and marker by ID (multi-object deletes)
//	mc undo ALIAS/B/K                   GetBucketVersioning (must be Enabled), the key's versions
//	                                    (ListObjectVersions with the key as prefix), then the newest
//	                                    removed by ID through RemoveObjectsWithResult: a delete
//	                                    marker (the delete is undone) or the last upload
//
// A second bucket keeps versions, and the volume is checked with
// xfs_repair and a kernel mount against every version.
func TestVersioningMinio(t *testing.T) {
	s := startServer(t, "1G")
	c := s.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const b = "mcver"
	for _, name := range []string{b, "mckeep"} {
		if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	state := func(bucket string) string {
		t.Helper()
		cfg, err := c.GetBucketVersioning(ctx, bucket)
		if err != nil {
			t.Fatalf("GetBucketVersioning %s: %v", bucket, err)
		}
		return cfg.Status
	}
	// mc version info ALIAS/mcver: un-versioned.
	if st := state(b); st != "" {
		t.Errorf("versioning of a new bucket: %q", st)
	}
	// mc version enable ALIAS/mcver
	if err := c.SetBucketVersioning(ctx, b, minio.BucketVersioningConfiguration{Status: minio.Enabled}); err != nil {
		t.Fatal(err)
	}
	// mc version info ALIAS/mcver
	if st := state(b); st != "Enabled" {
		t.Errorf("versioning after mc version enable: %q", st)
	}
	err := c.SetBucketVersioning(ctx, b, minio.BucketVersioningConfiguration{Status: minio.Enabled, MFADelete: "Enabled"})
	wantCode(t, err, "NotImplemented")

	photo := []string{"photo 1", "photo 2 (retouched)", "photo 3"}
	var pv []string
	for i, body := range photo {
		info := mustPut(t, ctx, c, b, "photo.jpg", []byte(body), minio.PutObjectOptions{})
		wantVersionID(t, fmt.Sprintf("PutObject %d", i+1), info.VersionID)
		pv = append(pv, info.VersionID)
	}
	n1 := mustPut(t, ctx, c, b, "notes/n1.txt", []byte("note one"), minio.PutObjectOptions{}).VersionID
	n2 := mustPut(t, ctx, c, b, "notes/n1.txt", []byte("note two"), minio.PutObjectOptions{}).VersionID
	if err := c.RemoveObject(ctx, b, "notes/n1.txt", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}

	// listed renders a ListObjects WithVersions walk.
	listed := func(opts minio.ListObjectsOptions) []string {
		t.Helper()
		opts.WithVersions = true
		var got []string
		for o := range c.ListObjects(ctx, b, opts) {
			if o.Err != nil {
				t.Fatalf("ListObjects WithVersions %+v: %v", opts, o.Err)
			}
			if o.VersionID == "" {
				got = append(got, "prefix "+o.Key)
				continue
			}
			got = append(got, verEntry{Key: o.Key, VersionID: o.VersionID, Latest: o.IsLatest, Marker: o.IsDeleteMarker}.String())
		}
		return got
	}
	ver := func(key, id string, latest, marker bool) string {
		return verEntry{Key: key, VersionID: id, Latest: latest, Marker: marker}.String()
	}
	all := listed(minio.ListObjectsOptions{Recursive: true})
	if len(all) != 6 {
		t.Fatalf("ListObjects WithVersions: %q", all)
	}
	m1 := strings.TrimSuffix(strings.TrimPrefix(all[0], "notes/n1.txt@"), "(marker)(latest)")
	wantVersionID(t, "delete marker", m1)
	want := []string{
		ver("notes/n1.txt", m1, true, true), ver("notes/n1.txt", n2, false, false), ver("notes/n1.txt", n1, false, false),
		ver("photo.jpg", pv[2], true, false), ver("photo.jpg", pv[1], false, false), ver("photo.jpg", pv[0], false, false),
	}
	if !slices.Equal(all, want) {
		t.Errorf("ListObjects WithVersions:\n got %q\nwant %q", all, want)
	}
	for _, n := range []int{1, 2, 4} {
		if got := listed(minio.ListObjectsOptions{Recursive: true, MaxKeys: n}); !slices.Equal(got, want) {
			t.Errorf("ListObjects WithVersions, MaxKeys %d:\n got %q\nwant %q", n, got, want)
		}
	}

	st, err := c.StatObject(ctx, b, "photo.jpg", minio.StatObjectOptions{VersionID: pv[0]})
	if err != nil || st.VersionID != pv[0] || st.Size != int64(len(photo[0])) {
		t.Errorf("StatObject VersionID of the oldest: %+v %v", st, err)
	}
	if got := mustGet(t, ctx, c, b, "photo.jpg", minio.GetObjectOptions{VersionID: pv[1]}); string(got) != photo[1] {
		t.Errorf("GetObject VersionID of the second: %q", got)
	}
	st, err = c.StatObject(ctx, b, "notes/n1.txt", minio.StatObjectOptions{})
	wantCode(t, err, "NoSuchKey")
	if !st.IsDeleteMarker || st.VersionID != m1 {
		t.Errorf("StatObject of a key whose latest is a delete marker: IsDeleteMarker %v, VersionID %q; want true, %s", st.IsDeleteMarker, st.VersionID, m1)
	}
	st, err = c.StatObject(ctx, b, "notes/n1.txt", minio.StatObjectOptions{VersionID: m1})
	wantCode(t, err, "MethodNotAllowed")
	if !st.IsDeleteMarker || st.VersionID != m1 {
		t.Errorf("StatObject of a delete marker by VersionID: IsDeleteMarker %v, VersionID %q", st.IsDeleteMarker, st.VersionID)
	}
	wantCode(t, readErr(ctx, c, b, "notes/n1.txt", m1), "MethodNotAllowed")
	// A well-formed ID that is no version of the key: 404 NoSuchVersion
	// (HEAD has no body, so minio-go sees only the status).
	_, err = c.StatObject(ctx, b, "photo.jpg", minio.StatObjectOptions{VersionID: n1})
	if minio.ToErrorResponse(err).StatusCode != 404 {
		t.Errorf("StatObject with another key's VersionID: %v, want 404", err)
	}
	wantCode(t, readErr(ctx, c, b, "photo.jpg", n1), "NoSuchVersion")

	// RemoveObject with a VersionID removes that version; again, it is
	// no error.
	for i := 0; i < 2; i++ {
		if err := c.RemoveObject(ctx, b, "photo.jpg", minio.RemoveObjectOptions{VersionID: pv[1]}); err != nil {
			t.Errorf("RemoveObject VersionID (%d): %v", i+1, err)
		}
	}
	wantCode(t, readErr(ctx, c, b, "photo.jpg", pv[1]), "NoSuchVersion")

	// RemoveObjects with version IDs: the marker and the oldest version
	// of notes/n1.txt; the key is back at its second version.
	objs := make(chan minio.ObjectInfo, 2)
	objs <- minio.ObjectInfo{Key: "notes/n1.txt", VersionID: m1}
	objs <- minio.ObjectInfo{Key: "notes/n1.txt", VersionID: n1}
	close(objs)
	for e := range c.RemoveObjects(ctx, b, objs, minio.RemoveObjectsOptions{}) {
		t.Errorf("RemoveObjects %s@%s: %v", e.ObjectName, e.VersionID, e.Err)
	}
	if got := mustGet(t, ctx, c, b, "notes/n1.txt", minio.GetObjectOptions{}); string(got) != "note two" {
		t.Errorf("notes/n1.txt after RemoveObjects of its marker: %q", got)
	}
	want = []string{ver("notes/n1.txt", n2, true, false), ver("photo.jpg", pv[2], true, false), ver("photo.jpg", pv[0], false, false)}
	if got := listed(minio.ListObjectsOptions{Recursive: true}); !slices.Equal(got, want) {
		t.Errorf("versions after RemoveObject and RemoveObjects:\n got %q\nwant %q", got, want)
	}

	// mc cp --version-id P1 ALIAS/mcver/photo.jpg ./photo.jpg
	st, err = c.StatObject(ctx, b, "photo.jpg", minio.StatObjectOptions{VersionID: pv[0]})
	if err != nil || st.VersionID != pv[0] {
		t.Errorf("mc cp --version-id, stat: %+v %v", st, err)
	}
	if got := mustGet(t, ctx, c, b, "photo.jpg", minio.GetObjectOptions{VersionID: pv[0]}); string(got) != photo[0] {
		t.Errorf("mc cp --version-id, get: %q", got)
	}
	// mc cp --version-id P1 ALIAS/mcver/photo.jpg ALIAS/mcver/photo-restored.jpg
	cp, err := c.CopyObject(ctx, minio.CopyDestOptions{Bucket: b, Object: "photo-restored.jpg"},
		minio.CopySrcOptions{Bucket: b, Object: "photo.jpg", VersionID: pv[0]})
	if err != nil {
		t.Fatal(err)
	}
	wantVersionID(t, "CopyObject of a version", cp.VersionID)
	if got := mustGet(t, ctx, c, b, "photo-restored.jpg", minio.GetObjectOptions{}); string(got) != photo[0] {
		t.Errorf("copy of version %s reads %q", pv[0], got)
	}

	// mcUndo sends what mc undo ALIAS/mcver/KEY sends.
	mcUndo := func(key string) minio.RemoveObjectResult {
		t.Helper()
		if st := state(b); st != "Enabled" {
			t.Fatalf("mc undo: bucket versioning %q", st)
		}
		var newest *minio.ObjectInfo
		for o := range c.ListObjects(ctx, b, minio.ListObjectsOptions{Prefix: key, WithVersions: true}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			if o.Key != key {
				break
			}
			if newest == nil || o.LastModified.After(newest.LastModified) {
				newest = &o
			}
		}
		if newest == nil {
			t.Fatalf("mc undo: no version of %s", key)
		}
		if !newest.IsLatest {
			t.Errorf("mc undo: the newest version of %s, %s, is not the latest", key, newest.VersionID)
		}
		one := make(chan minio.ObjectInfo, 1)
		one <- minio.ObjectInfo{Key: key, VersionID: newest.VersionID}
		close(one)
		var res []minio.RemoveObjectResult
		for r := range c.RemoveObjectsWithResult(ctx, b, one, minio.RemoveObjectsOptions{}) {
			res = append(res, r)
		}
		if len(res) != 1 || res[0].Err != nil || res[0].ObjectName != key || res[0].ObjectVersionID != newest.VersionID {
			t.Fatalf("mc undo %s: removing %s gave %+v", key, newest.VersionID, res)
		}
		return res[0]
	}
	// The last change of photo.jpg is the upload of P3: undone, P1 is
	// current.
	if r := mcUndo("photo.jpg"); r.DeleteMarker || r.ObjectVersionID != pv[2] {
		t.Errorf("mc undo of an upload: %+v", r)
	}
	st, err = c.StatObject(ctx, b, "photo.jpg", minio.StatObjectOptions{})
	if err != nil || st.VersionID != pv[0] || st.Size != int64(len(photo[0])) {
		t.Errorf("photo.jpg after mc undo: %+v %v, want version %s", st, err, pv[0])
	}
	// mc rm ALIAS/mcver/notes/n1.txt, then mc undo: the marker goes.
	if err := c.RemoveObject(ctx, b, "notes/n1.txt", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := mcUndo("notes/n1.txt"); !r.DeleteMarker || r.DeleteMarkerVersionID != r.ObjectVersionID {
		t.Errorf("mc undo of a delete: %+v, want the delete marker removed", r)
	}
	if got := mustGet(t, ctx, c, b, "notes/n1.txt", minio.GetObjectOptions{}); string(got) != "note two" {
		t.Errorf("notes/n1.txt after mc undo of its delete: %q", got)
	}

	// mc ls --versions ALIAS/mcver: one level.
	want = []string{ver("photo-restored.jpg", cp.VersionID, true, false), ver("photo.jpg", pv[0], true, false), "prefix notes/"}
	if got := listed(minio.ListObjectsOptions{}); !slices.Equal(got, want) {
		t.Errorf("mc ls --versions:\n got %q\nwant %q", got, want)
	}
	// mc ls --versions --recursive ALIAS/mcver
	want = []string{ver("notes/n1.txt", n2, true, false), ver("photo-restored.jpg", cp.VersionID, true, false), ver("photo.jpg", pv[0], true, false)}
	if got := listed(minio.ListObjectsOptions{Recursive: true}); !slices.Equal(got, want) {
		t.Errorf("mc ls --versions --recursive:\n got %q\nwant %q", got, want)
	}

	// A browser form upload (a presigned POST) to a versioned bucket
	// answers with the version it made.
	policy := minio.NewPostPolicy()
	for _, err := range []error{policy.SetBucket(b), policy.SetKey("form.txt"), policy.SetExpires(time.Now().UTC().Add(time.Minute))} {
		if err != nil {
			t.Fatal(err)
		}
	}
	u, form, err := c.PresignedPostPolicy(ctx, policy)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range form {
		mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("file", "form.txt")
	fw.Write([]byte("posted"))
	mw.Close()
	resp, err := http.Post(u.String(), mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	fv := resp.Header.Get("X-Amz-Version-Id")
	wantVersionID(t, "POST form upload", fv)
	if st, err := c.StatObject(ctx, b, "form.txt", minio.StatObjectOptions{}); resp.StatusCode != http.StatusNoContent || err != nil || st.VersionID != fv {
		t.Errorf("POST form upload: %s; the object's version %q (%v), the answer's %q", resp.Status, st.VersionID, err, fv)
	}

	// mc version suspend ALIAS/mcver; mc version info ALIAS/mcver
	if err := c.SetBucketVersioning(ctx, b, minio.BucketVersioningConfiguration{Status: minio.Suspended}); err != nil {
		t.Fatal(err)
	}
	if st := state(b); st != "Suspended" {
		t.Errorf("versioning after mc version suspend: %q", st)
	}
	if info := mustPut(t, ctx, c, b, "photo.jpg", []byte("photo 4"), minio.PutObjectOptions{}); info.VersionID != "null" {
		t.Errorf("PutObject on a suspended bucket: VersionID %q, want null", info.VersionID)
	}
	if err := c.RemoveObject(ctx, b, "photo-restored.jpg", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, c.RemoveBucket(ctx, b), "BucketNotEmpty")

	// mc rm --versions --force --recursive ALIAS/mcver
	every := bucketVersions(t, c, b)
	if len(every) != 6 {
		t.Errorf("versions before mc rm --versions: %v", every)
	}
	toRemove := make(chan minio.ObjectInfo, len(every))
	for _, v := range every {
		toRemove <- minio.ObjectInfo{Key: v.Key, VersionID: v.VersionID}
	}
	close(toRemove)
	removed := 0
	for r := range c.RemoveObjectsWithResult(ctx, b, toRemove, minio.RemoveObjectsOptions{}) {
		removed++
		if r.Err != nil {
			t.Errorf("mc rm --versions: %s@%s: %v", r.ObjectName, r.ObjectVersionID, r.Err)
		}
	}
	if removed != len(every) {
		t.Errorf("mc rm --versions: %d results for %d versions", removed, len(every))
	}
	if left := bucketVersions(t, c, b); len(left) != 0 {
		t.Errorf("versions left after mc rm --versions --force --recursive: %v", left)
	}
	// mc rb ALIAS/mcver
	if err := c.RemoveBucket(ctx, b); err != nil {
		t.Errorf("RemoveBucket of the emptied bucket: %v", err)
	}

	// The bucket that keeps its versions, with the minio-go helpers.
	if err := c.EnableVersioning(ctx, "mckeep"); err != nil {
		t.Fatal(err)
	}
	mustPut(t, ctx, c, "mckeep", "k.txt", []byte("k one"), minio.PutObjectOptions{})
	mustPut(t, ctx, c, "mckeep", "k.txt", []byte("k two"), minio.PutObjectOptions{})
	if err := c.RemoveObject(ctx, "mckeep", "k.txt", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	deep := mustPut(t, ctx, c, "mckeep", "dir/deep/x.txt", []byte("x versioned"), minio.PutObjectOptions{}).VersionID
	if err := c.SuspendVersioning(ctx, "mckeep"); err != nil {
		t.Fatal(err)
	}
	if cfg, err := c.GetBucketVersioning(ctx, "mckeep"); err != nil || !cfg.Suspended() {
		t.Errorf("GetBucketVersioning after SuspendVersioning: %+v %v", cfg, err)
	}
	mustPut(t, ctx, c, "mckeep", "dir/deep/x.txt", []byte("x null"), minio.PutObjectOptions{})
	kept := versionsOf(t, c)
	if len(kept) != 1 || len(kept["mckeep"]) != 5 {
		t.Fatalf("versions left: %v", kept)
	}
	if v := kept["mckeep"][1]; v.Key != "dir/deep/x.txt" || v.VersionID != deep || v.Latest {
		t.Errorf("the versioned x.txt after a suspended put: %v", v)
	}
	s.checkKernelVersions(t, kept)
}
