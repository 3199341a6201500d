package xfs_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// The randomized model test of the write path: random namespace and data
// operations applied to the engine and to an in-memory model; at
// checkpoints the volume is closed, xfs_repair must be clean, the kernel
// must show exactly what the engine shows and the engine exactly the model;
// then the volume is reopened and the run goes on.
//
// XFS3_MODEL_OPS sets the number of operations (the long run), and
// XFS3_MODEL_SEED the seed.

type mnode struct {
	ino    format.Ino
	dir    map[string]*mnode // directories
	data   []byte            // files
	target string            // symlinks
	mode   uint32
	nlink  uint32
	xattrs map[string]string
	// reflinked files may share blocks (a clone's source or copy): a
	// change that would write into shared blocks is refused (ErrShared).
	reflinked bool
}

func (n *mnode) typ() string {
	switch {
	case n.dir != nil:
		return oracle.TypeDir
	case n.target != "":
		return oracle.TypeSymlink
	}
	return oracle.TypeFile
}

type model struct {
	root *mnode
	hot  *mnode // a file that collects many attributes (node form)
	rng  *rand.Rand
	v    *xfs.Volume
	t    *testing.T
	op   int
	// onFail, when set, sees an operation's error first (the power-cut
	// test turns errors after the cut into a panic it recovers).
	onFail func(err error)
	// bulk holds the names (parent inode/name) the operation under way
	// removes in one UnlinkFiles call; nil for any other operation.
	bulk map[string]bool
	// arng, when set, draws Namespace.Apply operations, from a stream of
	// their own: the other operations of a seed stay those it drew
	// before Apply existed (the power-cut regression seeds run without).
	arng *rand.Rand
	// post is the whole state an atomic operation under way (Apply)
	// leaves: a cut leaves that or the state before, nothing between.
	post *oracle.Snapshot
	// applied and refused count the Apply calls that changed the model
	// and those that had to fail; clones the files made as clones.
	applied, refused, clones int
	// makers counts the applied calls that made inodes (NameOp.New).
	makers int
	// cloneHeavy makes a third of the operations (drawn from arng)
	// clones of a file of the directory at hand.
	cloneHeavy bool
}

func envInt(name string, def int) int {
	if s := os.Getenv(name); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return def
}

// TestWriteModel runs the model with 4 KiB blocks and deferred inode
// inactivation (gc.PerCPU), with 1 KiB blocks and inactivation inside the
// call, and a shorter run with gc.Sweep.
func TestWriteModel(t *testing.T) {
	ops := envInt("XFS3_MODEL_OPS", 3000)
	seed := int64(envInt("XFS3_MODEL_SEED", 1))
	for _, c := range []struct {
		o     mkfs.Options
		gc    gc.Mode
		ops   int
		cache int // xfs.Options.CacheBytes
		name  string
	}{
		{mkfs.Options{}, gc.PerCPU, ops, 0, "bs4096"},
		{mkfs.Options{BlockSize: 1024}, gc.Sync, ops, 0, "bs1024"},
		{mkfs.Options{}, gc.Sweep, ops / 6, 0, "bs4096-sweep"},
		// Caches of a few dozen blocks and inodes: eviction and reclaim
		// all the time.
		{mkfs.Options{}, gc.PerCPU, ops / 3, 256 << 10, "bs4096-tinycache"},
	} {
		t.Run(c.name, func(t *testing.T) { runWriteModel(t, c.o, c.gc, c.cache, seed, c.ops) })
	}
}

func runWriteModel(t *testing.T, o mkfs.Options, mode gc.Mode, cacheBytes int, seed int64, ops int) {
	t.Logf("seed %d, %d operations (XFS3_MODEL_SEED / XFS3_MODEL_OPS)", seed, ops)
	img := filepath.Join(t.TempDir(), "model.img")
	o.Size = 1 << 30
	if _, err := mkfs.Format(img, o); err != nil {
		t.Fatal(err)
	}
	m := &model{rng: rand.New(rand.NewSource(seed)), arng: rand.New(rand.NewSource(^seed)), t: t}
	var collector *gc.InodeGC
	open := func() {
		v, err := xfs.Open(img, xfs.Options{CacheBytes: cacheBytes})
		if err != nil {
			t.Fatalf("seed %d: open: %v", seed, err)
		}
		m.v = v
		if collector, err = gc.Start(v, gc.Options{Mode: mode}); err != nil {
			t.Fatal(err)
		}
	}
	closeVolume := func() error {
		if err := collector.Close(); err != nil {
			return err
		}
		t.Logf("op %d: gc %+v", m.op, collector.Stats())
		return m.v.Close()
	}
	open()
	m.root = &mnode{ino: m.v.Root(), dir: map[string]*mnode{}, mode: 0o755, nlink: 2}
	checkpoints := 3
	for m.op = 0; m.op < ops; m.op++ {
		m.step()
		if os.Getenv("XFS3_MODEL_PARANOID") != "" {
			m.checkEngine()
		}
		if (m.op+1)%(ops/checkpoints+1) == 0 || m.op == ops-1 {
			m.checkEngine()
			if err := closeVolume(); err != nil {
				t.Fatalf("seed %d op %d: close: %v", seed, m.op, err)
			}
			m.checkOracles(img)
			open()
		}
	}
	t.Logf("Namespace.Apply: %d calls applied (%d making inodes), %d refused as they should be; %d files cloned", m.applied, m.makers, m.refused, m.clones)
	if m.hot != nil && m.hot.nlink > 0 {
		st, _ := m.v.Stat(m.hot.ino)
		t.Logf("hot file: %d attributes, attr fork %s with %d extents", len(m.hot.xattrs), st.AttrFormat, st.AttrExtents)
	}
	closeVolume()
}

// pick returns a random directory of the model and its path.
func (m *model) pickDir() (*mnode, string) {
	cur, p := m.root, "."
	for depth := 0; depth < 4 && m.rng.Intn(3) > 0; depth++ {
		var subs []string
		for name, n := range cur.dir {
			if n.dir != nil {
				subs = append(subs, name)
			}
		}
		if len(subs) == 0 {
			break
		}
		sort.Strings(subs)
		name := subs[m.rng.Intn(len(subs))]
		cur, p = cur.dir[name], path.Join(p, name)
	}
	return cur, p
}

func (m *model) pickEntry(d *mnode) (string, *mnode) {
	if len(d.dir) == 0 {
		return "", nil
	}
	names := make([]string, 0, len(d.dir))
	for n := range d.dir {
		names = append(names, n)
	}
	sort.Strings(names)
	n := names[m.rng.Intn(len(names))]
	return n, d.dir[n]
}

func (m *model) name() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789-_."
	l := 1 + m.rng.Intn(20)
	if m.rng.Intn(20) == 0 {
		l = 100 + m.rng.Intn(156)
	}
	b := make([]byte, l)
	for i := range b {
		b[i] = letters[m.rng.Intn(len(letters))]
	}
	s := string(b)
	if s == "." || s == ".." {
		return "dot" + s
	}
	return s
}

func (m *model) fail(what string, err error) {
	m.t.Helper()
	if m.onFail != nil {
		m.onFail(err)
	}
	m.t.Fatalf("op %d %s: %v", m.op, what, err)
}

func (m *model) step() {
	m.bulk, m.post = nil, nil
	if m.arng != nil && m.arng.Intn(10) == 0 {
		m.apply()
		return
	}
	d, dp := m.pickDir()
	if m.cloneHeavy && m.arng != nil && m.arng.Intn(3) == 0 {
		m.cloneStep(d)
		return
	}
	a := xfs.Attrs{Mode: 0o644}
	switch k := m.rng.Intn(100); {
	case k < 30: // create a file with data
		name := m.name()
		// A third are made whole: data and attributes in the create's
		// own transaction (CreateFile).
		whole := m.rng.Intn(3) == 0
		var n *mnode
		var ino format.Ino
		var err error
		if whole {
			n = m.wholeFile()
			ino, err = m.v.Names().CreateFile(d.ino, name, a, n.data, xattrsOf(n))
		} else {
			n = &mnode{}
			ino, err = m.v.Names().Create(d.ino, name, a)
		}
		if _, exists := d.dir[name]; exists {
			if !errors.Is(err, xfs.ErrExist) {
				m.fail("create over an existing name", err)
			}
			return
		}
		if err != nil {
			m.fail("create "+path.Join(dp, name), err)
		}
		n.ino, n.mode, n.nlink = ino, 0o644, 1
		if m.hot == nil || m.hot.nlink == 0 {
			m.hot = n
		}
		if size := m.rng.Intn(3); size > 0 && !whole {
			n.data = make([]byte, m.rng.Intn(20000*size))
			m.rng.Read(n.data)
			if !m.clone(n, m.cloneSource()) {
				if _, err := m.v.Files().WriteAt(ino, n.data, 0); err != nil {
					m.fail("write", err)
				}
			}
		}
		d.dir[name] = n
	case k < 40:
		name := m.name()
		if _, exists := d.dir[name]; exists {
			return
		}
		// Some directories start projects (ids over two quota file
		// blocks); everything made below them is charged there, and
		// xfs_repair checks every project's count at each checkpoint.
		var project uint32
		if m.rng.Intn(4) == 0 {
			project = 1 + uint32(m.rng.Intn(40))
		}
		ino, err := m.v.Names().Mkdir(d.ino, name, xfs.Attrs{Mode: 0o755, ProjID: project})
		if err != nil {
			m.fail("mkdir", err)
		}
		d.dir[name] = &mnode{ino: ino, dir: map[string]*mnode{}, mode: 0o755, nlink: 2}
		d.nlink++
	case k < 45:
		name := m.name()
		if _, exists := d.dir[name]; exists {
			return
		}
		target := m.name()
		if m.rng.Intn(3) == 0 {
			for len(target) < 300+m.rng.Intn(700) {
				target += "/" + m.name()
			}
			target = target[:min(len(target), 1023)]
		}
		ino, err := m.v.Names().Symlink(d.ino, name, target, a)
		if err != nil {
			m.fail("symlink", err)
		}
		d.dir[name] = &mnode{ino: ino, target: target, mode: 0o777, nlink: 1}
	case k < 60: // remove something
		if m.rng.Intn(6) == 0 {
			m.unlinkFiles(d)
			return
		}
		name, n := m.pickEntry(d)
		if n == nil {
			return
		}
		if m.rng.Intn(3) == 0 {
			// The object store's removal: regular files only.
			err := m.v.Names().UnlinkFile(d.ino, name)
			switch n.typ() {
			case oracle.TypeDir:
				if !errors.Is(err, xfs.ErrIsDir) {
					m.fail("UnlinkFile of a directory", err)
				}
				return
			case oracle.TypeSymlink:
				if !errors.Is(err, xfs.ErrInvalid) {
					m.fail("UnlinkFile of a symlink", err)
				}
				return
			}
			if err != nil {
				m.fail("UnlinkFile", err)
			}
			n.nlink--
		} else if n.dir != nil {
			err := m.v.Names().Rmdir(d.ino, name)
			if len(n.dir) > 0 {
				if !errors.Is(err, xfs.ErrNotEmpty) {
					m.fail("rmdir of a non-empty directory", err)
				}
				return
			}
			if err != nil {
				m.fail("rmdir", err)
			}
			d.nlink--
		} else {
			if err := m.v.Names().Unlink(d.ino, name); err != nil {
				m.fail("unlink", err)
			}
			n.nlink--
		}
		delete(d.dir, name)
	case k < 70: // rename, maybe across directories, maybe replacing
		name, n := m.pickEntry(d)
		if n == nil {
			return
		}
		to, _ := m.pickDir()
		newName := m.name()
		if m.rng.Intn(3) == 0 {
			if nm, other := m.pickEntry(to); other != nil {
				newName = nm
			}
		}
		if n.dir != nil && m.isBelow(to, n) {
			return
		}
		old := to.dir[newName]
		err := m.v.Names().Rename(d.ino, name, to.ino, newName)
		if old == n {
			return
		}
		if old != nil {
			switch {
			case n.dir != nil && old.dir == nil:
				if !errors.Is(err, xfs.ErrNotDir) {
					m.fail("rename a dir over a file", err)
				}
				return
			case n.dir == nil && old.dir != nil:
				if !errors.Is(err, xfs.ErrIsDir) {
					m.fail("rename a file over a dir", err)
				}
				return
			case old.dir != nil && len(old.dir) > 0:
				if !errors.Is(err, xfs.ErrNotEmpty) {
					m.fail("rename over a non-empty dir", err)
				}
				return
			}
		}
		if err != nil {
			ents, rerr := m.v.Names().ReadDir(d.ino)
			st, _ := m.v.Stat(d.ino)
			m.t.Logf("readdir of source dir %d (%+v): %d entries (%v), model %d", d.ino, st, len(ents), rerr, len(d.dir))
			for _, e := range ents {
				if e.Name == name {
					m.t.Logf("readdir has %q -> %d", name, e.Ino)
				}
			}
			_, lerr := m.v.Names().Lookup(d.ino, name)
			m.t.Logf("old lookup: %v", lerr)
			m.fail(fmt.Sprintf("rename %s -> %s", name, newName), err)
		}
		if old != nil {
			if old.dir != nil {
				to.nlink--
			} else {
				old.nlink--
			}
		}
		delete(d.dir, name)
		to.dir[newName] = n
		if n.dir != nil && d != to {
			d.nlink--
			to.nlink++
		}
	case k < 75: // hard link
		_, n := m.pickEntry(d)
		if n == nil || n.dir != nil {
			return
		}
		to, _ := m.pickDir()
		newName := m.name()
		if _, exists := to.dir[newName]; exists {
			return
		}
		if err := m.v.Names().Link(n.ino, to.ino, newName); err != nil {
			m.fail("link", err)
		}
		to.dir[newName] = n
		n.nlink++
	case k < 88: // extended attributes on any kind of inode
		_, n := m.pickEntry(d)
		if n == nil {
			n = d
		}
		if m.hot != nil && m.hot.nlink > 0 && m.rng.Intn(2) == 0 {
			n = m.hot
		}
		m.xattrStep(n)
	default: // change file data
		_, n := m.pickEntry(d)
		if n == nil || n.dir != nil || n.target != "" {
			return
		}
		switch m.rng.Intn(3) {
		case 0:
			off := m.rng.Intn(len(n.data) + 8192)
			p := make([]byte, 1+m.rng.Intn(16384))
			m.rng.Read(p)
			if _, err := m.v.Files().WriteAt(n.ino, p, int64(off)); err != nil {
				if n.reflinked && errors.Is(err, xfs.ErrShared) {
					return // one chunk: nothing was written
				}
				m.fail("overwrite", err)
			}
			if off+len(p) > len(n.data) {
				n.data = append(n.data, make([]byte, off+len(p)-len(n.data))...)
			}
			copy(n.data[off:], p)
		case 1:
			size := m.rng.Intn(len(n.data) + 4096)
			if err := m.v.Files().Truncate(n.ino, int64(size)); err != nil {
				if n.reflinked && errors.Is(err, xfs.ErrShared) {
					return
				}
				m.fail("truncate", err)
			}
			if size < len(n.data) {
				n.data = n.data[:size]
			} else {
				n.data = append(n.data, make([]byte, size-len(n.data))...)
			}
		default:
			if len(n.data) == 0 {
				return
			}
			off := m.rng.Intn(len(n.data))
			l := 1 + m.rng.Intn(20000)
			if err := m.v.Files().PunchHole(n.ino, int64(off), int64(l)); err != nil {
				if n.reflinked && errors.Is(err, xfs.ErrShared) {
					return
				}
				m.fail("punch", err)
			}
			for i := off; i < off+l && i < len(n.data); i++ {
				n.data[i] = 0
			}
		}
	}
}

// placeholderIno is the first of the inode numbers the model gives the
// inodes an Apply call makes until it returns them: no inode has one, and
// a snapshot holding one is compared without inode numbers.
const placeholderIno = format.Ino(1) << 62

// apply makes one Namespace.Apply call of one to four random moves and
// removals over random names, drawn from arng, now and then after ops
// that make a file, or a directory and a file in it (NameOp.New), which
// later moves may target: valid ones change the model all together, and
// a call with an invalid op must fail with that op's error and change
// nothing.
func (m *model) apply() {
	main := m.rng
	m.rng = m.arng
	defer func() { m.rng = main }()
	type slot struct {
		d    *mnode
		name string
	}
	// The model's names as the ops so far leave them.
	names := map[slot]*mnode{}
	at := func(d *mnode, name string) *mnode {
		if n, ok := names[slot{d, name}]; ok {
			return n
		}
		return d.dir[name]
	}
	kindErr := func(n *mnode) error {
		switch n.typ() {
		case oracle.TypeDir:
			return xfs.ErrIsDir
		case oracle.TypeSymlink:
			return xfs.ErrInvalid
		}
		return nil
	}
	type move struct {
		op     xfs.NameOp
		from   *mnode // directories
		to     *mnode
		n      *mnode
		xattrs map[string]string
		made   bool // n is made by the op (New)
	}
	var ops []xfs.NameOp
	var moves []move
	var want error
	made := map[slot]bool{}
	lost := map[*mnode]uint32{} // links the moves take from files
	var madeDir *mnode
	if m.rng.Intn(3) == 0 {
		to, _ := m.pickDir()
		toIno := to.ino
		if m.rng.Intn(2) == 0 {
			madeDir = &mnode{ino: placeholderIno + format.Ino(m.op)*2, dir: map[string]*mnode{}, mode: 0o750, nlink: 2}
			mv := move{op: xfs.NameOp{ToDir: to.ino, ToName: m.name(), New: &xfs.NewInode{Attrs: xfs.Attrs{Mode: 0o750}, Dir: true}},
				to: to, n: madeDir, made: true}
			ops, moves = append(ops, mv.op), append(moves, mv)
			to, toIno = madeDir, xfs.MadeDir
		}
		n := &mnode{ino: placeholderIno + format.Ino(m.op)*2 + 1, mode: 0o640, nlink: 1, xattrs: map[string]string{"user.made": fmt.Sprint(m.op)}}
		if m.rng.Intn(2) == 0 {
			n.data = make([]byte, m.rng.Intn(20000))
			m.rng.Read(n.data)
		}
		mv := move{op: xfs.NameOp{ToDir: toIno, ToName: m.name(), New: &xfs.NewInode{Attrs: xfs.Attrs{Mode: 0o640}, Data: n.data},
			Attrs: []xfs.Xattr{{Namespace: "user", Name: "made", Value: []byte(fmt.Sprint(m.op))}}}, to: to, n: n, made: true}
		ops, moves = append(ops, mv.op), append(moves, mv)
		for _, mv := range moves {
			k := slot{mv.to, mv.op.ToName}
			if at(mv.to, mv.op.ToName) != nil {
				want = xfs.ErrExist
				break
			}
			names[k], made[k] = mv.n, true
		}
	}
	// Mostly files, so that most calls are valid; now and then any name.
	pick := func(d *mnode) (string, *mnode) {
		if m.rng.Intn(8) == 0 {
			return m.pickEntry(d)
		}
		var files []string
		for name, n := range d.dir {
			if n.typ() == oracle.TypeFile {
				files = append(files, name)
			}
		}
		if len(files) == 0 {
			return "", nil
		}
		slices.Sort(files)
		name := files[m.rng.Intn(len(files))]
		return name, d.dir[name]
	}
	for range 1 + m.rng.Intn(4) {
		d, _ := m.pickDir()
		name, n := pick(d)
		if n == nil {
			continue
		}
		if cur := at(d, name); cur != n {
			// An earlier op moved or removed it: the name now names cur.
			n = cur
		}
		mv := move{op: xfs.NameOp{Dir: d.ino, Name: name}, from: d, n: n}
		if m.rng.Intn(3) > 0 {
			to, _ := m.pickDir()
			toIno := to.ino
			if madeDir != nil && m.rng.Intn(3) == 0 {
				to, toIno = madeDir, xfs.MadeDir
			}
			toName := m.name()
			if m.rng.Intn(2) == 0 {
				if existing, other := pick(to); other != nil {
					toName = existing
				}
			}
			mv.to = to
			mv.op.ToDir, mv.op.ToName = toIno, toName
			if m.rng.Intn(2) == 0 {
				mv.xattrs = map[string]string{fmt.Sprintf("user.apply%d", m.rng.Intn(5)): fmt.Sprint(m.op)}
				for k, val := range mv.xattrs {
					ns, short, _ := strings.Cut(k, ".")
					mv.op.Attrs = append(mv.op.Attrs, xfs.Xattr{Namespace: ns, Name: short, Value: []byte(val)})
				}
			}
		}
		ops, moves = append(ops, mv.op), append(moves, mv)
		if want != nil {
			continue
		}
		switch {
		case made[slot{d, name}] || mv.to != nil && made[slot{mv.to, mv.op.ToName}]:
			want = xfs.ErrInvalid
		case n == nil:
			want = xfs.ErrNotFound
		case kindErr(n) != nil:
			want = kindErr(n)
		case mv.to == nil:
			names[slot{d, name}] = nil
			lost[n]++
		default:
			dst := at(mv.to, mv.op.ToName)
			switch {
			case dst == n:
				want = xfs.ErrInvalid
			case dst != nil && kindErr(dst) != nil:
				want = kindErr(dst)
			default:
				if dst != nil {
					lost[dst]++
				}
				names[slot{d, name}] = nil
				names[slot{mv.to, mv.op.ToName}] = n
			}
		}
	}
	if len(ops) == 0 {
		return
	}
	if want == nil && len(made) > 0 {
		// A call that makes inodes may not release one.
		for n, k := range lost {
			if n.nlink <= k {
				want = xfs.ErrInvalid
			}
		}
	}
	if want == nil {
		// Valid: the model changes first, so that a cut during the call
		// can be checked against the state it leaves.
		for _, mv := range moves {
			if mv.made {
				mv.to.dir[mv.op.ToName] = mv.n
				if mv.n.dir != nil {
					mv.to.nlink++
				}
				continue
			}
			delete(mv.from.dir, mv.op.Name)
			if mv.to == nil {
				mv.n.nlink--
				continue
			}
			if old := mv.to.dir[mv.op.ToName]; old != nil {
				old.nlink--
			}
			mv.to.dir[mv.op.ToName] = mv.n
			if mv.n.xattrs == nil && len(mv.xattrs) > 0 {
				mv.n.xattrs = map[string]string{}
			}
			for k, val := range mv.xattrs {
				mv.n.xattrs[k] = val
			}
		}
		post := m.expected()
		m.post = &post
		m.applied++
		if len(made) > 0 {
			m.makers++
		}
	} else {
		m.refused++
	}
	err := m.v.Names().Apply(ops)
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		m.fail(fmt.Sprintf("Apply of %d ops (want %v)", len(ops), want), err)
	}
	if want != nil {
		return
	}
	// The made inodes' numbers, now that they exist.
	for _, mv := range moves {
		if !mv.made {
			continue
		}
		dir := mv.op.ToDir
		if dir == xfs.MadeDir {
			dir = madeDir.ino
		}
		ino, err := m.v.Names().Lookup(dir, mv.op.ToName)
		if err != nil {
			m.fail("lookup of a made name", err)
		}
		mv.n.ino = ino
	}
}

// wholeFile is the content of a file CreateFile makes: up to 40,000
// bytes and up to three attributes of every namespace, some remote.
// unlinkFiles removes a random share of d's entries in one UnlinkFiles
// call, with a name that is not there and one named twice among them:
// files go, anything else stays and reports its kind, the missing and
// the repeated name ErrNotFound.
func (m *model) unlinkFiles(d *mnode) {
	var names []string
	for name := range d.dir {
		if m.rng.Intn(2) == 0 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	m.rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	missing := m.name()
	if _, exists := d.dir[missing]; !exists {
		names = append(names, missing)
	}
	if len(names) > 0 {
		names = append(names, names[m.rng.Intn(len(names))])
	}
	m.bulk = map[string]bool{}
	for _, name := range names {
		m.bulk[fmt.Sprintf("%d/%s", d.ino, name)] = true
	}
	errs := m.v.Names().UnlinkFiles(d.ino, names)
	if len(errs) != len(names) {
		m.t.Fatalf("op %d UnlinkFiles: %d outcomes for %d names", m.op, len(errs), len(names))
	}
	for i, name := range names {
		n, err := d.dir[name], errs[i]
		var want error
		switch {
		case n == nil:
			want = xfs.ErrNotFound // missing, or removed earlier in the call
		case n.typ() == oracle.TypeDir:
			want = xfs.ErrIsDir
		case n.typ() == oracle.TypeSymlink:
			want = xfs.ErrInvalid
		}
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			kind := "missing name"
			if n != nil {
				kind = n.typ()
			}
			m.fail(fmt.Sprintf("UnlinkFiles of %q (%s; want %v)", name, kind, want), err)
		}
		if want == nil {
			n.nlink--
			delete(d.dir, name)
		}
	}
}

// cloneSource picks, now and then (from arng, so that the regression
// seeds keep their workloads), the hot file as a new file's source.
func (m *model) cloneSource() *mnode {
	if m.arng == nil || m.arng.Intn(3) != 0 {
		return nil
	}
	if h := m.hot; h != nil && h.nlink > 0 && h.typ() == oracle.TypeFile && len(h.data) > 0 {
		return h
	}
	return nil
}

// cloneStep clones a file of directory d with data (a fragmented one now
// and then: every other block rewritten) under a new name.
func (m *model) cloneStep(d *mnode) {
	_, src := m.pickEntry(d)
	if src == nil || src.typ() != oracle.TypeFile || len(src.data) == 0 {
		// Nothing to clone here: make a fragmented file to clone later.
		name := m.name()
		if _, exists := d.dir[name]; exists {
			return
		}
		ino, err := m.v.Names().Create(d.ino, name, xfs.Attrs{Mode: 0o644})
		if err != nil {
			m.fail("create", err)
		}
		n := &mnode{ino: ino, mode: 0o644, nlink: 1}
		d.dir[name] = n
		bs := m.v.Geometry().BlockSize
		for i := 0; i < 1+m.arng.Intn(300); i++ {
			p := make([]byte, bs)
			m.arng.Read(p)
			if _, err := m.v.Files().WriteAt(ino, p, int64(2*i*bs)); err != nil {
				m.fail("write", err)
			}
			n.data = append(n.data, make([]byte, 2*i*bs-len(n.data))...)
			n.data = append(n.data, p...)
		}
		return
	}
	name := m.name()
	if _, exists := d.dir[name]; exists {
		return
	}
	ino, err := m.v.Names().Create(d.ino, name, xfs.Attrs{Mode: 0o644})
	if err != nil {
		m.fail("create", err)
	}
	n := &mnode{ino: ino, mode: 0o644, nlink: 1}
	d.dir[name] = n
	m.clone(n, src)
}

// clone makes new file n a clone of src (whole), unless src is nil or
// the volume has no reflink; it reports whether it did.
func (m *model) clone(n, src *mnode) bool {
	if src == nil || src.ino == n.ino {
		return false
	}
	_, err := m.v.Files().CloneRange(n.ino, 0, src.ino, 0, int64(len(src.data)))
	if errors.Is(err, xfs.ErrUnsupported) {
		return false
	}
	if err != nil {
		m.fail("clone", err)
	}
	n.data = slices.Clone(src.data)
	n.reflinked, src.reflinked = true, true
	m.clones++
	return true
}

func (m *model) wholeFile() *mnode {
	n := &mnode{data: make([]byte, m.rng.Intn(40000)), xattrs: map[string]string{}}
	m.rng.Read(n.data)
	for range m.rng.Intn(4) {
		ns := []string{"user", "trusted", "security"}[m.rng.Intn(3)]
		value := make([]byte, m.rng.Intn(100))
		if m.rng.Intn(5) == 0 {
			value = make([]byte, 5000+m.rng.Intn(5000))
		}
		m.rng.Read(value)
		n.xattrs[ns+"."+fmt.Sprint(m.rng.Intn(1000))] = string(value)
	}
	return n
}

// xattrsOf lists n's attributes for CreateFile, in name order so that a
// seed makes the same volume every time.
func xattrsOf(n *mnode) []xfs.Xattr {
	var list []xfs.Xattr
	for _, name := range slices.Sorted(maps.Keys(n.xattrs)) {
		ns, short, _ := strings.Cut(name, ".")
		list = append(list, xfs.Xattr{Namespace: ns, Name: short, Value: []byte(n.xattrs[name])})
	}
	return list
}

func (m *model) xattrStep(n *mnode) {
	if n.xattrs == nil {
		n.xattrs = map[string]string{}
	}
	var names []string
	for k := range n.xattrs {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) > 0 && m.rng.Intn(map[bool]int{true: 6, false: 3}[n == m.hot]) == 0 {
		name := names[m.rng.Intn(len(names))]
		if err := m.v.Xattrs().Remove(n.ino, name); err != nil {
			m.fail("removexattr "+name, err)
		}
		delete(n.xattrs, name)
		return
	}
	ns := []string{"user", "trusted", "security"}[m.rng.Intn(3)]
	name := ns + "." + m.name()
	if len(names) > 0 && m.rng.Intn(3) == 0 {
		name = names[m.rng.Intn(len(names))] // replace
	}
	if len(name) > xfs.MaxXattrNameLen {
		if err := m.v.Xattrs().Set(n.ino, name, []byte("x"), 0); !errors.Is(err, xfs.ErrNameTooLong) {
			m.fail("over-long attribute name", err)
		}
		return
	}
	if n.target != "" && strings.HasPrefix(name, "user.") {
		if err := m.v.Xattrs().Set(n.ino, name, []byte("x"), 0); !errors.Is(err, xfs.ErrInvalid) {
			m.fail("user attribute on a symlink", err)
		}
		return
	}
	var size int
	switch r := m.rng.Intn(20); {
	case n == m.hot && r < 18:
		size = m.rng.Intn(40)
	case r < 12:
		size = m.rng.Intn(64)
	case r < 16:
		size = 200 + m.rng.Intn(300)
	case r < 19:
		size = 1000 + m.rng.Intn(4000)
	default:
		size = m.rng.Intn(65537)
	}
	val := make([]byte, size)
	for i := range val {
		val[i] = byte('a' + m.rng.Intn(26)) // JSON-safe for the kernel snapshot
	}
	if err := m.v.Xattrs().Set(n.ino, name, val, 0); err != nil {
		m.fail(fmt.Sprintf("setxattr %s (%d bytes)", name, size), err)
	}
	n.xattrs[name] = string(val)
}

// isBelow reports whether dir is n or inside n.
func (m *model) isBelow(dir, n *mnode) bool {
	if dir == n {
		return true
	}
	for _, c := range n.dir {
		if c.dir != nil && m.isBelow(dir, c) {
			return true
		}
	}
	return false
}

// expected renders the model as a snapshot (directory sizes left to the
// comparison to ignore).
func (m *model) expected() oracle.Snapshot {
	var snap oracle.Snapshot
	var walk func(n *mnode, p string)
	walk = func(n *mnode, p string) {
		e := oracle.Entry{Path: p, Type: n.typ(), Mode: n.mode, Nlink: n.nlink, Ino: uint64(n.ino)}
		if len(n.xattrs) > 0 {
			e.Xattrs = maps.Clone(n.xattrs) // the model changes on; a snapshot stays
		}
		switch n.typ() {
		case oracle.TypeFile:
			e.Size = int64(len(n.data))
			sum := sha256.Sum256(n.data)
			e.SHA256 = hex.EncodeToString(sum[:])
		case oracle.TypeSymlink:
			e.Size, e.Target = int64(len(n.target)), n.target
		}
		snap = append(snap, e)
		for name, c := range n.dir {
			walk(c, path.Join(p, name))
		}
	}
	walk(m.root, ".")
	sort.Slice(snap, func(i, j int) bool { return snap[i].Path < snap[j].Path })
	return snap
}

func (m *model) checkEngine() {
	m.t.Helper()
	got := engineSnapshot(m.t, m.v)
	if d := m.expected().DiffWith(got, oracle.DiffOptions{IgnoreDirSize: true}); len(d) > 0 {
		for _, l := range d {
			m.t.Error(l)
		}
		m.t.Fatalf("op %d: the engine differs from the model", m.op)
	}
	var walk func(n *mnode)
	walk = func(n *mnode) {
		if n.dir == nil {
			return
		}
		if empty, err := m.v.Names().IsEmptyDir(n.ino); err != nil || empty != (len(n.dir) == 0) {
			m.t.Fatalf("op %d: IsEmptyDir(%d) = %v, %v; the model has %d entries", m.op, n.ino, empty, err, len(n.dir))
		}
		for _, c := range n.dir {
			walk(c)
		}
	}
	walk(m.root)
}

func (m *model) checkOracles(img string) {
	m.t.Helper()
	oracle.Require(m.t, oracle.ToolRepair, oracle.ToolMount)
	oracle.Repair(m.t, img)
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		m.t.Fatal(err)
	}
	ours := engineSnapshot(m.t, v)
	v.Close()
	mnt := oracle.Mount(m.t, img, true)
	kernel, err := oracle.SnapshotDir(mnt)
	oracle.Unmount(m.t, mnt)
	if err != nil {
		if keep := os.Getenv("XFS3_MODEL_KEEP"); keep != "" {
			b, _ := os.ReadFile(img)
			os.WriteFile(keep, b, 0o644)
		}
		for _, e := range ours {
			if len(e.Xattrs) > 0 && strings.Contains(err.Error(), "/"+e.Path+":") {
				m.t.Logf("%s: attr format %s, %d attrs\n%s", e.Path, oracle.AttrFormat(m.t, img, e.Ino), len(e.Xattrs),
					oracle.DB(m.t, img, fmt.Sprintf("inode %d", e.Ino), "print core.naextents core.forkoff core.aformat", "bmap -a"))
			}
		}
		m.t.Fatal(err)
	}
	if d := kernel.Diff(ours); len(d) > 0 {
		for _, l := range d {
			m.t.Error(l)
		}
		m.t.Fatalf("op %d: the kernel differs from the engine", m.op)
	}
}
