package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestSystemFiles: files read back as written, are replaced whole by a
// Write of any size up to the limit (created with their data, or written
// after, beyond xfs.MaxCreateData), go with Delete (also of none); bad
// names, oversized content and missing files give their errors. Nothing
// is left in the staging directories, and the files are charged to no
// bucket.
func TestSystemFiles(t *testing.T) {
	s, _ := newTestStore(t)
	f := s.SystemFiles()
	if _, err := f.Read("iam.json"); !errors.Is(err, ErrNoSuchSystemFile) {
		t.Errorf("Read before any Write: %v", err)
	}
	if err := f.Delete("iam.json"); err != nil {
		t.Errorf("Delete before any Write: %v", err)
	}
	readIs := func(name string, want []byte) {
		t.Helper()
		got, err := f.Read(name)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Read %s: %d bytes (%v), want %d", name, len(got), err, len(want))
		}
	}
	rng := rand.New(rand.NewSource(3))
	for _, size := range []int{100, 0, 70000, xfs.MaxCreateData, xfs.MaxCreateData + 1, 3<<20 + 17, 5, MaxSystemFileSize} {
		data := randomBytes(rng, size)
		if err := f.Write("iam.json", data); err != nil {
			t.Fatalf("Write of %d bytes: %v", size, err)
		}
		readIs("iam.json", data)
	}
	small := []byte(`{"users":[]}`)
	if err := f.Write("other_1.v-2", small); err != nil {
		t.Fatal(err)
	}
	if err := f.Write("iam.json", make([]byte, MaxSystemFileSize+1)); !errors.Is(err, ErrSystemFileTooLarge) {
		t.Errorf("Write over the limit: %v", err)
	}
	if got, _ := f.Read("iam.json"); len(got) != MaxSystemFileSize {
		t.Errorf("a refused Write changed the file to %d bytes", len(got))
	}
	for _, name := range []string{"", ".hidden", ".", "..", "a/b", "../x", "Upper", "sp ace", "é", "a\x00b", strings.Repeat("x", 65)} {
		if err := f.Write(name, small); !errors.Is(err, ErrInvalidSystemFileName) {
			t.Errorf("Write %q: %v, want ErrInvalidSystemFileName", name, err)
		}
		if _, err := f.Read(name); !errors.Is(err, ErrInvalidSystemFileName) {
			t.Errorf("Read %q: %v, want ErrInvalidSystemFileName", name, err)
		}
		if err := f.Delete(name); !errors.Is(err, ErrInvalidSystemFileName) {
			t.Errorf("Delete %q: %v, want ErrInvalidSystemFileName", name, err)
		}
	}
	if err := f.Write(strings.Repeat("x", 64), small); err != nil {
		t.Errorf("Write of a 64-byte name: %v", err)
	}

	// Not charged to any bucket: project 0, in .xfs3/config.
	sys, err := s.v.Names().Lookup(s.v.Root(), SysDir)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := s.v.Names().Lookup(sys, configDir)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := s.v.Names().ReadDir(dir)
	if err != nil || len(ents) != 3 {
		t.Errorf(".xfs3/config holds %v (%v), want 3 files", ents, err)
	}
	for _, e := range ents {
		st, err := s.v.Stat(e.Ino)
		if err != nil || st.ProjID != 0 || st.Mode&0o777 != 0o600 {
			t.Errorf("%s: project %d, mode %o (%v)", e.Name, st.ProjID, st.Mode, err)
		}
	}
	checkStagingEmpty(t, s)

	if err := f.Delete("iam.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read("iam.json"); !errors.Is(err, ErrNoSuchSystemFile) {
		t.Errorf("Read after Delete: %v", err)
	}
	if err := f.Delete("iam.json"); err != nil {
		t.Errorf("Delete again: %v", err)
	}
	readIs("other_1.v-2", small)
}

// checkStagingEmpty fails unless every staging directory is empty.
func checkStagingEmpty(t *testing.T, s *Store) {
	t.Helper()
	for i, d := range s.staging {
		if ents, err := s.v.Names().ReadDir(d); err != nil || len(ents) != 0 {
			t.Errorf("staging directory %02x holds %v (%v)", i, ents, err)
		}
	}
}

// TestSystemFilesSurviveReopen: files are on the volume; a volume
// without .xfs3/config reads as having no files and gets the directory
// at its first Write.
func TestSystemFilesSurviveReopen(t *testing.T) {
	s, img := newTestStore(t)
	f := s.SystemFiles()
	if _, err := f.Read("a"); !errors.Is(err, ErrNoSuchSystemFile) {
		t.Fatal(err)
	}
	sys, err := s.v.Names().Lookup(s.v.Root(), SysDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.v.Names().Lookup(sys, configDir); !errors.Is(err, xfs.ErrNotFound) {
		t.Errorf("a volume without system files has .xfs3/config (%v)", err)
	}
	big := randomBytes(rand.New(rand.NewSource(1)), 2<<20+1)
	for name, data := range map[string][]byte{"a": []byte("first"), "b": big, "c": nil} {
		if err := f.Write(name, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Write("a", []byte("second")); err != nil {
		t.Fatal(err)
	}
	if err := f.Delete("c"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f = s.SystemFiles()
	for name, want := range map[string][]byte{"a": []byte("second"), "b": big} {
		if got, err := f.Read(name); err != nil || !bytes.Equal(got, want) {
			t.Errorf("after reopen, %s: %d bytes (%v), want %d", name, len(got), err, len(want))
		}
	}
	if _, err := f.Read("c"); !errors.Is(err, ErrNoSuchSystemFile) {
		t.Errorf("after reopen, the deleted file: %v", err)
	}
}

// TestSystemFilesConcurrent: writers replace two files over and over
// with contents of every size class while readers read them; every read
// is one Write's content, whole, and the last Write of each writer wins
// over nothing else.
func TestSystemFilesConcurrent(t *testing.T) {
	s, _ := newTestStore(t)
	f := s.SystemFiles()
	// content makes writer w's i-th content: a header naming it, then
	// filler up to a size that crosses xfs.MaxCreateData now and then.
	content := func(w, i int) []byte {
		sizes := []int{0, 40, 5000, 300000, xfs.MaxCreateData + 1}
		head := fmt.Sprintf("writer %d write %d;", w, i)
		b := append([]byte(head), bytes.Repeat([]byte{byte('a' + w)}, sizes[(w+i)%len(sizes)])...)
		return b
	}
	valid := func(b []byte) bool {
		var w, i int
		if _, err := fmt.Sscanf(string(b), "writer %d write %d;", &w, &i); err != nil {
			return false
		}
		return bytes.Equal(b, content(w, i))
	}
	names := []string{"one", "two"}
	const writers, writes = 4, 12
	var wg sync.WaitGroup
	errs := make(chan error, writers*writes+64)
	done := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < writes; i++ {
				if err := f.Write(names[(w+i)%2], content(w, i)); err != nil {
					errs <- err
				}
			}
		}()
	}
	var rg sync.WaitGroup
	for r := 0; r < 3; r++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				b, err := f.Read(names[n%2])
				if errors.Is(err, ErrNoSuchSystemFile) {
					continue
				}
				if err != nil || !valid(b) {
					errs <- fmt.Errorf("read %s: %d bytes %.30q (%v)", names[n%2], len(b), b, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, name := range names {
		if b, err := f.Read(name); err != nil || !valid(b) {
			t.Errorf("%s at the end: %d bytes (%v)", name, len(b), err)
		}
	}
	checkStagingEmpty(t, s)
}

// TestKernelSeesSystemFiles writes system files (one replaced, one
// beyond xfs.MaxCreateData, one deleted) and bucket configurations (a
// 20 KiB policy, a remote value, and a small public access block; one
// deleted), closes the volume and checks it with xfs_repair -n and a
// read-only kernel mount: .xfs3/config holds exactly the files with
// their bytes, and the bucket directories the documents as xattrs, as
// getfattr prints them.
func TestKernelSeesSystemFiles(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	s, img := newTestStore(t)
	rng := rand.New(rand.NewSource(11))
	files := map[string][]byte{
		"iam.json":   []byte(`{"users":[{"name":"alice"}],"policies":{}}`),
		"big.bin":    randomBytes(rng, xfs.MaxCreateData+4097),
		"empty":      {},
		"gone.json":  []byte("deleted"),
		"x-1_2.conf": randomBytes(rng, 9000),
	}
	f := s.SystemFiles()
	for name, data := range files {
		if err := f.Write(name, []byte("an older content of "+name)); err != nil {
			t.Fatal(err)
		}
		if err := f.Write(name, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Delete("gone.json"); err != nil {
		t.Fatal(err)
	}
	delete(files, "gone.json")

	c := s.BucketConfigs()
	policy := bytes.Repeat([]byte(`{"Effect":"Allow"}`), ConfigPolicy.MaxSize()/18)
	pab := []byte("<PublicAccessBlockConfiguration/>")
	want := map[string]map[ConfigKind][]byte{
		"alpha": {ConfigPolicy: policy, ConfigPublicAccessBlock: pab},
		"beta":  {ConfigPublicAccessBlock: pab},
		"gamma": {},
	}
	for b := range want {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(b, ConfigPolicy, []byte("an older policy")); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(b, ConfigPublicAccessBlock, pab); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Put("alpha", ConfigPolicy, policy); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"beta", "gamma"} {
		if err := c.Delete(b, ConfigPolicy); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Delete("gamma", ConfigPublicAccessBlock); err != nil {
		t.Fatal(err)
	}
	mnt, snap := closeAndSnapshot(t, s, img)
	cfg := SysDir + "/" + configDir
	if e, ok := snap.Lookup(cfg); !ok || e.Type != oracle.TypeDir || e.Mode != 0o700 || len(e.Xattrs) != 0 {
		t.Errorf("%s: kernel shows %+v", cfg, e)
	}
	ents, err := os.ReadDir(filepath.Join(mnt, cfg))
	if err != nil || len(ents) != len(files) {
		t.Errorf("%s holds %v (%v), want %d files", cfg, ents, err, len(files))
	}
	for name, data := range files {
		got, err := os.ReadFile(filepath.Join(mnt, cfg, name))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s/%s: the kernel reads %d bytes (%v), want %d", cfg, name, len(got), err, len(data))
		}
		if e, _ := snap.Lookup(cfg + "/" + name); e.Type != oracle.TypeFile || e.Mode != 0o600 || e.Nlink != 1 || len(e.Xattrs) != 0 {
			t.Errorf("%s/%s: kernel shows %+v", cfg, name, e)
		}
	}
	getfattr := oracle.Optional(t, "bucket xattrs checked through the snapshot only", "getfattr")
	for b, docs := range want {
		e, ok := snap.Lookup(b)
		if !ok {
			t.Errorf("bucket %s missing", b)
			continue
		}
		for _, k := range []ConfigKind{ConfigPolicy, ConfigPublicAccessBlock} {
			doc, has := docs[k]
			got, there := e.Xattrs[k.xattr()]
			if there != has || got != string(doc) {
				t.Errorf("%s: kernel shows %s = %d bytes (there: %v), want %d (there: %v)", b, k.xattr(), len(got), there, len(doc), has)
			}
			if !getfattr {
				continue
			}
			out, err := exec.Command("getfattr", "--only-values", "-n", k.xattr(), filepath.Join(mnt, b)).Output()
			switch {
			case has && (err != nil || !bytes.Equal(out, doc)):
				t.Errorf("getfattr -n %s %s: %d bytes (%v), want %d", k.xattr(), b, len(out), err, len(doc))
			case !has && err == nil:
				t.Errorf("getfattr -n %s %s: %q, want no such attribute", k.xattr(), b, out)
			}
		}
	}
}

// The system file power-cut test: SystemFiles.Write replaces a file's
// old content on a device with a volatile write cache (dev.Fault), the
// power cut at each write it makes in turn (counted from the Write's
// first, since opening makes more or fewer writes from run to run), and
// just after it returns. The disk keeps nothing of what was not flushed,
// all of it, all of it with the last write torn, and random parts
// (XFS3_SYSFILE_POWERCUT_CRASHES, default 2, of randomCrash's kind). Our
// recovery then opens the image: the file reads the old content or the
// new one, never anything else, the new one once Write returned; the
// staging directories are empty; xfs_repair -n is clean.
func TestSystemFileWritePowerCut(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	crashes := envInt(t, "XFS3_SYSFILE_POWERCUT_CRASHES", 2)
	rng := rand.New(rand.NewSource(17))
	for _, c := range []struct{ old, next int }{
		{3000, 9000},                      // created with its data, over one so made
		{9000, xfs.MaxCreateData + 70001}, // created, then written
		{2<<20 + 5, 0},                    // an empty file over a written one
	} {
		old, next := randomBytes(rng, c.old), randomBytes(rng, c.next)
		t.Run(fmt.Sprintf("%d-over-%d", c.next, c.old), func(t *testing.T) {
			sysFilePowerCut(t, old, next, crashes)
		})
	}
}

const sysCutFile = "iam.json"

// sysFilePowerCut cuts a Write of next over old at each of its writes,
// and after it.
func sysFilePowerCut(t *testing.T, old, next []byte, crashes int) {
	base := filepath.Join(t.TempDir(), "base.img")
	if _, err := mkfs.Format(base, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	s, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SystemFiles().Write(sysCutFile, old); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	const maxWrites = 1000
	for k := 1; ; k++ {
		if k > maxWrites {
			t.Fatalf("a Write still going after %d writes", maxWrites)
		}
		r := runSysFileCut(t, base, next, k)
		pending := r.f.Pending()
		cs := []dev.Crash{{}, {Keep: pending}, {Keep: pending, Tear: true}}
		crng := rand.New(rand.NewSource(int64(k)))
		for i := 0; i < crashes; i++ {
			cs = append(cs, randomCrash(crng, r.f, int64(k*100+i)))
		}
		for _, crash := range cs {
			got := checkSysFileCut(t, base, r.f, crash, old, next, r.acked)
			seen[got]++
			if t.Failed() {
				t.Fatalf("cut at the Write's write %d (it made %d, acknowledged %v); kept %d of %d unflushed writes, tear %v, subset %v",
					k, r.writes, r.acked, crash.Keep, pending, crash.Tear, crash.Subset != nil)
			}
		}
		if !r.reached {
			t.Logf("%d cuts, the last after the Write's %d writes; recovered to %v", k, r.writes, seen)
			return
		}
	}
}

// sysCutRun is a run of a Write with the power cut.
type sysCutRun struct {
	f       *dev.Fault
	writes  int  // the Write's writes, up to the cut
	acked   bool // it returned success
	reached bool // the cut came during the Write
}

// runSysFileCut opens base on a Fault device and writes next over the
// system file, cutting the power at the Write's k-th write (or after it
// returns, when it makes fewer).
func runSysFileCut(t *testing.T, base string, next []byte, k int) sysCutRun {
	t.Helper()
	f := openFault(t, base)
	v, err := xfs.OpenDevice(f, xfs.Options{LazyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close() // fails after the cut; the image is built from the device
	s, err := NewWith(v, Options{GC: gc.Options{Mode: gc.Sync}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start, _ := f.Stats()
	f.CutAt(start + k)
	err = s.SystemFiles().Write(sysCutFile, next)
	end, _ := f.Stats()
	r := sysCutRun{f: f, writes: end - start, acked: err == nil, reached: f.IsCut()}
	if err != nil && !r.reached {
		t.Fatal(err)
	}
	f.Cut()
	return r
}

// checkSysFileCut builds the image crash leaves of f, recovers it and
// checks the system file; it returns "old" or "new".
func checkSysFileCut(t *testing.T, base string, f *dev.Fault, crash dev.Crash, old, next []byte, acked bool) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "crash.img")
	defer os.Remove(img)
	oracle.CopySparse(t, base, img)
	if err := f.Image(img, crash); err != nil {
		t.Fatal(err)
	}
	s, err := Open(img) // recovers the log
	if err != nil {
		t.Fatalf("reopen after the cut: %v", err)
	}
	got, err := s.SystemFiles().Read(sysCutFile)
	state := "other"
	switch {
	case err != nil:
		t.Errorf("Read after the cut: %v", err)
	case bytes.Equal(got, next):
		state = "new"
	case bytes.Equal(got, old) && !acked:
		state = "old"
	case bytes.Equal(got, old):
		t.Errorf("the acknowledged Write is lost: the file reads its old content")
	default:
		t.Errorf("the file reads %d bytes, neither the old %d nor the new %d", len(got), len(old), len(next))
	}
	checkStagingEmpty(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	return state
}
