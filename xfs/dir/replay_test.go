package dir_test

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestKernelReplay has the kernel create, unlink, rename over and rmdir
// names in a directory, replays the same operations with the same inode
// numbers through this package on a fork.Mem, and requires the two
// directories to be identical block by block: same format at every
// checkpoint, same entry offsets, free regions and bestfree tables, same
// leaf arrays with their stale entries, same bests, free-index blocks,
// da-btree nodes and sibling links (dir.Dump). Only disk addresses, CRCs,
// LSNs and bytes outside any structure may differ.
func TestKernelReplay(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("needs kernel mounts")
	}
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolMount)
	cases := []struct {
		name   string
		opts   []string
		phases []int // entry counts to reach, a checkpoint after each
	}{
		{"default", nil, []int{8, 60, 400, 2500, -1, 120, 0}},
		{"b1k", []string{"-b", "size=1024"}, []int{10, 200, 6000, -1, 300, 0}},
		{"n16k", []string{"-n", "size=16384"}, []int{9, 300, 3000, -1, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newReplay(t, c.opts)
			for _, target := range c.phases {
				r.phase(target)
				r.compare(fmt.Sprintf("after phase to %d entries", target))
			}
		})
	}
}

type replay struct {
	t       *testing.T
	img     string
	mnt     string
	dpath   string // the directory under test, relative to the mount
	dirIno  format.Ino
	mem     *fork.Mem
	rng     *rand.Rand
	names   []string
	index   map[string]int
	family  []string
	ops     int
	tmpSeq  int
	subdirs map[string]bool
	short   bool // names of 1 to 12 bytes only
}

func newReplay(t *testing.T, opts []string) *replay {
	r := &replay{t: t, img: filepath.Join(t.TempDir(), "replay.img"), rng: rand.New(rand.NewSource(11)),
		index: map[string]int{}, subdirs: map[string]bool{}, dpath: "d"}
	oracle.Mkfs(t, r.img, 256<<20, opts...)
	r.mnt = oracle.Mount(t, r.img, false)
	for _, d := range []string{"d", "tmp"} {
		if err := os.Mkdir(filepath.Join(r.mnt, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.dirIno = format.Ino(statIno(t, filepath.Join(r.mnt, "d")))
	root := format.Ino(statIno(t, r.mnt))
	oracle.Unmount(t, r.mnt)
	r.mnt = ""
	im := openImage(t, r.img)
	fk, err := im.fork(r.dirIno)
	if err != nil {
		t.Fatal(err)
	}
	space := fk.core.DataForkSize(im.g.InodeSize)
	t.Logf("directory inode %d, %d-byte data fork", r.dirIno, space)
	r.mem = fork.NewMem(im.g, r.dirIno, space)
	r.mem.Begin()
	if err := dir.Init(r.mem, root); err != nil {
		t.Fatal(err)
	}
	r.mem.Commit()
	r.compare("after mkdir")
	r.mnt = oracle.Mount(t, r.img, false)
	return r
}

func statIno(t *testing.T, p string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// name makes a valid file name; families of names sharing one hash are
// used once the directory is past short form (the kernel sorts equal
// hashes with an unstable sort when leaving short form).
func (r *replay) name() string {
	if len(r.family) > 0 && r.rng.Intn(2) == 0 {
		n := r.family[len(r.family)-1]
		r.family = r.family[:len(r.family)-1]
		if _, taken := r.index[n]; !taken {
			return n
		}
	}
	for {
		n := 1 + r.rng.Intn(255)
		if r.short {
			n = 1 + r.rng.Intn(12)
		} else if r.rng.Intn(2) == 0 {
			n = 1 + r.rng.Intn(30)
		}
		b := make([]byte, n)
		for i := range b {
			for b[i] == 0 || b[i] == '/' {
				b[i] = byte(r.rng.Intn(256))
			}
		}
		s := string(b)
		if _, taken := r.index[s]; !taken && s != "." && s != ".." {
			if len(r.names) > 150 && len(r.family) == 0 && n >= 12 && r.rng.Intn(300) == 0 {
				for _, f := range collide(r.rng, b, 60+r.rng.Intn(200))[1:] {
					r.family = append(r.family, string(f))
				}
			}
			return s
		}
	}
}

func (r *replay) add(name string) {
	t := r.t
	p := filepath.Join(r.mnt, r.dpath, name)
	ft := uint8(format.FTReg)
	if r.rng.Intn(20) == 0 {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatalf("op %d: mkdir %q: %v", r.ops, name, err)
		}
		ft = format.FTDir
		r.subdirs[name] = true
	} else {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatalf("op %d: create %q: %v", r.ops, name, err)
		}
		f.Close()
	}
	ino := format.Ino(statIno(t, p))
	r.mem.Begin()
	if err := dir.Add(r.mem, []byte(name), ino, ft); err != nil {
		t.Fatalf("op %d: add %q: %v", r.ops, name, err)
	}
	r.mem.Commit()
	r.index[name] = len(r.names)
	r.names = append(r.names, name)
}

func (r *replay) remove(name string) {
	t := r.t
	if err := os.Remove(filepath.Join(r.mnt, r.dpath, name)); err != nil {
		t.Fatalf("op %d: remove %q: %v", r.ops, name, err)
	}
	r.mem.Begin()
	if _, err := dir.Remove(r.mem, []byte(name)); err != nil {
		t.Fatalf("op %d: remove %q: %v", r.ops, name, err)
	}
	r.mem.Commit()
	i := r.index[name]
	last := r.names[len(r.names)-1]
	r.names[i], r.index[last] = last, i
	r.names = r.names[:len(r.names)-1]
	delete(r.index, name)
	delete(r.subdirs, name)
}

// replace renames a new file from another directory over name.
func (r *replay) replace(name string) {
	t := r.t
	if r.subdirs[name] {
		return // renaming a file over a directory fails
	}
	r.tmpSeq++
	src := filepath.Join(r.mnt, "tmp", fmt.Sprint(r.tmpSeq))
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	ino := format.Ino(statIno(t, src))
	if err := os.Rename(src, filepath.Join(r.mnt, r.dpath, name)); err != nil {
		t.Fatalf("op %d: rename over %q: %v", r.ops, name, err)
	}
	r.mem.Begin()
	if _, err := dir.Replace(r.mem, []byte(name), ino, format.FTReg); err != nil {
		t.Fatalf("op %d: replace %q: %v", r.ops, name, err)
	}
	r.mem.Commit()
}

// phase grows or shrinks the directory to target entries with a mix of
// operations; -1 means 3,000 operations of churn at the current size.
func (r *replay) phase(target int) {
	churn := 0
	if target < 0 {
		churn, target = 3000, len(r.names)
	}
	for churn > 0 || len(r.names) != target {
		r.ops++
		churn--
		grow := len(r.names) < target || churn > 0 && r.rng.Intn(2) == 0
		switch x := r.rng.Intn(100); {
		case x < 5 && len(r.names) > 0:
			r.replace(r.names[r.rng.Intn(len(r.names))])
		case grow:
			r.add(r.name())
		case len(r.names) > 0:
			r.remove(r.names[r.rng.Intn(len(r.names))])
		}
	}
}

// compare unmounts the kernel's filesystem and requires its directory to
// dump exactly like the replica, then mounts it again.
func (r *replay) compare(when string) {
	t := r.t
	if r.mnt != "" {
		oracle.Unmount(t, r.mnt)
	}
	im := openImage(t, r.img)
	fk, err := im.fork(r.dirIno)
	if err != nil {
		t.Fatal(err)
	}
	if err := dir.Check(fk); err != nil {
		t.Fatalf("%s: kernel directory: %v", when, err)
	}
	if err := dir.Check(r.mem); err != nil {
		t.Fatalf("%s: replica: %v", when, err)
	}
	kd, err := dir.Dump(fk)
	if err != nil {
		t.Fatal(err)
	}
	md, err := dir.Dump(r.mem)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < max(len(kd), len(md)); i++ {
		var k, m string
		if i < len(kd) {
			k = kd[i]
		}
		if i < len(md) {
			m = md[i]
		}
		if k != m {
			if f := strings.Fields(k); len(f) == 2 && strings.HasPrefix(f[0], "0x") {
				t.Logf("hash %s per leaf: kernel %v replica %v", f[0], runPerLeaf(kd, f[0]), runPerLeaf(md, f[0]))
			}
			t.Fatalf("%s (op %d, %d entries): directories differ at line %d:\nkernel:\n%s\nreplica:\n%s", when, r.ops, len(r.names), i,
				dumpBlockAt(kd, i), dumpBlockAt(md, i))
		}
	}
	t.Logf("%s: %d entries, %s, %d dump lines identical", when, len(r.names), kd[0], len(kd))
	if r.mnt != "" {
		r.mnt = oracle.Mount(t, r.img, false)
	}
}

// runPerLeaf counts the leaf entries of hash in each leaf block.
func runPerLeaf(d []string, hash string) []string {
	var out []string
	cur, n := "", 0
	flush := func() {
		if n > 0 {
			out = append(out, fmt.Sprintf("%s:%d", cur, n))
		}
		n = 0
	}
	for _, l := range d {
		if !strings.HasPrefix(l, " ") {
			flush()
			f := strings.Fields(l)
			cur = f[0] + f[1]
			if len(f) > 9 {
				cur += fmt.Sprintf("(count %s forw %s back %s)", f[9], f[5], f[7])
			}
			continue
		}
		if strings.HasPrefix(l, "  "+hash+" ") {
			n++
			if n <= 3 {
				cur += " " + strings.Fields(l)[1]
			}
		}
	}
	flush()
	return out
}

// dumpBlockAt returns the lines of the block that dump line i belongs to.
func dumpBlockAt(d []string, i int) string {
	if i >= len(d) {
		return "(end)"
	}
	hdr := i
	for hdr > 0 && strings.HasPrefix(d[hdr], " ") {
		hdr--
	}
	var b strings.Builder
	b.WriteString(d[hdr] + "\n")
	for j := max(hdr+1, i-4); j < min(len(d), i+12); j++ {
		if j == i {
			b.WriteString("=> ")
		}
		line := d[j]
		if len(line) > 60 {
			line = line[:60] + "..."
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// TestKernelThresholds has the kernel fill directories with 15-character
// names ("obj000000000001", ...) up to both sides of each conversion and
// requires this package to reach the same format at the same counts: with
// the kernel's 192-byte data fork, 8 entries fit short form and the 9th
// makes a block; the 100th entry a leaf directory and the 501st a node
// directory.
func TestKernelThresholds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("needs kernel mounts")
	}
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolMount)
	want := map[int]dir.Form{8: dir.ShortForm, 9: dir.BlockForm, 99: dir.BlockForm, 100: dir.LeafForm, 500: dir.LeafForm, 501: dir.NodeForm}
	img := filepath.Join(t.TempDir(), "thresholds.img")
	oracle.Mkfs(t, img, 128<<20)
	mnt := oracle.Mount(t, img, false)
	inos := map[int][]format.Ino{}
	dirIno := map[int]format.Ino{}
	root := format.Ino(statIno(t, mnt))
	for n := range want {
		d := filepath.Join(mnt, fmt.Sprintf("n%d", n))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirIno[n] = format.Ino(statIno(t, d))
		for i := 1; i <= n; i++ {
			p := filepath.Join(d, fmt.Sprintf("obj%012d", i))
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			inos[n] = append(inos[n], format.Ino(statIno(t, p)))
		}
	}
	oracle.Unmount(t, mnt)
	im := openImage(t, img)
	for n, form := range want {
		fk, err := im.fork(dirIno[n])
		if err != nil {
			t.Fatal(err)
		}
		kf, err := dir.GetForm(fk)
		if err != nil {
			t.Fatal(err)
		}
		mem := fork.NewMem(im.g, dirIno[n], fk.core.DataForkSize(im.g.InodeSize))
		mem.Begin()
		if err := dir.Init(mem, root); err != nil {
			t.Fatal(err)
		}
		for i, ino := range inos[n] {
			if err := dir.Add(mem, []byte(fmt.Sprintf("obj%012d", i+1)), ino, format.FTReg); err != nil {
				t.Fatal(err)
			}
		}
		mem.Commit()
		mf, err := dir.GetForm(mem)
		if err != nil {
			t.Fatal(err)
		}
		if kf != form || mf != form {
			t.Errorf("%d entries: kernel made %v, we made %v, want %v", n, kf, mf, form)
		}
	}
}

// TestKernelReplayWide replays, like TestKernelReplay, operations that mix
// inode numbers below and above 2^32 in one directory: on a sparse 3 TiB
// image with 1 TiB AGs the kernel puts the third AG's inodes above 2^32.
// Hard links bring wide and narrow inodes into the directory, renames
// over names switch entries between them, and moving the directory
// between a narrow and a wide parent changes "..": short-form directories
// widen and narrow (i8count), and convert to block form where the kernel
// does.
func TestKernelReplayWide(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("needs kernel mounts")
	}
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolMount)
	r := &replay{t: t, img: filepath.Join(t.TempDir(), "wide.img"), rng: rand.New(rand.NewSource(13)),
		index: map[string]int{}, subdirs: map[string]bool{}, short: true}
	oracle.Mkfs(t, r.img, 3<<40, "-K", "-d", "agsize=268435455b", "-l", "size=64m")
	r.mnt = oracle.Mount(t, r.img, false)
	// New directories rotate over the AGs: find a narrow and a wide one.
	var narrow, wide string
	for i := 0; i < 6 && (narrow == "" || wide == ""); i++ {
		p := fmt.Sprintf("p%d", i)
		if err := os.Mkdir(filepath.Join(r.mnt, p), 0o755); err != nil {
			t.Fatal(err)
		}
		if statIno(t, filepath.Join(r.mnt, p)) > 1<<32-1 {
			wide = p
		} else {
			narrow = p
		}
	}
	if narrow == "" || wide == "" {
		t.Skip("the kernel gave no directory a wide inode number")
	}
	// Files to hard-link into the directory under test, from both AGs.
	var pool []string
	for _, p := range []string{narrow, wide} {
		for i := 0; i < 40; i++ {
			f := filepath.Join(p, fmt.Sprintf("f%d", i))
			if err := os.WriteFile(filepath.Join(r.mnt, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			pool = append(pool, f)
		}
	}
	if err := os.Mkdir(filepath.Join(r.mnt, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.dpath = filepath.Join(narrow, "d")
	if err := os.Mkdir(filepath.Join(r.mnt, r.dpath), 0o755); err != nil {
		t.Fatal(err)
	}
	r.dirIno = format.Ino(statIno(t, filepath.Join(r.mnt, r.dpath)))
	parent := map[string]format.Ino{narrow: format.Ino(statIno(t, filepath.Join(r.mnt, narrow))), wide: format.Ino(statIno(t, filepath.Join(r.mnt, wide)))}
	oracle.Unmount(t, r.mnt)
	r.mnt = ""
	im := openImage(t, r.img)
	fk, err := im.fork(r.dirIno)
	if err != nil {
		t.Fatal(err)
	}
	r.mem = fork.NewMem(im.g, r.dirIno, fk.core.DataForkSize(im.g.InodeSize))
	r.mem.Begin()
	if err := dir.Init(r.mem, parent[narrow]); err != nil {
		t.Fatal(err)
	}
	r.mem.Commit()
	r.compare("after mkdir")
	r.mnt = oracle.Mount(t, r.img, false)
	t.Logf("directory inode %d; parents %v", r.dirIno, parent)

	link := func() {
		src := pool[r.rng.Intn(len(pool))]
		name := r.name()
		if err := os.Link(filepath.Join(r.mnt, src), filepath.Join(r.mnt, r.dpath, name)); err != nil {
			t.Fatalf("link %s: %v", src, err)
		}
		ino := format.Ino(statIno(t, filepath.Join(r.mnt, src)))
		r.mem.Begin()
		if err := dir.Add(r.mem, []byte(name), ino, format.FTReg); err != nil {
			t.Fatal(err)
		}
		r.mem.Commit()
		r.index[name] = len(r.names)
		r.names = append(r.names, name)
	}
	move := func() {
		from, to := narrow, wide
		if strings.HasPrefix(r.dpath, wide+"/") {
			from, to = wide, narrow
		}
		dst := filepath.Join(to, "d")
		if err := os.Rename(filepath.Join(r.mnt, r.dpath), filepath.Join(r.mnt, dst)); err != nil {
			t.Fatalf("move from %s: %v", from, err)
		}
		r.dpath = dst
		r.mem.Begin()
		if err := dir.SetParent(r.mem, parent[to]); err != nil {
			t.Fatal(err)
		}
		r.mem.Commit()
	}
	for _, target := range []int{4, 9, 3, 11, 0, 7, 14, 2, 200, 10, 0} {
		for len(r.names) != target || r.rng.Intn(4) != 0 {
			r.ops++
			switch x := r.rng.Intn(100); {
			case x < 8:
				move()
			case x < 18 && len(r.names) > 0:
				r.replace(r.names[r.rng.Intn(len(r.names))])
			case len(r.names) < target:
				if r.rng.Intn(2) == 0 {
					link()
				} else {
					r.add(r.name())
				}
			case len(r.names) > 0:
				r.remove(r.names[r.rng.Intn(len(r.names))])
			}
		}
		r.compare(fmt.Sprintf("at %d entries under %s", target, r.dpath))
	}
}
