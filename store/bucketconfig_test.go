package store

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestBucketConfigs: a bucket's documents of each kind read back as put,
// replace each other, go with Delete (also of none); a missing bucket,
// a bad name, a missing document, the zero kind and a document over its
// kind's limit each give their error and change nothing.
func TestBucketConfigs(t *testing.T) {
	s, _ := newTestStore(t)
	c := s.BucketConfigs()
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	policy := []byte(`{"Version":"2012-10-17","Statement":[]}`)
	for _, k := range []ConfigKind{ConfigPolicy, ConfigPublicAccessBlock} {
		if _, err := c.Get("nope", k); !errors.Is(err, ErrNoSuchBucket) {
			t.Errorf("Get %s of a missing bucket: %v", k, err)
		}
		if err := c.Put("nope", k, policy); !errors.Is(err, ErrNoSuchBucket) {
			t.Errorf("Put %s into a missing bucket: %v", k, err)
		}
		if err := c.Delete("nope", k); !errors.Is(err, ErrNoSuchBucket) {
			t.Errorf("Delete %s of a missing bucket: %v", k, err)
		}
		if _, err := c.Get("Bad_Name", k); !errors.Is(err, ErrInvalidBucketName) {
			t.Errorf("Get %s of a bad bucket name: %v", k, err)
		}
		if _, err := c.Get("bkt", k); !errors.Is(err, ErrNoSuchConfig) {
			t.Errorf("Get %s before any: %v", k, err)
		}
		if err := c.Delete("bkt", k); err != nil {
			t.Errorf("Delete %s of none: %v", k, err)
		}
	}

	getIs := func(k ConfigKind, want []byte) {
		t.Helper()
		got, err := c.Get("bkt", k)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Get %s: %q (%v), want %q", k, got, err, want)
		}
	}
	pab := []byte(`<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls></PublicAccessBlockConfiguration>`)
	if err := c.Put("bkt", ConfigPolicy, policy); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get("bkt", ConfigPublicAccessBlock); !errors.Is(err, ErrNoSuchConfig) {
		t.Errorf("a policy made a public access block: %v", err)
	}
	if err := c.Put("bkt", ConfigPublicAccessBlock, pab); err != nil {
		t.Fatal(err)
	}
	getIs(ConfigPolicy, policy)
	getIs(ConfigPublicAccessBlock, pab)

	// Replace, with a larger document (a remote value) and back.
	big := bytes.Repeat([]byte("0123456789abcdef"), ConfigPolicy.MaxSize()/16)
	if len(big) != 20<<10 {
		t.Fatalf("policy limit %d, want S3's 20 KiB", len(big))
	}
	for _, doc := range [][]byte{big, policy, {}} {
		if err := c.Put("bkt", ConfigPolicy, doc); err != nil {
			t.Fatalf("Put a policy of %d bytes: %v", len(doc), err)
		}
		getIs(ConfigPolicy, doc)
	}
	getIs(ConfigPublicAccessBlock, pab)

	// Limits: one byte over each kind's, and the zero kind.
	for _, k := range []ConfigKind{ConfigPolicy, ConfigPublicAccessBlock} {
		if err := c.Put("bkt", k, make([]byte, k.MaxSize()+1)); !errors.Is(err, ErrConfigTooLarge) {
			t.Errorf("Put %s of %d bytes: %v, want ErrConfigTooLarge", k, k.MaxSize()+1, err)
		}
	}
	if ConfigPublicAccessBlock.MaxSize() > 8<<10 {
		t.Errorf("public access block limit %d: not small", ConfigPublicAccessBlock.MaxSize())
	}
	if err := c.Put("bkt", ConfigKind{}, policy); !errors.Is(err, ErrInvalidConfigKind) {
		t.Errorf("Put of the zero kind: %v", err)
	}
	if _, err := c.Get("bkt", ConfigKind{}); !errors.Is(err, ErrInvalidConfigKind) {
		t.Errorf("Get of the zero kind: %v", err)
	}
	getIs(ConfigPolicy, []byte{})
	getIs(ConfigPublicAccessBlock, pab)

	if err := c.Delete("bkt", ConfigPolicy); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get("bkt", ConfigPolicy); !errors.Is(err, ErrNoSuchConfig) {
		t.Errorf("Get after Delete: %v", err)
	}
	if err := c.Delete("bkt", ConfigPolicy); err != nil {
		t.Errorf("Delete again: %v", err)
	}
	getIs(ConfigPublicAccessBlock, pab)
	if ConfigPolicy.String() != "policy" || ConfigPolicy.xattr() != "user.xfs3.policy" ||
		ConfigPublicAccessBlock.xattr() != "user.xfs3.public-access-block" {
		t.Errorf("kinds' xattrs: %s, %s", ConfigPolicy.xattr(), ConfigPublicAccessBlock.xattr())
	}
}

// TestBucketConfigGeneration: every Put and Delete of a document and
// every bucket made or deleted moves Generation on; reads and calls
// refused before the volume leave it.
func TestBucketConfigGeneration(t *testing.T) {
	s, _ := newTestStore(t)
	c := s.BucketConfigs()
	last := c.Generation()
	step := func(what string, moves bool, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		g := c.Generation()
		if moves && g <= last || !moves && g != last {
			t.Errorf("%s: generation %d after %d (should move: %v)", what, g, last, moves)
		}
		last = g
	}
	step("CreateBucket", true, s.CreateBucket("bkt"))
	step("Put", true, c.Put("bkt", ConfigPolicy, []byte("{}")))
	_, err := c.Get("bkt", ConfigPolicy)
	step("Get", false, err)
	step("Put again", true, c.Put("bkt", ConfigPolicy, []byte("{ }")))
	step("Put another kind", true, c.Put("bkt", ConfigPublicAccessBlock, []byte("x")))
	step("Delete", true, c.Delete("bkt", ConfigPolicy))
	step("Delete of none", true, c.Delete("bkt", ConfigPolicy))
	step("CreateBucket of another", true, s.CreateBucket("other"))
	step("DeleteBucket", true, s.DeleteBucket("other"))
	if err := c.Put("missing", ConfigPolicy, []byte("{}")); !errors.Is(err, ErrNoSuchBucket) {
		t.Fatal(err)
	}
	step("Put into a missing bucket", false, nil)
	if err := c.Put("bkt", ConfigPolicy, make([]byte, 21<<10)); !errors.Is(err, ErrConfigTooLarge) {
		t.Fatal(err)
	}
	step("Put refused over the limit", false, nil)
	if err := s.CreateBucket("bkt"); !errors.Is(err, ErrBucketExists) {
		t.Fatal(err)
	}
	step("CreateBucket of an existing bucket", false, nil)
	step("DeleteBucket with documents", true, s.DeleteBucket("bkt"))
}

// TestBucketConfigGoesWithBucket: a bucket's documents are removed with
// its directory, so a bucket made again under the name has none; and
// they are on the volume, read back after a reopen.
func TestBucketConfigGoesWithBucket(t *testing.T) {
	s, img := newTestStore(t)
	c := s.BucketConfigs()
	for _, b := range []string{"kept", "gone"} {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(b, ConfigPolicy, []byte("policy of "+b)); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(b, ConfigPublicAccessBlock, []byte("pab of "+b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteBucket("gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get("gone", ConfigPolicy); !errors.Is(err, ErrNoSuchBucket) {
		t.Errorf("Get of a deleted bucket: %v", err)
	}
	if err := s.CreateBucket("gone"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []ConfigKind{ConfigPolicy, ConfigPublicAccessBlock} {
		if doc, err := c.Get("gone", k); !errors.Is(err, ErrNoSuchConfig) {
			t.Errorf("a bucket made again has %s %q (%v)", k, doc, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c = s.BucketConfigs()
	for _, k := range []ConfigKind{ConfigPolicy, ConfigPublicAccessBlock} {
		want := map[ConfigKind]string{ConfigPolicy: "policy of kept", ConfigPublicAccessBlock: "pab of kept"}[k]
		if doc, err := c.Get("kept", k); err != nil || string(doc) != want {
			t.Errorf("after reopen, %s: %q (%v), want %q", k, doc, err, want)
		}
		if _, err := c.Get("gone", k); !errors.Is(err, ErrNoSuchConfig) {
			t.Errorf("after reopen, the bucket made again has a %s (%v)", k, err)
		}
	}
}

// TestBucketConfigCache caches parsed documents as the S3 layer does:
// an entry records Generation before its Get and is used while
// Generation has not moved. Readers race writers replacing and deleting
// documents and the buckets themselves; once the writers stop, every
// cached read gives what the volume holds.
func TestBucketConfigCache(t *testing.T) {
	s, _ := newTestStore(t)
	c := s.BucketConfigs()
	buckets := []string{"bk0", "bk1", "bk2"}
	for _, b := range buckets {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	type entry struct {
		gen uint64
		doc string // "-": none; "!": no bucket
	}
	var mu sync.Mutex
	cache := map[string]entry{}
	cached := func(b string) (string, error) {
		g := c.Generation()
		mu.Lock()
		e, ok := cache[b]
		mu.Unlock()
		if ok && e.gen == g {
			return e.doc, nil
		}
		doc, err := c.Get(b, ConfigPolicy)
		switch {
		case errors.Is(err, ErrNoSuchConfig):
			e = entry{g, "-"}
		case errors.Is(err, ErrNoSuchBucket):
			e = entry{g, "!"}
		case err != nil:
			return "", err
		default:
			e = entry{g, string(doc)}
		}
		mu.Lock()
		cache[b] = e
		mu.Unlock()
		return e.doc, nil
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 16)
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := cached(buckets[i%len(buckets)]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 0; i < 300; i++ {
		b := buckets[i%len(buckets)]
		var err error
		switch i % 7 {
		case 3:
			err = c.Delete(b, ConfigPolicy)
		case 5:
			if err = s.DeleteBucket(b); err == nil {
				err = s.CreateBucket(b)
			}
		default:
			err = c.Put(b, ConfigPolicy, []byte(fmt.Sprintf("policy %d", i)))
		}
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	for _, b := range buckets {
		want := "-"
		if doc, err := c.Get(b, ConfigPolicy); err == nil {
			want = string(doc)
		}
		if got, err := cached(b); err != nil || got != want {
			t.Errorf("bucket %s: the cache gives %q (%v), the volume %q", b, got, err, want)
		}
	}
}
