package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestKernelSeesMultipart completes uploads by extent moves and copies,
// leaves one upload in progress and aborts another, then checks the
// volume with xfs_repair -n and a read-only kernel mount: the objects'
// bytes and xattrs (ETag, tagging, metadata), the pending upload's
// directory and parts, nothing in .xfs3/tmp.
func TestKernelSeesMultipart(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	s, img := newTestStore(t)
	s.minPart = 64 << 10
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(5))
	aligned := randomBytes(rng, 256<<10)
	odd := randomBytes(rng, 64<<10+1)
	tail := randomBytes(rng, 777)
	type object struct {
		body  []byte
		etag  string
		attrs map[string]string
	}
	want := map[string]object{}
	for key, parts := range map[string][][]byte{
		"moved/all":   {aligned, aligned, tail},
		"copied/tail": {aligned, odd, aligned, tail},
	} {
		meta := Meta{ContentType: "application/octet-stream", User: map[string]string{"from": "parts"}, Tags: []Tag{{"b", "2"}, {"a", "1"}}}
		up, list := uploadParts(t, s, "bkt", key, meta, parts...)
		info, err := s.multipart().Complete("bkt", key, up.UploadID, list)
		if err != nil {
			t.Fatal(err)
		}
		want["bkt/"+key] = object{body: bytes.Join(parts, nil), etag: info.ETag, attrs: map[string]string{
			xattrETag: info.ETag, xattrTagging: "a=1&b=2", xattrPrefix + "content-type": "application/octet-stream", xattrMetaPrefix + "from": "parts"}}
	}
	pending, _ := uploadParts(t, s, "bkt", "pending", Meta{Tags: []Tag{{"p", "1"}}}, aligned, tail)
	aborted, _ := uploadParts(t, s, "bkt", "aborted", Meta{}, odd)
	if err := s.multipart().Abort("bkt", "aborted", aborted.UploadID); err != nil {
		t.Fatal(err)
	}
	mnt, snap := closeAndSnapshot(t, s, img)
	for path, o := range want {
		e, ok := snap.Lookup(path)
		sum := sha256.Sum256(o.body)
		if !ok || e.Type != oracle.TypeFile || e.Size != int64(len(o.body)) || e.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: kernel shows %+v, want %d bytes", path, e, len(o.body))
			continue
		}
		if !strings.HasSuffix(o.etag, "-3") && !strings.HasSuffix(o.etag, "-4") {
			t.Errorf("%s: ETag %s", path, o.etag)
		}
		for k, v := range o.attrs {
			if e.Xattrs[k] != v {
				t.Errorf("%s: xattr %s = %q, want %q", path, k, e.Xattrs[k], v)
			}
		}
	}
	staged, err := os.ReadDir(filepath.Join(mnt, SysDir, tmpDir))
	if err != nil || len(staged) != stagingDirs {
		t.Errorf(".xfs3/tmp holds %d entries (%v), want its %d staging directories", len(staged), err, stagingDirs)
	}
	for _, d := range staged {
		if ents, err := os.ReadDir(filepath.Join(mnt, SysDir, tmpDir, d.Name())); err != nil || len(ents) != 0 {
			t.Errorf(".xfs3/tmp/%s holds %d entries (%v)", d.Name(), len(ents), err)
		}
	}
	ups, err := os.ReadDir(filepath.Join(mnt, SysDir, uploadsDir))
	if err != nil || len(ups) != 1 || ups[0].Name() != pending.UploadID {
		t.Fatalf("uploads directory: %v, %v; want only %s", ups, err, pending.UploadID)
	}
	dir := SysDir + "/" + uploadsDir + "/" + pending.UploadID
	e, _ := snap.Lookup(dir)
	if e.Xattrs[xattrUploadBucket] != "bkt" || e.Xattrs[xattrUploadKey] != "pending" || e.Xattrs[xattrTagging] != "p=1" {
		t.Errorf("pending upload's xattrs %v", e.Xattrs)
	}
	for i, body := range [][]byte{aligned, tail} {
		p, ok := snap.Lookup(dir + "/" + partName(i+1))
		sum := sha256.Sum256(body)
		if !ok || p.SHA256 != hex.EncodeToString(sum[:]) || p.Xattrs[xattrETag] == "" {
			t.Errorf("pending part %d: %+v", i+1, p)
		}
	}
}
