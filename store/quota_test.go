package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// bucketBlocks walks a bucket's tree (and the uploads charged to it) and
// returns the blocks and inodes its project should be charged: the
// engine's counts must equal this sum at every quiet moment.
func bucketBlocks(t *testing.T, s *Store, dir format.Ino, project uint32) (blocks, inodes int64) {
	t.Helper()
	st, err := s.v.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.ProjID != project {
		t.Fatalf("inode %d has project %d, want %d", dir, st.ProjID, project)
	}
	blocks, inodes = int64(st.Blocks), 1
	ents, err := s.v.Names().ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Type == format.FTDir {
			b, i := bucketBlocks(t, s, e.Ino, project)
			blocks, inodes = blocks+b, inodes+i
			continue
		}
		st, err := s.v.Stat(e.Ino)
		if err != nil {
			t.Fatal(err)
		}
		if st.ProjID != project {
			t.Fatalf("inode %d has project %d, want %d", e.Ino, st.ProjID, project)
		}
		blocks, inodes = blocks+int64(st.Blocks), inodes+1
	}
	return blocks, inodes
}

// checkUsage requires every bucket's charged usage to equal what its tree
// holds (uploads in progress included) and to respect its hard limits.
func checkUsage(t *testing.T, s *Store) {
	t.Helper()
	us, err := s.quotas().List()
	if err != nil {
		t.Fatal(err)
	}
	bs := int64(s.v.Geometry().BlockSize)
	for _, u := range us {
		ino := s.mustBucket(t, u.Bucket)
		blocks, inodes := bucketBlocks(t, s, ino, u.Project)
		s.upMu.Lock()
		var ups []*upload
		for _, up := range s.uploads {
			if up.info.Bucket == u.Bucket {
				ups = append(ups, up)
			}
		}
		s.upMu.Unlock()
		for _, up := range ups {
			b, i := bucketBlocks(t, s, up.dir, u.Project)
			blocks, inodes = blocks+b, inodes+i
		}
		if int64(u.Bytes) != blocks*bs || int64(u.Objects) != inodes {
			t.Errorf("bucket %s: charged %d bytes and %d inodes, its tree holds %d and %d",
				u.Bucket, u.Bytes, u.Objects, blocks*bs, inodes)
		}
		if u.Quota.HardBytes != 0 && u.Bytes > u.Quota.HardBytes {
			t.Errorf("bucket %s: %d bytes in use passed the hard limit %d", u.Bucket, u.Bytes, u.Quota.HardBytes)
		}
		if u.Quota.HardObjects != 0 && u.Objects > u.Quota.HardObjects {
			t.Errorf("bucket %s: %d inodes in use passed the hard limit %d", u.Bucket, u.Objects, u.Quota.HardObjects)
		}
	}
}

// TestQuotaStress: clients PUT, copy, upload in parts and DELETE in
// several buckets with small limits, in each gc mode. A refused write
// fails with ErrQuotaExceeded and leaves nothing; usage never passes a
// hard limit; when the clients stop, each bucket's usage equals the
// blocks and inodes of its tree, and xfs_repair -n agrees with every
// count after the store closes and after a reopen.
func TestQuotaStress(t *testing.T) {
	for _, mode := range []gc.Mode{gc.PerCPU, gc.Sync, gc.Sweep} {
		t.Run(string(mode), func(t *testing.T) { quotaStress(t, mode) })
	}
}

func quotaStress(t *testing.T, mode gc.Mode) {
	oracle.Require(t, oracle.ToolRepair)
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	s, err := OpenWith(img, Options{GC: gc.Options{Mode: mode}})
	if err != nil {
		t.Fatal(err)
	}
	s.minPart = 1
	buckets := []string{"qaa", "qbb", "qcc", "free"}
	limits := map[string]BucketQuota{
		"qaa": {HardBytes: 1 << 20},
		"qbb": {HardBytes: 512 << 10, HardObjects: 40},
		"qcc": {HardBytes: 2 << 20, SoftBytes: 1 << 20},
	}
	for _, b := range buckets {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
		if q, ok := limits[b]; ok {
			if err := s.quotas().Set(b, q); err != nil {
				t.Fatal(err)
			}
		}
	}
	ops := 300
	if testing.Short() {
		ops = 80
	}
	var wg sync.WaitGroup
	var refused, done sync.Map
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < ops; i++ {
				b := buckets[rng.Intn(len(buckets))]
				key := fmt.Sprintf("w%d/k%d", w, rng.Intn(12))
				size := rng.Intn(200 << 10)
				body := bytes.Repeat([]byte{byte(w)}, size)
				var err error
				switch k := rng.Intn(10); {
				case k < 5:
					_, err = s.PutObject(b, key, bytes.NewReader(body), int64(size), Meta{})
				case k < 6:
					src := b
					b = buckets[rng.Intn(len(buckets))] // the bucket written
					_, err = s.CopyObject(src, key, b, key+"c", nil)
					if errors.Is(err, ErrNoSuchKey) {
						err = nil
					}
				case k < 7:
					err = multipartPut(s, b, key, body)
				default:
					err = s.DeleteObject(b, key)
				}
				switch {
				case err == nil:
					done.Store(b, true)
				case errors.Is(err, ErrQuotaExceeded):
					refused.Store(b, true)
				default:
					t.Errorf("bucket %s key %s: %v", b, key, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if _, ok := refused.Load("qaa"); !ok {
		t.Errorf("no write into qa was refused: the test does not reach the limit")
	}
	if _, ok := refused.Load("free"); ok {
		t.Errorf("a write into the bucket with no limit was refused")
	}
	checkUsage(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	s, err = Open(img)
	if err != nil {
		t.Fatal(err)
	}
	checkUsage(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// multipartPut uploads body in up to three parts and completes it.
func multipartPut(s *Store, bucket, key string, body []byte) error {
	up, err := s.multipart().Create(bucket, key, Meta{})
	if err != nil {
		return err
	}
	var parts []CompletePart
	for n, off := 1, 0; off < len(body) || n == 1; n++ {
		end := min(len(body), off+len(body)/3+1)
		p, err := s.multipart().UploadPart(bucket, key, up.UploadID, n, bytes.NewReader(body[off:end]), int64(end-off), Checksums{})
		if err != nil {
			s.multipart().Abort(bucket, key, up.UploadID)
			return err
		}
		parts = append(parts, CompletePart{PartNumber: n, ETag: p.ETag})
		off = end
	}
	if _, err := s.multipart().Complete(bucket, key, up.UploadID, parts); err != nil {
		s.multipart().Abort(bucket, key, up.UploadID)
		return err
	}
	return nil
}

// TestQuotaRefusalLeavesNothing: a PUT over the hard limit fails at once
// when its size is declared, and after writing what fits when it is not
// (size -1); either way the old object stays, nothing new is stored and
// usage is back where it was. Deleting makes room at once.
func TestQuotaRefusalLeavesNothing(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	if err := s.quotas().Set("bkt", BucketQuota{HardBytes: 256 << 10}); err != nil {
		t.Fatal(err)
	}
	put(t, s, "bkt", "keep", string(bytes.Repeat([]byte("k"), 100<<10)), Meta{})
	before, err := s.quotas().Get("bkt")
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 200<<10)
	for _, size := range []int64{int64(len(big)), -1} {
		_, err := s.PutObject("bkt", "keep", bytes.NewReader(big), size, Meta{})
		if !errors.Is(err, ErrQuotaExceeded) {
			t.Fatalf("size %d: PUT over the limit: %v", size, err)
		}
		got, _ := get(t, s, "bkt", "keep")
		if len(got) != 100<<10 {
			t.Fatalf("size %d: the old object changed to %d bytes", size, len(got))
		}
		after, _ := s.quotas().Get("bkt")
		if after.Bytes != before.Bytes || after.Objects != before.Objects {
			t.Fatalf("size %d: usage %d/%d after the refused PUT, %d/%d before", size, after.Bytes, after.Objects, before.Bytes, before.Objects)
		}
	}
	if err := s.DeleteObject("bkt", "keep"); err != nil {
		t.Fatal(err)
	}
	put(t, s, "bkt", "new", string(big), Meta{})
	if err := s.quotas().Set("bkt", BucketQuota{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.quotas().Get("bkt"); !errors.Is(err, ErrNoQuota) {
		t.Fatalf("after clearing: %v, want ErrNoQuota", err)
	}
	put(t, s, "bkt", "more", string(big), Meta{})
}

// TestQuotaKernelVolume: a volume made by mkfs.xfs and written by the
// kernel (no project IDs, no quota inode: a volume from before quotas)
// gains them at open: every bucket gets its own project with its whole
// tree, the counts are exact, and xfs_repair checks them. The kernel then
// mounts it (without quota support) and still sees every object.
func TestQuotaKernelVolume(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "kernel.xfs")
	oracle.Mkfs(t, img, 128<<20)
	mnt := oracle.Mount(t, img, false)
	want := map[string][]byte{}
	for _, b := range []string{"one", "two"} {
		for i := 0; i < 5; i++ {
			key := "d/" + strconv.Itoa(i)
			body := bytes.Repeat([]byte("v"), i*5000)
			p := filepath.Join(mnt, b, filepath.FromSlash(key))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, body, 0o644); err != nil {
				t.Fatal(err)
			}
			want[b+"/"+key] = body
		}
	}
	oracle.Unmount(t, mnt)
	s, err := Open(img)
	if err != nil {
		t.Fatal(err)
	}
	us, err := s.quotas().List()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]bool{}
	for _, u := range us {
		if u.Project == 0 || seen[u.Project] {
			t.Errorf("bucket %s has project %d, not its own", u.Bucket, u.Project)
		}
		seen[u.Project] = true
	}
	if len(us) != 2 {
		t.Fatalf("%d buckets, want 2", len(us))
	}
	checkUsage(t, s)
	if err := s.CreateBucket("three"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	mnt = oracle.Mount(t, img, true)
	for k, body := range want {
		got, err := os.ReadFile(filepath.Join(mnt, filepath.FromSlash(k)))
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("kernel reads %s: %d bytes, %v", k, len(got), err)
		}
	}
}

// TestQuotaBucketIDsNotReused: a deleted bucket's limits never pass to a
// new bucket, even after a restart.
func TestQuotaBucketIDsNotReused(t *testing.T) {
	s, img := newTestStore(t)
	for _, b := range []string{"first", "second"} {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.quotas().Set("second", BucketQuota{HardBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket("second"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateBucket("third"); err != nil {
		t.Fatal(err)
	}
	if u, err := s.quotas().Get("third"); !errors.Is(err, ErrNoQuota) {
		t.Fatalf("new bucket has quota %+v (%v)", u.Quota, err)
	}
}

// TestQuotaRefusalVersioned: in a versioned bucket, a write or a delete
// marker that the bucket's quota refuses (every version counts) leaves the
// key's versions as they were: a small overwrite over the byte limit, and
// a marker over the inode limit (the marker and, for a key without
// versions yet, its versions directory are made in the refused Apply).
func TestQuotaRefusalVersioned(t *testing.T) {
	s, _ := newVersionedStore(t, "bkt")
	body := bytes.Repeat([]byte("v"), 100<<10)
	first := put(t, s, "bkt", "d/k", string(body), Meta{})
	second := put(t, s, "bkt", "d/k", string(body), Meta{})
	usage, err := s.quotas().Get("bkt")
	if !errors.Is(err, ErrNoQuota) {
		t.Fatalf("before a quota: %v", err)
	}
	if err := s.quotas().Set("bkt", BucketQuota{HardBytes: 256 << 10}); err != nil {
		t.Fatal(err)
	}
	versions := func() []string {
		t.Helper()
		res, err := s.Versions().List("bkt", VersionListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, v := range res.Versions {
			ids = append(ids, fmt.Sprint(v.VersionID, v.IsLatest, v.DeleteMarker))
		}
		return ids
	}
	before := versions()
	if _, err := s.PutObject("bkt", "d/k", bytes.NewReader(body), int64(len(body)), Meta{}); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("a third version over the byte limit: %v", err)
	}
	if got := versions(); !slices.Equal(got, before) {
		t.Fatalf("versions after the refused PUT: %v, were %v", got, before)
	}
	if _, info := get(t, s, "bkt", "d/k"); info.VersionID != second.VersionID {
		t.Fatalf("current version %s after the refused PUT, want %s", info.VersionID, second.VersionID)
	}

	// Markers at the inode limit. A key with versions needs a marker
	// file and is refused. One without takes its first marker in file
	// form, which makes no inode; its second marker needs the key's
	// directory (made whatever the limit: it changes no version) and a
	// marker file, and is refused.
	other := put(t, s, "bkt", "d/other", "x", Meta{})
	usage, err = s.quotas().Get("bkt")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.quotas().Set("bkt", BucketQuota{HardObjects: usage.Objects}); err != nil {
		t.Fatal(err)
	}
	refused := func(key string) {
		t.Helper()
		before := versions()
		if _, err := s.Versions().Delete("bkt", key, ""); !errors.Is(err, ErrQuotaExceeded) {
			t.Fatalf("a marker of %s over the inode limit: %v", key, err)
		}
		if got := versions(); !slices.Equal(got, before) {
			t.Fatalf("versions after the refused marker of %s: %v, were %v", key, got, before)
		}
	}
	refused("d/k")
	if _, err := s.Versions().Delete("bkt", "d/other", ""); err != nil {
		t.Fatalf("the first marker of d/other at the inode limit: %v", err)
	}
	refused("d/other")
	// Removing the hidden version by ID frees, also from file form.
	if _, err := s.Versions().Delete("bkt", "d/other", other.VersionID); err != nil {
		t.Fatalf("removing d/other's version at the inode limit: %v", err)
	}
	if got, _ := get(t, s, "bkt", "d/k"); got != string(body) {
		t.Fatalf("d/k reads %d bytes after the refused marker", len(got))
	}
	// The first version is still there to fall back to.
	if _, err := s.Versions().Delete("bkt", "d/k", second.VersionID); err != nil {
		t.Fatal(err)
	}
	if _, info := get(t, s, "bkt", "d/k"); info.VersionID != first.VersionID {
		t.Fatalf("current version %s, want %s", info.VersionID, first.VersionID)
	}
}
