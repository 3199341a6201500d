package store

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand"
	"path"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// keyGen draws keys from the whole S3 key space: empty, "." and ".."
// components, unicode, names that look reserved, components around and
// far over the 255-byte name limit, NUL bytes, keys of 1024 bytes, folder
// markers, and keys that make existing keys prefixes (or the reverse).
type keyGen struct {
	rng  *rand.Rand
	seen []string
}

var modelComponents = []string{
	"a", "b", "a.b", "a-", "é", "日本", "😀", "", "", ".", "..", "...",
	".xfs3", ".xfs3.", ".xfs3.e.", ".xfs3.o.a", ".xfs3.eh.00", ".xfs3.x", " ", "a b", "~",
	"a\x00b", "\x01",
}

func (g *keyGen) component() string {
	r := g.rng
	switch r.Intn(8) {
	case 0: // around the limits of the name forms
		n := []int{246, 247, 248, 249, 255, 256, 300}[r.Intn(7)]
		return strings.Repeat(string(rune('a'+r.Intn(3))), n)
	case 1:
		return strings.Repeat("é", 100+r.Intn(300)) // long and multi-byte
	case 2:
		return fmt.Sprintf("f%d", r.Intn(6))
	}
	return modelComponents[r.Intn(len(modelComponents))]
}

func (g *keyGen) key() string {
	r := g.rng
	var k string
	switch {
	case len(g.seen) > 0 && r.Intn(3) == 0: // below an existing key
		k = g.seen[r.Intn(len(g.seen))] + "/" + g.component()
	case len(g.seen) > 0 && r.Intn(4) == 0: // an existing key's prefix
		s := g.seen[r.Intn(len(g.seen))]
		if i := strings.LastIndexByte(s, '/'); i > 0 {
			k = s[:i]
			if r.Intn(2) == 0 {
				k += "/"
			}
		}
	case r.Intn(30) == 0: // the longest key
		k = strings.Repeat("x/", 511) + "yz"
	}
	if k == "" {
		parts := make([]string, 1+r.Intn(4))
		for i := range parts {
			parts[i] = g.component()
		}
		k = strings.Join(parts, "/")
		if r.Intn(6) == 0 {
			k += "/"
		}
	}
	for len(k) > MaxKeyLen || !utf8.ValidString(k) {
		k = k[:len(k)-1]
	}
	if k == "" {
		k = "/"
	}
	return k
}

// TestKeyMappingModel runs seeded random PUT, GET, HEAD, LIST, DELETE
// and COPY over awkward keys against a map, then checks the volume with
// xfs_repair -n and a kernel mount decoded by the documented mapping.
func TestKeyMappingModel(t *testing.T) {
	s, img := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	model := map[string]string{} // key → body
	g := &keyGen{rng: rand.New(rand.NewSource(14))}
	rng := g.rng
	body := func(k string) string {
		if strings.HasSuffix(k, "/") && rng.Intn(2) == 0 {
			return "" // a plain folder marker
		}
		return fmt.Sprintf("%x:%s", rng.Int63(), k[:min(len(k), 40)])
	}
	check := func(k string) {
		t.Helper()
		want, ok := model[k]
		info, err := s.HeadObject("bkt", k)
		if !ok {
			if !errors.Is(err, ErrNoSuchKey) {
				t.Fatalf("head %q (absent): %v", k, err)
			}
			return
		}
		sum := md5.Sum([]byte(want))
		if err != nil || info.Size != int64(len(want)) || info.ETag != hex.EncodeToString(sum[:]) || info.Key != k {
			t.Fatalf("head %q: %+v %v, want %d bytes", k, info, err, len(want))
		}
		if got, _ := get(t, s, "bkt", k); got != want {
			t.Fatalf("get %q = %q, want %q", k, got, want)
		}
	}
	for i := 0; i < 1500; i++ {
		switch op := rng.Intn(10); {
		case op < 6:
			k := g.key()
			b := body(k)
			put(t, s, "bkt", k, b, Meta{})
			model[k] = b
			g.seen = append(g.seen, k)
		case op < 8 && len(g.seen) > 0:
			k := g.seen[rng.Intn(len(g.seen))]
			if rng.Intn(3) == 0 {
				k = g.key()
			}
			if err := s.DeleteObject("bkt", k); err != nil {
				t.Fatalf("delete %q: %v", k, err)
			}
			delete(model, k)
		case op < 9 && len(g.seen) > 0:
			src, dst := g.seen[rng.Intn(len(g.seen))], g.key()
			_, err := s.CopyObject("bkt", src, "bkt", dst, nil)
			if _, ok := model[src]; !ok {
				if !errors.Is(err, ErrNoSuchKey) {
					t.Fatalf("copy of absent %q: %v", src, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("copy %q to %q: %v", src, dst, err)
			}
			model[dst] = model[src]
			g.seen = append(g.seen, dst)
		case len(g.seen) > 0:
			check(g.seen[rng.Intn(len(g.seen))])
			check(g.key())
		}
	}
	keys := make([]string, 0, len(model))
	for k := range model {
		keys = append(keys, k)
		check(k)
	}
	sort.Strings(keys)
	t.Logf("%d keys in the model after 1500 operations", len(keys))
	checkModelListings(t, s, keys, rng)
	checkProjects(t, s, "bkt")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount) // the model part ran already
	oracle.Repair(t, img)
	snap, err := oracle.SnapshotDir(oracle.Mount(t, img, true))
	if err != nil {
		t.Fatal(err)
	}
	got := kernelKeys(t, snap, "bkt")
	for k, want := range model {
		sum := sha256.Sum256([]byte(want))
		if got[k] != hex.EncodeToString(sum[:]) {
			t.Errorf("kernel view of %q: sha256 %q, want %x", k, got[k], sum)
		}
		delete(got, k)
	}
	for k := range got {
		t.Errorf("kernel shows key %q that the model does not hold", k)
	}
}

// checkModelListings compares pages, walked to the end with every small
// page size, with the model, for prefixes cut from the keys and several
// delimiters.
func checkModelListings(t *testing.T, s *Store, keys []string, rng *rand.Rand) {
	t.Helper()
	prefixes := []string{"", "/", "a", "a/", ".", "..", "../", ".xfs3.", "é", "x/x/"}
	for i := 0; i < 12; i++ {
		k := keys[rng.Intn(len(keys))]
		cut := rng.Intn(len(k) + 1)
		for !utf8.ValidString(k[:cut]) {
			cut--
		}
		prefixes = append(prefixes, k[:cut])
	}
	pages := 0
	for _, p := range prefixes {
		for _, d := range []string{"", "/", ".", "a", "//"} {
			for _, max := range []int{1, 2, 3, 4, 5, 1000} {
				if max < 4 && rng.Intn(3) != 0 {
					continue // every size, not every size for every prefix
				}
				after := ""
				if rng.Intn(3) == 0 {
					after = keys[rng.Intn(len(keys))]
				}
				for n := 0; ; n++ {
					opt := ListOptions{Prefix: p, Delimiter: d, StartAfter: after, MaxKeys: max}
					got, err := s.ListObjects("bkt", opt)
					if err != nil {
						t.Fatal(err)
					}
					if want := modelList(keys, opt); !reflect.DeepEqual(strip(got), want) {
						t.Fatalf("list %#v:\n got %v\nwant %v", opt, describe(got), describe(want))
					}
					pages++
					if !got.IsTruncated || n > 200 {
						break
					}
					after = got.NextMarker
				}
			}
		}
	}
	t.Logf("%d pages compared", pages)
}

// checkProjects checks that every inode under the bucket is charged to
// the bucket's project.
func checkProjects(t *testing.T, s *Store, bucket string) {
	t.Helper()
	b := s.mustBucket(t, bucket)
	project, err := s.quotas().project(b)
	if err != nil || project == 0 {
		t.Fatalf("bucket project %d: %v", project, err)
	}
	var walk func(dir format.Ino, at string)
	walk = func(dir format.Ino, at string) {
		ents, err := s.v.Names().ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			st, err := s.v.Stat(e.Ino)
			if err != nil {
				t.Fatal(err)
			}
			if st.ProjID != project {
				t.Errorf("%s/%q: project %d, want %d", at, e.Name, st.ProjID, project)
			}
			if st.IsDir() {
				walk(e.Ino, at+"/"+e.Name)
			}
		}
	}
	walk(b, bucket)
}

// kernelKeys decodes a kernel view of bucket by the mapping documented in
// the package doc, independently of the store's code, and returns the
// SHA-256 of every key's content. It fails on anything the mapping does
// not allow: an unknown reserved name, a name that is not the one form
// of its component, a hashed name whose xattr does not match, a key held
// twice, an empty directory that is no marker.
func kernelKeys(t *testing.T, snap oracle.Snapshot, bucket string) map[string]string {
	t.Helper()
	const emptySHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	keys := map[string]string{}
	add := func(k, sum, at string) {
		if _, dup := keys[k]; dup {
			t.Errorf("%s: key %q held twice", at, k)
		}
		keys[k] = sum
	}
	byPath := map[string]oracle.Entry{}
	for _, e := range snap {
		byPath[e.Path] = e
	}
	// prefixOf turns a directory path below the bucket into its key
	// prefix ("" for the bucket).
	var prefixOf func(p string) string
	prefixOf = func(p string) string {
		if p == bucket {
			return ""
		}
		dir, name := path.Split(p)
		c, beside := kernelComponent(t, name, byPath[p])
		if beside {
			t.Errorf("%s: a directory under an object's reserved name", p)
		}
		return prefixOf(strings.TrimSuffix(dir, "/")) + c + "/"
	}
	for _, e := range snap {
		if !strings.HasPrefix(e.Path, bucket+"/") || inVersionsTree(e.Path, bucket) {
			continue
		}
		dir, name := path.Split(e.Path)
		dir = strings.TrimSuffix(dir, "/")
		switch e.Type {
		case oracle.TypeFile:
			c, beside := kernelComponent(t, name, e)
			if beside {
				// Beside only while the directory of that name exists.
				if _, ok := byPath[dir+"/"+entryName(c)]; !ok {
					t.Errorf("%s: beside no directory", e.Path)
				}
			}
			add(prefixOf(dir)+c, e.SHA256, e.Path)
		case oracle.TypeDir:
			p := prefixOf(e.Path)
			if _, ok := e.Xattrs[xattrFolder]; ok {
				add(p, emptySHA, e.Path)
			} else if !hasChild(snap, e.Path) {
				t.Errorf("%s: an empty directory that is no marker", e.Path)
			}
		default:
			t.Errorf("%s: a %s in a bucket", e.Path, e.Type)
		}
	}
	// A marker file overrides an old-style marker attribute; the store
	// never leaves both.
	return keys
}

// inVersionsTree tells whether a path of a kernel view is the bucket's
// versions tree or below it.
func inVersionsTree(p, bucket string) bool {
	root := bucket + "/.xfs3.versions"
	return p == root || strings.HasPrefix(p, root+"/")
}

// kernelComponent decodes one name seen on the kernel mount.
func kernelComponent(t *testing.T, name string, e oracle.Entry) (c string, beside bool) {
	t.Helper()
	plain := func(c string) bool {
		return c != "" && c != "." && c != ".." && !strings.HasPrefix(c, ".xfs3.") && !strings.ContainsRune(c, 0)
	}
	hashed := func(hexSum string) string {
		c, ok := e.Xattrs["user.xfs3.name"]
		sum := sha256.Sum256([]byte(c))
		if !ok || hex.EncodeToString(sum[:]) != hexSum {
			t.Errorf("%s: hashed name without its component (%q)", e.Path, c)
		}
		return c
	}
	short := func(c string) bool { return len(".xfs3.e.")+len(c) <= 255 && !strings.ContainsRune(c, 0) }
	switch {
	case !strings.HasPrefix(name, ".xfs3."):
		return name, false
	case strings.HasPrefix(name, ".xfs3.e."):
		c = name[len(".xfs3.e."):]
		if plain(c) {
			t.Errorf("%s: %q escaped without need", e.Path, c)
		}
	case strings.HasPrefix(name, ".xfs3.o."):
		return name[len(".xfs3.o."):], true
	case strings.HasPrefix(name, ".xfs3.eh."):
		if c = hashed(name[len(".xfs3.eh."):]); (plain(c) && len(c) <= 255) || short(c) {
			t.Errorf("%s: %q hashed without need", e.Path, c)
		}
	case strings.HasPrefix(name, ".xfs3.oh."):
		if c = hashed(name[len(".xfs3.oh."):]); short(c) {
			t.Errorf("%s: %q hashed without need", e.Path, c)
		}
		return c, true
	default:
		t.Errorf("%s: an unknown reserved name", e.Path)
	}
	return c, false
}

// FuzzKeyNames: every component has one entry name and one beside name,
// both valid XFS names that decode back to it; a name starts with the
// reserved prefix only when the component cannot be its own name; and a
// name decodes only if it is the one form of what it decodes to.
func FuzzKeyNames(f *testing.F) {
	for _, c := range modelComponents {
		f.Add(c)
	}
	f.Add(strings.Repeat("é", 200))
	f.Add(strings.Repeat("a", 248))
	f.Fuzz(func(t *testing.T, c string) {
		if strings.Contains(c, "/") {
			return // components never hold the separator
		}
		stored := func() (string, bool) { return c, true }
		for _, beside := range []bool{false, true} {
			name := entryName(c)
			if beside {
				name = besideName(c)
			}
			if name == "" || name == "." || name == ".." || len(name) > maxNameLen ||
				strings.ContainsAny(name, "/\x00") {
				t.Fatalf("component %q: invalid name %q", c, name)
			}
			if strings.HasPrefix(name, reservedPrefix) == (!beside && plainName(c)) {
				t.Fatalf("component %q (plain %v) gives %q", c, plainName(c), name)
			}
			got, gotBeside, ok := decodeName(name, stored)
			if !ok || got != c || gotBeside != beside {
				t.Fatalf("decode(%q) = %q %v %v, want %q %v", name, got, gotBeside, ok, c, beside)
			}
		}
		// c read as a name: it decodes only to what encodes as c.
		if strings.ContainsRune(c, 0) || c == "" || len(c) > maxNameLen {
			return
		}
		if got, beside, ok := decodeName(c, stored); ok {
			if again := map[bool]string{false: entryName(got), true: besideName(got)}[beside]; again != c {
				t.Fatalf("name %q decodes to %q (beside %v), which encodes as %q", c, got, beside, again)
			}
		}
	})
}

// TestKeyMappingCrashStates builds the states a crash can leave between
// the one-transaction steps of the mapping and checks that each reads as
// the keys before or after it, and that the store carries on from it.
func TestKeyMappingCrashStates(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	b := s.mustBucket(t, "bkt")
	listKeys := func() []string {
		t.Helper()
		res, err := s.ListObjects("bkt", ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, o := range res.Objects {
			keys = append(keys, o.Key)
		}
		return keys
	}
	// Promotion cut after the object moved beside, before the directory
	// was made (also: pruning cut after the directory went, before the
	// object moved back).
	put(t, s, "bkt", "p", "object p", Meta{})
	if err := s.v.Names().Rename(b, "p", b, ".xfs3.o.p"); err != nil {
		t.Fatal(err)
	}
	if got, _ := get(t, s, "bkt", "p"); got != "object p" {
		t.Fatalf("p = %q", got)
	}
	if keys := listKeys(); !reflect.DeepEqual(keys, []string{"p"}) {
		t.Fatalf("listed %q", keys)
	}
	put(t, s, "bkt", "p", "object p again", Meta{}) // replaces it where it lies
	if _, err := s.v.Names().Lookup(b, "p"); err == nil {
		t.Fatal("an overwrite made a second object p")
	}
	put(t, s, "bkt", "p/q", "q", Meta{})
	if keys := listKeys(); !reflect.DeepEqual(keys, []string{"p", "p/q"}) {
		t.Fatalf("listed %q", keys)
	}
	if got, _ := get(t, s, "bkt", "p"); got != "object p again" {
		t.Fatalf("p = %q", got)
	}
	if err := s.DeleteObject("bkt", "p"); err != nil {
		t.Fatal(err)
	}
	if keys := listKeys(); !reflect.DeepEqual(keys, []string{"p/q"}) {
		t.Fatalf("listed %q", keys)
	}

	// A marker with content written over an empty one, cut before the
	// attribute went: the file wins, and one key is listed.
	put(t, s, "bkt", "m/", "", Meta{})
	m, err := s.v.Names().Lookup(b, "m")
	if err != nil {
		t.Fatal(err)
	}
	file, err := s.v.Names().Create(m, ".xfs3.e.", fileAttrs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.v.Files().WriteAt(file, []byte("marker"), 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := get(t, s, "bkt", "m/"); got != "marker" {
		t.Fatalf("m/ = %q", got)
	}
	if keys := listKeys(); !reflect.DeepEqual(keys, []string{"m/", "p/q"}) {
		t.Fatalf("listed %q", keys)
	}
	if err := s.DeleteObject("bkt", "m/"); err != nil {
		t.Fatal(err)
	}
	if keys := listKeys(); !reflect.DeepEqual(keys, []string{"p/q"}) {
		t.Fatalf("listed %q after deleting the marker", keys)
	}

	// Names the mapping does not produce hold no keys.
	for _, name := range []string{".xfs3.x", ".xfs3.e.a", ".xfs3.eh.00"} {
		if _, err := s.v.Names().Create(b, name, fileAttrs); err != nil {
			t.Fatal(err)
		}
	}
	if keys := listKeys(); !reflect.DeepEqual(keys, []string{"p/q"}) {
		t.Fatalf("listed %q with foreign reserved names", keys)
	}
}

// TestKeyMappingConcurrent races PUTs, DELETEs and listings over keys
// that turn objects into prefixes and back: listings stay strictly
// ordered, and once quiet the listing, HEAD and the bucket agree.
func TestKeyMappingConcurrent(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	keys := []string{"p", "p/q", "p/q/r", "p/", "p//", "p//x", "..", "../p", strings.Repeat("l", 300), strings.Repeat("l", 300) + "/x"}
	done := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func(seed int64) {
			rng := rand.New(rand.NewSource(seed))
			for i := 0; i < 150; i++ {
				k := keys[rng.Intn(len(keys))]
				var err error
				switch rng.Intn(3) {
				case 0:
					_, err = s.PutObject("bkt", k, strings.NewReader(k), int64(len(k)), Meta{})
				case 1:
					err = s.DeleteObject("bkt", k)
				default:
					var res ListResult
					res, err = s.ListObjects("bkt", ListOptions{})
					for j := 1; err == nil && j < len(res.Objects); j++ {
						if res.Objects[j-1].Key >= res.Objects[j].Key {
							err = fmt.Errorf("listing out of order: %q before %q", res.Objects[j-1].Key, res.Objects[j].Key)
						}
					}
				}
				if err != nil {
					done <- fmt.Errorf("%q: %w", k, err)
					return
				}
			}
			done <- nil
		}(int64(w))
	}
	for w := 0; w < 4; w++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.ListObjects("bkt", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var listed, present []string
	for _, o := range res.Objects {
		listed = append(listed, o.Key)
	}
	for _, k := range keys {
		if _, err := s.HeadObject("bkt", k); err == nil {
			present = append(present, k)
		}
		if err := s.DeleteObject("bkt", k); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(present)
	if !reflect.DeepEqual(listed, present) {
		t.Fatalf("listed %q, HEAD finds %q", listed, present)
	}
	if err := s.DeleteBucket("bkt"); err != nil {
		t.Fatalf("bucket not empty after deleting every key: %v", err)
	}
}
