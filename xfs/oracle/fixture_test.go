package oracle

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSmallFixture(t *testing.T) {
	Require(t, ToolMkfs, ToolRepair, ToolDB, ToolMount)
	start := time.Now()
	img, snap := BuildFixture(t, t.TempDir(), Variants[0], Small)
	t.Logf("built %d entries in %v", len(snap), time.Since(start).Round(time.Millisecond))
	checkFixture(t, img, snap, Small, Variants[0])
}

// TestFullFixture builds the Full fixture for every variant (or those
// named in XFS3_ORACLE_VARIANTS, comma separated). It is slow, so it runs
// only with XFS3_ORACLE_FULL=1.
func TestFullFixture(t *testing.T) {
	if os.Getenv("XFS3_ORACLE_FULL") != "1" {
		t.Skip("set XFS3_ORACLE_FULL=1 to build the Full fixtures")
	}
	Require(t, ToolMkfs, ToolRepair, ToolDB, ToolMount)
	variants := append(Variants[:len(Variants):len(Variants)], VariantN64K)
	if names := os.Getenv("XFS3_ORACLE_VARIANTS"); names != "" {
		variants = nil
		for _, v := range append(Variants, VariantN64K) {
			if strings.Contains(","+names+",", ","+v.Name+",") {
				variants = append(variants, v)
			}
		}
	}
	for _, v := range variants {
		t.Run(v.Name, func(t *testing.T) {
			start := time.Now()
			img, snap := BuildFixture(t, t.TempDir(), v, Full)
			t.Logf("built %d entries in %v", len(snap), time.Since(start).Round(time.Millisecond))
			checkFixture(t, img, snap, Full, v)
		})
	}
}

// checkFixture checks that a fixture holds every kind of object Populate
// promises, and that the on-disk formats are the intended ones.
func checkFixture(t *testing.T, img string, snap Snapshot, spec FixtureSpec, v Variant) {
	t.Helper()
	get := func(path string) Entry {
		t.Helper()
		e, ok := snap.Lookup(path)
		if !ok {
			t.Fatalf("fixture lacks %s", path)
		}
		return e
	}

	// Directories: entry counts, name variety and formats.
	var long, nonASCII int
	dirFormats := map[int]string{}
	for _, n := range spec.DirSizes {
		dir := FixtureDir(n)
		count := 0
		for _, e := range snap {
			rest, ok := strings.CutPrefix(e.Path, dir+"/")
			if !ok || strings.Contains(rest, "/") {
				continue
			}
			count++
			if len(rest) >= 200 {
				long++
			}
			if !isASCII(rest) {
				nonASCII++
			}
			if !utf8.ValidString(rest) || len(rest) > 255 {
				t.Errorf("bad name %q", rest)
			}
		}
		if count != n {
			t.Errorf("%s has %d entries, want %d", dir, count, n)
		}
		dirFormats[n] = DirFormat(t, img, get(dir).Ino)
	}
	t.Logf("%s: directory formats by entry count: %v", v.Name, dirFormats)
	if long == 0 || nonASCII == 0 {
		t.Errorf("%d long and %d non-ASCII names, want some of each", long, nonASCII)
	}
	if got := dirFormats[3]; got != "shortform" {
		t.Errorf("dirs/n3 is %s, want shortform", got)
	}
	if v.Name == "default" {
		want := map[int]string{3: "shortform", 60: "block", 400: "leaf", 1000: "node", 30000: "node"}
		for n, f := range dirFormats {
			if want[n] != f {
				t.Errorf("default variant: %s is %s, want %s", FixtureDir(n), f, want[n])
			}
		}
	}
	if n := spec.DirSizes[len(spec.DirSizes)-1]; n >= 30000 && dirFormats[n] != "node" {
		t.Errorf("%s is %s, want node", FixtureDir(n), dirFormats[n])
	}

	// Data forks.
	bt := get(FixtureBtreeFile)
	m := InodeFields(t, img, bt.Ino, "core.format", "core.nextents")
	if m["core.format"] != "3 (btree)" || m["core.nextents"] != fmt.Sprint(spec.BtreeExtents) {
		t.Errorf("%s: %v, want btree with %d extents", FixtureBtreeFile, m, spec.BtreeExtents)
	}
	level := InodeFields(t, img, bt.Ino, "u3.bmbt.level")["u3.bmbt.level"]
	t.Logf("%s: %s has a B+tree of level %s", v.Name, FixtureBtreeFile, level)
	if n, _ := strconv.Atoi(level); spec.BtreeExtents >= 6000 && n < 2 {
		t.Errorf("%s: B+tree level %s, want 2 or more", FixtureBtreeFile, level)
	}
	if bt.Size != int64(spec.BtreeExtents)*8192 {
		t.Errorf("%s size %d", FixtureBtreeFile, bt.Size)
	}
	if e := get(FixtureSparseFile); e.Size != 4<<20 {
		t.Errorf("%s size %d", FixtureSparseFile, e.Size)
	}
	if e := get("files/sparse-far"); e.Size != farOffset+9 {
		t.Errorf("files/sparse-far size %d", e.Size)
	}
	pre := get(FixturePrealloc)
	if pre.Size != 448<<10 {
		t.Errorf("%s size %d, want %d", FixturePrealloc, pre.Size, 448<<10)
	}
	unwritten := 0
	for _, line := range strings.Split(DB(t, img, fmt.Sprintf("inode %d", pre.Ino), "bmap"), "\n") {
		if strings.HasSuffix(line, "flag 1") {
			unwritten++
		}
	}
	if unwritten < 3 {
		t.Errorf("%s has %d unwritten extents, want at least 3", FixturePrealloc, unwritten)
	}
	if e := get(FixtureRandomFile); e.Size != int64(spec.RandomFileSize) {
		t.Errorf("%s size %d", FixtureRandomFile, e.Size)
	}
	if e := get("files/empty"); e.Size != 0 || e.Type != TypeFile {
		t.Errorf("files/empty: %+v", e)
	}

	// Modes, owners, special files.
	for path, mode := range map[string]uint32{"files/mode0600": 0o600, "files/mode4755": 0o4755, "files/mode2755": 0o2755, "files/mode6777": 0o6777, "modes/sticky": 0o1777, "modes/setgid": 0o2775} {
		if e := get(path); e.Mode != mode {
			t.Errorf("%s mode %#o, want %#o", path, e.Mode, mode)
		}
	}
	if e := get("files/owned"); e.UID != 1234 || e.GID != 5678 {
		t.Errorf("files/owned owner %d:%d", e.UID, e.GID)
	}
	if e := get("links/owned"); e.UID != 1234 || e.GID != 5678 {
		t.Errorf("links/owned owner %d:%d", e.UID, e.GID)
	}
	if e := get("special/fifo"); e.Type != TypeOther {
		t.Errorf("special/fifo: %+v", e)
	}
	if DataForkFormat(t, img, get("special/null").Ino) != "dev" {
		t.Errorf("special/null is not a device inode")
	}

	// Links and trees.
	if e := get("links/short"); e.Target != "../files/small" || DataForkFormat(t, img, e.Ino) != "local" {
		t.Errorf("links/short: %+v", e)
	}
	if e := get(FixtureLongLink); len(e.Target) != 1023 || DataForkFormat(t, img, e.Ino) != "extents" {
		t.Errorf("%s: target of %d bytes", FixtureLongLink, len(e.Target))
	}
	if e := get("links/medium"); len(e.Target) != 400 {
		t.Errorf("links/medium: target of %d bytes", len(e.Target))
	}
	h := get(FixtureHardLink)
	for _, p := range []string{FixtureHardLink, "hard/b/link", "hard/c/link"} {
		if e := get(p); e.Ino != h.Ino || e.Nlink != 3 {
			t.Errorf("%s: ino %d nlink %d, want ino %d nlink 3", p, e.Ino, e.Nlink, h.Ino)
		}
	}
	get(FixtureDeepFile)
	if e := get("empty"); e.Type != TypeDir || e.Nlink != 2 {
		t.Errorf("empty: %+v", e)
	}

	// Extended attributes.
	attrFormats := map[string]string{}
	for _, p := range []string{FixtureXattrSF, FixtureXattrLeaf, FixtureXattrNode, FixtureXattrLocal, FixtureXattrRmt, "xattr/dir"} {
		attrFormats[p] = AttrFormat(t, img, get(p).Ino)
	}
	t.Logf("%s: attribute fork formats: %v", v.Name, attrFormats)
	if attrFormats[FixtureXattrSF] != "shortform" || attrFormats[FixtureXattrNode] != "node" {
		t.Errorf("attribute formats: %v", attrFormats)
	}
	if v.Name == "default" && attrFormats[FixtureXattrLeaf] != "leaf" {
		t.Errorf("%s is %s, want leaf", FixtureXattrLeaf, attrFormats[FixtureXattrLeaf])
	}
	if n := len(get(FixtureXattrLeaf).Xattrs); n != spec.LeafXattrs+1 {
		t.Errorf("%s has %d xattrs", FixtureXattrLeaf, n)
	}
	if n := len(get(FixtureXattrNode).Xattrs); n != spec.NodeXattrs {
		t.Errorf("%s has %d xattrs", FixtureXattrNode, n)
	}
	if n := len(get(FixtureXattrLocal).Xattrs["user.v3000"]); n != 3000 {
		t.Errorf("user.v3000 has %d bytes", n)
	}
	for _, size := range spec.RemoteXattrSizes {
		if n := len(get(FixtureXattrRmt).Xattrs[fmt.Sprintf("user.remote-%d", size)]); n != size {
			t.Errorf("user.remote-%d has %d bytes", size, n)
		}
	}
	ns := get("xattr/ns").Xattrs
	if v, ok := ns["user.empty"]; !ok || v != "" || ns["trusted.t"] != "trusted value" || ns["security.s"] != "security value" {
		t.Errorf("xattr/ns: %q", ns)
	}
	if x := get("xattr/dir").Xattrs; len(x) != 2 {
		t.Errorf("xattr/dir: %q", x)
	}
	if x := get("links/xattr").Xattrs; x["trusted.symlink"] == "" {
		t.Errorf("links/xattr: %q", x)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
