package mkfs

import (
	"io"

	"bytes"
	"crypto/rand"
	"fmt"
	"github.com/xfs3/xfs3/xfs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// oracleCase is one configuration formatted both by us and by mkfs.xfs.
type oracleCase struct {
	name string
	size int64
	o    Options
	args []string // the same options for mkfs.xfs
}

func (c oracleCase) options() Options {
	o := c.o
	o.Size = c.size
	return o
}

var oracleCases = []oracleCase{
	{"64MiB", 64 << 20, Options{}, nil},
	{"512MiB-b1024", 512 << 20, Options{BlockSize: 1024}, []string{"-b", "size=1024"}},
	{"512MiB-b65536", 512 << 20, Options{BlockSize: 65536}, []string{"-b", "size=65536"}},
	{"4GiB", 4 << 30, Options{}, nil},
	{"1GiB-i1024", 1 << 30, Options{InodeSize: 1024}, []string{"-i", "size=1024"}},
	{"1GiB-i2048", 1 << 30, Options{InodeSize: 2048}, []string{"-i", "size=2048"}},
	{"1GiB-agcount7", 1 << 30, Options{AgCount: 7}, []string{"-d", "agcount=7"}},
	{"1GiB-n16k", 1 << 30, Options{DirBlockSize: 16384}, []string{"-n", "size=16384"}},
	{"1GiB-s4096", 1 << 30, Options{SectorSize: 4096}, []string{"-s", "size=4096"}},
	{"2GiB-b65536-i2048-s4096", 2 << 30, Options{BlockSize: 65536, InodeSize: 2048, SectorSize: 4096},
		[]string{"-b", "size=65536", "-i", "size=2048", "-s", "size=4096"}},
	{"1TiB", 1 << 40, Options{}, nil},
}

// TestMatchesMkfs formats each case with Format and with mkfs.xfs, both
// with the default reflink=1 and with NoReflink against -m reflink=0,
// compares every superblock, AG header, btree root and inode of the first
// chunk field by field, and then lets xfs_repair and the kernel judge our
// image.
func TestMatchesMkfs(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolDB, oracle.ToolRepair)
	for _, c := range oracleCases {
		for _, noReflink := range []bool{false, true} {
			c := c
			c.o.NoReflink = noReflink
			name := c.name
			if noReflink {
				name += "-noreflink"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				checkAgainstMkfs(t, dir, c)
			})
		}
	}
}

// TestFormat64TiB formats a 64 TiB sparse volume. The host filesystem of
// the test directory may not hold such a file (ext4 stops at 16 TiB), so
// the volume lives in a small XFS filesystem mounted for the test.
func TestFormat64TiB(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolDB, oracle.ToolRepair, oracle.ToolMount)
	host := filepath.Join(t.TempDir(), "host.img")
	// mkfs.xfs's reference image allocates (unwritten) space for its 2 GiB
	// log, so the host needs a little more than that.
	oracle.Mkfs(t, host, 4<<30)
	hostDir := oracle.Mount(t, host, false)
	checkAgainstMkfs(t, hostDir, oracleCase{name: "64TiB", size: 64 << 40})
}

// reflinkArgs is the mkfs.xfs option that matches o.NoReflink.
func reflinkArgs(o Options) []string {
	if o.NoReflink {
		return []string{"-m", "reflink=0"}
	}
	return []string{"-m", "reflink=1"}
}

func checkAgainstMkfs(t *testing.T, dir string, c oracleCase) {
	t.Helper()
	ours := filepath.Join(dir, "ours.img")
	ref := filepath.Join(dir, "ref.img")
	start := time.Now()
	res, err := Format(ours, c.options())
	if err != nil {
		t.Fatalf("Format: %v", err)
	}
	t.Logf("formatted %s in %v: %s", c.name, time.Since(start).Round(time.Millisecond), res)
	oracle.Mkfs(t, ref, c.size, append(reflinkArgs(c.o), c.args...)...)
	defer os.Remove(ref)

	refDump := dumpMetadata(t, ref, res)
	ourDump := dumpMetadata(t, ours, res)
	if got, want := refDump["AG0/refcountbt/magic"], map[bool]string{true: "0x52334643"}[res.Reflink]; got != want {
		t.Errorf("mkfs.xfs's refcount btree root in AG 0 has magic %q, want %q", got, want)
	}
	if diffs := diffDumps(refDump, ourDump); len(diffs) > 0 {
		t.Errorf("%d fields differ from mkfs.xfs (ref vs ours):\n%s", len(diffs), strings.Join(diffs, "\n"))
	}
	for k, v := range ourDump {
		if strings.HasSuffix(k, "crc") && !strings.Contains(v, "(correct)") {
			t.Errorf("%s = %s", k, v)
		}
	}
	oracle.Repair(t, ours)
	checkCleanLog(t, ours)
	kernelRoundTrip(t, ours)
}

// agsToCompare picks the AGs whose headers are compared: all of them on
// small filesystems, otherwise the ones that can differ from the rest (the
// first, the log AG and its neighbours, the middle and last superblock
// copies that carry the root inode) plus a few plain ones.
func agsToCompare(r *Result) []uint32 {
	if r.AgCount <= 16 {
		var all []uint32
		for ag := uint32(0); ag < r.AgCount; ag++ {
			all = append(all, ag)
		}
		return all
	}
	set := map[uint32]bool{}
	for _, ag := range []uint32{0, 1, 2, r.LogAg - 1, r.LogAg, r.LogAg + 1, (r.AgCount - 1) / 2, r.AgCount - 2, r.AgCount - 1} {
		set[ag] = true
	}
	var ags []uint32
	for ag := range set {
		ags = append(ags, ag)
	}
	sort.Slice(ags, func(i, j int) bool { return ags[i] < ags[j] })
	return ags
}

// dumpMetadata prints the AG headers, btree roots and first inode chunk
// with xfs_db and returns them as "AG1/agf/freeblks" -> value.
func dumpMetadata(t *testing.T, img string, r *Result) map[string]string {
	t.Helper()
	m := map[string]string{}
	sections := []string{"sb", "agf", "agi", "agfl", "bnobt", "cntbt", "inobt", "finobt"}
	if r.Reflink {
		sections = append(sections, "refcountbt")
	}
	for _, ag := range agsToCompare(r) {
		n := fmt.Sprint(ag)
		cmds := []string{"sb " + n, "print", "agf " + n, "print", "agi " + n, "print", "agfl " + n, "print",
			"agf " + n, "addr bnoroot", "print", "agf " + n, "addr cntroot", "print",
			"agi " + n, "addr root", "print", "agi " + n, "addr free_root", "print"}
		if r.Reflink {
			cmds = append(cmds, "agf "+n, "addr refcntroot", "print")
		}
		out := oracle.DB(t, img, cmds...)
		parseDB(m, out, "AG"+n, sections, func(line string) bool {
			return strings.HasPrefix(line, "magicnum = ") || strings.HasPrefix(line, "magic = ")
		})
	}
	inodes := 64
	if r.BlockSize/r.InodeSize > inodes {
		inodes = r.BlockSize / r.InodeSize
	}
	var cmds, names []string
	for i := 0; i < inodes; i++ {
		cmds = append(cmds, fmt.Sprintf("inode %d", uint64(r.RootIno)+uint64(i)), "print")
		names = append(names, fmt.Sprintf("ino+%d", i))
	}
	parseDB(m, oracle.DB(t, img, cmds...), "chunk", names, func(line string) bool {
		return strings.HasPrefix(line, "core.magic = ")
	})
	return m
}

// parseDB adds xfs_db "field = value" lines to m under prefix/section/,
// moving to the next section name whenever starts(line) is true. Lines
// without " = " continue the previous field (btree records).
func parseDB(m map[string]string, out, prefix string, sections []string, starts func(string) bool) {
	sec := -1
	var last string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if starts(line) {
			sec++
		}
		name := "?"
		if sec >= 0 && sec < len(sections) {
			name = sections[sec]
		}
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			if last != "" {
				m[last] += " " + line
			} else {
				m[prefix+"/"+name+"/!"] += line
			}
			continue
		}
		last = prefix + "/" + name + "/" + k
		m[last] = v
	}
}

// ignored reports fields that legitimately differ between two formats:
// the UUID, checksums over different UUIDs, and creation times.
func ignored(key string) bool {
	f := key[strings.LastIndex(key, "/")+1:]
	for _, s := range []string{"uuid", "crc", "time.", "atime", "mtime", "ctime", "crtime", "core.gen"} {
		if strings.Contains(f, s) {
			return true
		}
	}
	return false
}

func diffDumps(ref, ours map[string]string) []string {
	var d []string
	for k, v := range ref {
		if ignored(k) {
			continue
		}
		if w, ok := ours[k]; !ok {
			d = append(d, fmt.Sprintf("%s: %q vs missing", k, v))
		} else if w != v {
			d = append(d, fmt.Sprintf("%s: %q vs %q", k, v, w))
		}
	}
	for k, w := range ours {
		if _, ok := ref[k]; !ok && !ignored(k) {
			d = append(d, fmt.Sprintf("%s: missing vs %q", k, w))
		}
	}
	sort.Strings(d)
	if len(d) > 40 {
		d = append(d[:40], "...")
	}
	return d
}

// checkCleanLog asks xfs_logprint whether the log is clean.
func checkCleanLog(t *testing.T, img string) {
	t.Helper()
	oracle.Require(t, "xfs_logprint")
	path, err := exec.LookPath("xfs_logprint")
	if err != nil {
		path = "/usr/sbin/xfs_logprint"
	}
	out, err := exec.Command(path, "-t", img).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("<CLEAN>")) {
		t.Errorf("xfs_logprint -t: %v\n%s", err, out)
	}
}

// kernelRoundTrip mounts the image read-write, writes a few MiB, a
// directory and an xattr, unmounts, checks with xfs_repair, then mounts
// read-only and reads everything back.
func kernelRoundTrip(t *testing.T, img string) {
	t.Helper()
	oracle.Require(t, oracle.ToolMount, oracle.ToolRepair)
	data := make([]byte, 3<<20+1234)
	rand.Read(data)
	mnt := oracle.Mount(t, img, false)
	if err := os.WriteFile(filepath.Join(mnt, "object"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(mnt, "bucket", "prefix")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setxattr(sub, "user.xfs3", []byte("meta"), 0); err != nil {
		t.Fatal(err)
	}
	oracle.Unmount(t, mnt)
	oracle.Repair(t, img)

	mnt = oracle.Mount(t, img, true)
	got, err := os.ReadFile(filepath.Join(mnt, "object"))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("file written by the kernel did not survive: %v", err)
	}
	buf := make([]byte, 16)
	n, err := syscall.Getxattr(filepath.Join(mnt, "bucket", "prefix"), "user.xfs3", buf)
	if err != nil {
		t.Errorf("xattr did not survive: %v", err)
	} else if string(buf[:n]) != "meta" {
		t.Errorf("xattr reads %q after remount", buf[:n])
	}
	oracle.Unmount(t, mnt)
	engineReadBack(t, img, data)
}

// engineReadBack reads what kernelRoundTrip wrote through our own engine.
func engineReadBack(t *testing.T, img string, data []byte) {
	t.Helper()
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("engine open after kernel writes: %v", err)
	}
	defer v.Close()
	ino, err := v.Names().LookupPath("object", false)
	if err != nil {
		t.Fatalf("engine lookup: %v", err)
	}
	got := make([]byte, len(data))
	if n, err := v.Files().ReadAt(ino, got, 0); n != len(data) || (err != nil && err != io.EOF) || !bytes.Equal(got, data) {
		t.Errorf("engine read of the kernel's file: %d bytes, %v, equal %v", n, err, bytes.Equal(got, data))
	}
	dir, err := v.Names().LookupPath("bucket/prefix", false)
	if err != nil {
		t.Fatalf("engine lookup: %v", err)
	}
	if val, err := v.Xattrs().Get(dir, "user.xfs3"); err != nil || string(val) != "meta" {
		t.Errorf("engine xattr read: %q, %v", val, err)
	}
}

// TestFormatOverRandomBytes formats a file full of random bytes.
func TestFormatOverRandomBytes(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	img := filepath.Join(t.TempDir(), "junk.img")
	junk := make([]byte, 80<<20)
	rand.Read(junk)
	if err := os.WriteFile(img, junk, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Format(img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The whole log must read as zeros apart from its first record.
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	logBuf := make([]byte, int64(res.LogBlocks)*int64(res.BlockSize))
	if _, err := f.ReadAt(logBuf, res.LogOffset); err != nil {
		t.Fatal(err)
	}
	if i := bytes.IndexFunc(logBuf[1024:], func(r rune) bool { return r != 0 }); i >= 0 {
		t.Errorf("log byte %d is not zero after formatting over junk", 1024+i)
	}
	oracle.Repair(t, img)
	checkCleanLog(t, img)
	kernelRoundTrip(t, img)
}

// TestFormatOverOldXFS formats over an XFS image of a different geometry
// that holds files: the result is clean, empty, and none of the old
// superblock copies survive.
func TestFormatOverOldXFS(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolDB, oracle.ToolRepair, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "old.img")
	oracle.Mkfs(t, img, 256<<20, "-b", "size=1024", "-d", "agcount=9")
	old := oracle.DBSuperblock(t, img)
	mnt := oracle.Mount(t, img, false)
	for i := 0; i < 20; i++ {
		d := filepath.Join(mnt, fmt.Sprintf("dir%d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), bytes.Repeat([]byte{byte(i)}, 300<<10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	oracle.Unmount(t, mnt)

	res, err := Format(img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	checkCleanLog(t, img)

	// Old superblock copies are gone unless a new AG starts there.
	var oldAgBlocks, oldAgCount, oldBs int64
	fmt.Sscan(old["agblocks"], &oldAgBlocks)
	fmt.Sscan(old["agcount"], &oldAgCount)
	fmt.Sscan(old["blocksize"], &oldBs)
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	newAg := int64(res.AgBlocks) * int64(res.BlockSize)
	for i := int64(1); i < oldAgCount; i++ {
		off := i * oldAgBlocks * oldBs
		if off%newAg == 0 {
			continue
		}
		magic := make([]byte, 4)
		if _, err := f.ReadAt(magic, off); err != nil {
			t.Fatal(err)
		}
		if string(magic) == "XFSB" {
			t.Errorf("old superblock copy %d at byte %d survived", i, off)
		}
	}

	mnt = oracle.Mount(t, img, true)
	ents, err := os.ReadDir(mnt)
	if err != nil || len(ents) != 0 {
		t.Errorf("new root directory is not empty: %v %v", ents, err)
	}
	oracle.Unmount(t, mnt)
	kernelRoundTrip(t, img)
}
