package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestKernelSeesObjects runs a workload, closes the volume and checks it
// with xfs_repair -n and a read-only kernel mount: every object is a file
// with the same bytes and its metadata in user xattrs, every folder marker
// a marked directory, and nothing else is there.
func TestKernelSeesObjects(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	s, img := newTestStore(t)
	type obj struct {
		body   string
		attrs  map[string]string
		folder bool
	}
	want := map[string]obj{} // bucket/key
	rng := rand.New(rand.NewSource(7))
	for _, b := range []string{"alpha", "beta.example", "g-1"} {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateBucket("gone"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		b := []string{"alpha", "beta.example", "g-1"}[rng.Intn(3)]
		key := fmt.Sprintf("d%d/é%d/f%d.txt", rng.Intn(4), rng.Intn(3), rng.Intn(20))
		if rng.Intn(10) == 0 {
			key = fmt.Sprintf("d%d/", rng.Intn(4))
		}
		if rng.Intn(5) == 0 {
			s.DeleteObject(b, key)
			delete(want, b+"/"+key)
			continue
		}
		m := Meta{ContentType: "text/plain", User: map[string]string{"i": fmt.Sprint(i)}}
		if rng.Intn(3) == 0 {
			m.CacheControl = "max-age=60"
		}
		body := ""
		if !strings.HasSuffix(key, "/") {
			body = strings.Repeat(key, rng.Intn(5000))
		}
		info, err := s.PutObject(b, key, strings.NewReader(body), int64(len(body)), m)
		if err != nil {
			t.Fatal(err)
		}
		attrs := m.xattrs(info.ETag)
		o := obj{body: body, attrs: attrs, folder: strings.HasSuffix(key, "/")}
		want[b+"/"+key] = o
	}
	big := strings.Repeat("0123456789abcdef", 3*chunkSize/16+1234) // several chunks
	info, err := s.PutObject("alpha", "big/object.bin", strings.NewReader(big), -1, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	want["alpha/big/object.bin"] = obj{body: big, attrs: map[string]string{xattrETag: info.ETag}}
	if err := s.DeleteBucket("gone"); err != nil {
		t.Fatal(err)
	}
	_, snap := closeAndSnapshot(t, s, img)
	seen := 0
	for _, e := range snap {
		if e.Path == "." || e.Path == SysDir || strings.HasPrefix(e.Path, SysDir+"/"+tmpDir) || e.Path == SysDir+"/"+uploadsDir {
			continue
		}
		if e.Type == oracle.TypeDir {
			o, ok := want[e.Path+"/"]
			if !ok {
				if len(e.Xattrs) != 0 {
					t.Errorf("%s: a plain directory with xattrs %v", e.Path, e.Xattrs)
				}
				if strings.Count(e.Path, "/") > 0 && !hasChild(snap, e.Path) {
					t.Errorf("%s: empty directory left behind", e.Path)
				}
				continue
			}
			seen++
			if e.Xattrs[xattrFolder] == "" {
				t.Errorf("%s: folder marker without %s", e.Path, xattrFolder)
			}
			for k, v := range o.attrs {
				if e.Xattrs[k] != v {
					t.Errorf("%s: xattr %s = %q, want %q", e.Path, k, e.Xattrs[k], v)
				}
			}
			continue
		}
		o, ok := want[e.Path]
		if !ok || e.Type != oracle.TypeFile {
			t.Errorf("%s: unexpected %s", e.Path, e.Type)
			continue
		}
		seen++
		sum := sha256.Sum256([]byte(o.body))
		if e.Size != int64(len(o.body)) || e.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: kernel sees %d bytes (sha256 %s), want %d", e.Path, e.Size, e.SHA256, len(o.body))
		}
		if len(e.Xattrs) != len(o.attrs) {
			t.Errorf("%s: xattrs %v, want %v", e.Path, e.Xattrs, o.attrs)
		}
		for k, v := range o.attrs {
			if e.Xattrs[k] != v {
				t.Errorf("%s: xattr %s = %q, want %q", e.Path, k, e.Xattrs[k], v)
			}
		}
	}
	t.Logf("%d objects checked on the kernel mount", seen)
	if seen != len(want) {
		t.Errorf("kernel shows %d objects, want %d", seen, len(want))
	}
	if _, ok := snap.Lookup("gone"); ok {
		t.Error("deleted bucket still there")
	}
}

// hasChild reports whether snap holds a path below dir.
func hasChild(snap oracle.Snapshot, dir string) bool {
	for _, e := range snap {
		if strings.HasPrefix(e.Path, dir+"/") {
			return true
		}
	}
	return false
}

// closeAndSnapshot closes the store, checks its volume with xfs_repair
// and snapshots a read-only kernel mount of it (mnt, unmounted when the
// test ends).
func closeAndSnapshot(t *testing.T, s *Store, img string) (mnt string, snap oracle.Snapshot) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	mnt = oracle.Mount(t, img, true)
	snap, err := oracle.SnapshotDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	return mnt, snap
}
