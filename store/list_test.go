package store

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// modelList is the reference listing over a sorted key set.
func modelList(keys []string, opt ListOptions) ListResult {
	max := opt.MaxKeys
	if max <= 0 {
		max = DefaultMaxKeys
	}
	var res ListResult
	count := 0
	lastCP := ""
	for _, k := range keys {
		if !strings.HasPrefix(k, opt.Prefix) || k <= opt.StartAfter {
			continue
		}
		item, isCP := k, false
		if opt.Delimiter != "" {
			if i := strings.Index(k[len(opt.Prefix):], opt.Delimiter); i >= 0 {
				item, isCP = k[:len(opt.Prefix)+i+len(opt.Delimiter)], true
				if item <= opt.StartAfter || item == lastCP {
					continue
				}
			}
		}
		if count == max {
			res.IsTruncated = true
			break
		}
		count++
		res.NextMarker = item
		if isCP {
			lastCP = item
			res.CommonPrefixes = append(res.CommonPrefixes, item)
		} else {
			res.Objects = append(res.Objects, ObjectInfo{Key: k})
		}
	}
	return res
}

// populate puts random keys built from edge-case components (objects
// that are prefixes too, empty, "." and ".." components, names that look
// reserved) and returns them sorted.
func populate(t *testing.T, s *Store, bucket string, rng *rand.Rand, n int) []string {
	t.Helper()
	comps := []string{"a", "a.b", "a-", "a-b", "ab", "b", "é", "z", "0", "a b", "~", "A", "aa", "a.", "ü.x", "", ".", "..", ".xfs3.o.a", ".xfs3.e."}
	model := map[string]bool{}
	for i := 0; i < n; i++ {
		depth := 1 + rng.Intn(4)
		parts := make([]string, depth)
		for j := range parts {
			parts[j] = comps[rng.Intn(len(comps))]
		}
		if rng.Intn(4) != 0 { // mostly leaves that are never directories
			parts[depth-1] = fmt.Sprintf("f%d%s", rng.Intn(50), comps[rng.Intn(len(comps))])
		}
		key := strings.Join(parts, "/")
		if rng.Intn(15) == 0 {
			key += "/"
		}
		if key == "" || model[key] {
			continue
		}
		size := len(key)
		if strings.HasSuffix(key, "/") {
			size = 0
		}
		_, err := s.PutObject(bucket, key, strings.NewReader(key[:size]), int64(size), Meta{})
		if err != nil {
			t.Fatalf("put %q: %v", key, err)
		}
		model[key] = true
	}
	keys := make([]string, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func strip(r ListResult) ListResult {
	for i := range r.Objects {
		r.Objects[i] = ObjectInfo{Key: r.Objects[i].Key}
	}
	return r
}

func TestListAgainstModel(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	keys := populate(t, s, "bkt", rng, 3000)
	if len(keys) < 1000 {
		t.Fatalf("only %d keys", len(keys))
	}
	// Sizes and ETags in a full listing.
	full, err := s.ListObjects("bkt", ListOptions{MaxKeys: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Objects) != len(keys) || full.IsTruncated {
		t.Fatalf("full listing: %d objects, want %d", len(full.Objects), len(keys))
	}
	for i, o := range full.Objects {
		want := int64(len(keys[i]))
		if strings.HasSuffix(keys[i], "/") {
			want = 0
		}
		if o.Key != keys[i] || o.Size != want || len(o.ETag) != 32 || o.LastModified.IsZero() {
			t.Fatalf("object %d: %+v, want key %q size %d", i, o, keys[i], want)
		}
	}

	prefixes := []string{"", "a", "a/", "a.", "a-", "é", "a/a", "a/a/", "a b/", "zz", "ü.x/a"}
	for i := 0; i < 20; i++ {
		k := keys[rng.Intn(len(keys))]
		prefixes = append(prefixes, k[:rng.Intn(len(k)+1)])
	}
	delims := []string{"", "/", "-", ".", "é", "/a"}
	pages := 0
	for _, p := range prefixes {
		for _, d := range delims {
			for _, max := range []int{1, 3, 17, 1000} {
				after := ""
				if rng.Intn(3) == 0 {
					after = keys[rng.Intn(len(keys))]
					if rng.Intn(2) == 0 {
						after = after[:rng.Intn(len(after)+1)]
					}
				}
				for n := 0; ; n++ {
					opt := ListOptions{Prefix: p, Delimiter: d, StartAfter: after, MaxKeys: max}
					got, err := s.ListObjects("bkt", opt)
					if err != nil {
						t.Fatal(err)
					}
					want := modelList(keys, opt)
					if !reflect.DeepEqual(strip(got), want) {
						t.Fatalf("list %+v:\n got %v\nwant %v", opt, describe(got), describe(want))
					}
					pages++
					if !got.IsTruncated {
						break
					}
					after = got.NextMarker
					if max == 1 && n > 60 { // long enough for a pagination check
						break
					}
				}
			}
		}
	}
	t.Logf("%d keys, %d pages compared", len(keys), pages)
}

func describe(r ListResult) string {
	var ks []string
	for _, o := range r.Objects {
		ks = append(ks, o.Key)
	}
	return fmt.Sprintf("objects %q prefixes %q truncated %v next %q", ks, r.CommonPrefixes, r.IsTruncated, r.NextMarker)
}

func TestListOrderEdges(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	keys := []string{"a/b", "a.b", "a-c", "a0", "a/", "b", "a/b.c/d", "a/b-c", "é"}
	for _, k := range keys {
		put(t, s, "bkt", k, "", Meta{})
	}
	sort.Strings(keys)
	for _, tc := range []struct {
		opt  ListOptions
		want string
	}{
		{ListOptions{}, `objects ["a-c" "a.b" "a/" "a/b" "a/b-c" "a/b.c/d" "a0" "b" "é"] prefixes [] truncated false next "é"`},
		{ListOptions{Delimiter: "/"}, `objects ["a-c" "a.b" "a0" "b" "é"] prefixes ["a/"] truncated false next "é"`},
		{ListOptions{Prefix: "a/", Delimiter: "/"}, `objects ["a/" "a/b" "a/b-c"] prefixes ["a/b.c/"] truncated false next "a/b.c/"`},
		{ListOptions{Delimiter: "/", MaxKeys: 3}, `objects ["a-c" "a.b"] prefixes ["a/"] truncated true next "a/"`},
		{ListOptions{Delimiter: "/", StartAfter: "a/"}, `objects ["a0" "b" "é"] prefixes [] truncated false next "é"`},
		{ListOptions{StartAfter: "a/b"}, `objects ["a/b-c" "a/b.c/d" "a0" "b" "é"] prefixes [] truncated false next "é"`},
		{ListOptions{Prefix: "a/b", StartAfter: "a.zzz"}, `objects ["a/b" "a/b-c" "a/b.c/d"] prefixes [] truncated false next "a/b.c/d"`},
		{ListOptions{Prefix: "zzz"}, `objects [] prefixes [] truncated false next ""`},
		{ListOptions{Delimiter: "-"}, `objects ["a.b" "a/" "a/b" "a/b.c/d" "a0" "b" "é"] prefixes ["a-" "a/b-"] truncated false next "é"`},
	} {
		got, err := s.ListObjects("bkt", tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if d := describe(got); d != tc.want {
			t.Errorf("list %+v:\n got %s\nwant %s", tc.opt, d, tc.want)
		}
		if want := modelList(keys, tc.opt); !reflect.DeepEqual(strip(got), want) {
			t.Errorf("list %+v disagrees with the model: %s", tc.opt, describe(want))
		}
	}
	if _, err := s.ListObjects("nobucket", ListOptions{}); !errors.Is(err, ErrNoSuchBucket) {
		t.Fatalf("list missing bucket: %v", err)
	}
}

// TestListCacheFollowsChanges pages through large directories (cached
// sorted) while keys come and go between pages, including a directory
// removed and made again: every page must equal the model of that moment.
func TestListCacheFollowsChanges(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("big"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(3))
	model := map[string]bool{}
	putKey := func(k string) {
		if _, err := s.PutObject("big", k, strings.NewReader(k), int64(len(k)), Meta{}); err != nil {
			t.Fatal(err)
		}
		model[k] = true
	}
	for i := 0; i < 1500; i++ {
		putKey(fmt.Sprintf("flat%05d", rng.Intn(100000)))
	}
	for i := 0; i < 700; i++ {
		putKey(fmt.Sprintf("sub/k%04d", i))
	}
	sortedKeys := func() []string {
		var ks []string
		for k := range model {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	for round := 0; round < 3; round++ {
		after := ""
		for pages := 0; ; pages++ {
			opt := ListOptions{StartAfter: after, MaxKeys: 97}
			if round == 2 {
				opt.Delimiter = "/"
			}
			got, err := s.ListObjects("big", opt)
			if err != nil {
				t.Fatal(err)
			}
			if want := modelList(sortedKeys(), opt); !reflect.DeepEqual(strip(got), want) {
				t.Fatalf("round %d page %d %+v:\n got %v\nwant %v", round, pages, opt, describe(got), describe(want))
			}
			if !got.IsTruncated {
				break
			}
			after = got.NextMarker
			// Change the directories between pages: before and after
			// the marker, in both cached directories.
			switch rng.Intn(4) {
			case 0:
				putKey(fmt.Sprintf("flat%05d", rng.Intn(100000)))
			case 1:
				ks := sortedKeys()
				k := ks[rng.Intn(len(ks))]
				if err := s.DeleteObject("big", k); err != nil {
					t.Fatal(err)
				}
				delete(model, k)
			case 2:
				putKey(fmt.Sprintf("sub/k%04d", 700+rng.Intn(300)))
			}
		}
		if round == 1 {
			// Empty "sub" (its directory goes away) and fill it again: a
			// new directory inode, perhaps the same number.
			for k := range model {
				if strings.HasPrefix(k, "sub/") {
					if err := s.DeleteObject("big", k); err != nil {
						t.Fatal(err)
					}
					delete(model, k)
				}
			}
			for i := 0; i < 600; i++ {
				putKey(fmt.Sprintf("sub/n%04d", i))
			}
		}
	}
}

// TestListReadsChangedDirectory: the listing reads the objects of a
// directory by the inode numbers its entries gave while the directory
// is unchanged, and looks them up by name once it has changed. Between
// reading a directory and reading its objects, random changes delete,
// overwrite, promote (an object moves beside its new prefix directory)
// and prune (it moves back); the objects read must be those the keys
// hold now, deleted ones absent, with their current size, ETag and
// storage class.
func TestListReadsChangedDirectory(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { listReadsChangedDirectory(t, seed) })
	}
}

func listReadsChangedDirectory(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	model := map[string]ObjectInfo{}
	putKey := func(k string) {
		body := strings.Repeat("x", rng.Intn(3000))
		m := Meta{StorageClass: []string{"", "STANDARD_IA", "GLACIER"}[rng.Intn(3)]}
		info, err := s.PutObject("bkt", k, strings.NewReader(body), int64(len(body)), m)
		if err != nil {
			t.Fatal(err)
		}
		model[k] = ObjectInfo{Key: k, Size: info.Size, LastModified: info.LastModified, ETag: info.ETag, Meta: Meta{StorageClass: m.StorageClass}}
	}
	for i := range 40 {
		putKey(fmt.Sprintf("d/k%02d", i))
	}
	b, err := s.openBucket("bkt")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	changed := 0
	for round := range 60 {
		d, err := s.v.Files().OpenAt(b.Ino(), "d")
		if err != nil {
			t.Fatal(err)
		}
		list, at, err := s.sorted(d.Ino())
		if err != nil {
			t.Fatal(err)
		}
		n := rng.Intn(3)
		for range n {
			k := fmt.Sprintf("d/k%02d", rng.Intn(40))
			switch rng.Intn(4) {
			case 0:
				if err := s.DeleteObject("bkt", k); err != nil {
					t.Fatal(err)
				}
				delete(model, k)
			case 1:
				putKey(k)
			case 2:
				putKey(k + "/sub") // promotes k, if it is an object
			default:
				if err := s.DeleteObject("bkt", k+"/sub"); err != nil {
					t.Fatal(err) // prunes k/ and moves k back
				}
				delete(model, k+"/sub")
			}
		}
		if n > 0 {
			changed++
		}
		l := &lister{s: s.store, maxKey: 1000}
		var want []ObjectInfo
		for i := range list {
			e := &list[i]
			if e.dir {
				continue
			}
			key := "d/" + e.sortKey
			if err := l.object(key, d.Ino(), at, e); err != nil {
				t.Fatal(err)
			}
			if info, ok := model[key]; ok {
				want = append(want, info)
			}
		}
		if err := l.flush(); err != nil {
			t.Fatal(err)
		}
		d.Close()
		if !reflect.DeepEqual(l.res.Objects, want) {
			t.Fatalf("round %d (%d changes):\n got %v\nwant %v", round, n, l.res.Objects, want)
		}
	}
	if changed == 0 {
		t.Fatal("no round changed the directory")
	}
}
