package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/quota"
)

// cloneModel is the files of a reflink model test and the bytes each
// should read as; reflinked marks the files whose blocks may be shared,
// the only ones where ErrShared is a right answer.
type cloneModel struct {
	t         *testing.T
	v         *xfs.Volume
	rng       *rand.Rand
	bs        int
	files     map[string]*modelFile
	reflinked map[string]bool
	seq       int
}

func (m *cloneModel) names() []string {
	var out []string
	for n := range m.files {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (m *cloneModel) pick() (string, *modelFile) {
	ns := m.names()
	n := ns[m.rng.Intn(len(ns))]
	return n, m.files[n]
}

func (m *cloneModel) random(n int) []byte {
	p := make([]byte, n)
	m.rng.Read(p)
	return p
}

func (m *cloneModel) create() (string, *modelFile) {
	m.seq++
	name := fmt.Sprintf("f%03d", m.seq)
	ino, err := m.v.Names().Create(m.v.Root(), name, xfs.Attrs{Mode: 0o644})
	if err != nil {
		m.t.Fatal(err)
	}
	f := &modelFile{ino: ino}
	m.files[name] = f
	return name, f
}

// fill gives a new file content of one of three shapes: one extent, many
// (every other block written) or a partial last block.
func (m *cloneModel) fill(f *modelFile) {
	bs := m.bs
	switch m.rng.Intn(3) {
	case 0:
		f.write(m.t, m.v, 0, m.random(bs*(1+m.rng.Intn(64))))
	case 1:
		for i := 0; i < 20+m.rng.Intn(200); i++ {
			f.write(m.t, m.v, 2*i*bs, m.random(bs))
		}
	default:
		f.write(m.t, m.v, 0, m.random(bs*m.rng.Intn(40)+1+m.rng.Intn(bs-1)))
	}
}

// step does one random operation on the volume and the model.
func (m *cloneModel) step() string {
	t, v, bs := m.t, m.v, m.bs
	op := m.rng.Intn(11)
	switch {
	case op == 10 && len(m.files) >= 3: // move one file's extents onto another's end
		sn, src := m.pick()
		dn, dst := m.pick()
		if sn == dn || len(dst.data)%bs != 0 {
			return "skip"
		}
		if err := v.Files().AppendExtents(dst.ino, src.ino); err != nil {
			t.Fatalf("append %s to %s: %v", sn, dn, err)
		}
		dst.data = append(dst.data, src.data...)
		src.data = nil
		m.reflinked[dn] = m.reflinked[dn] || m.reflinked[sn]
		return "append"
	case len(m.files) < 3 || op == 0:
		_, f := m.create()
		m.fill(f)
		return "create"
	case op <= 3: // clone a whole file into a new one
		sn, src := m.pick()
		dn, dst := m.create()
		st, err := v.Files().CloneRange(dst.ino, 0, src.ino, 0, int64(len(src.data)))
		if err != nil {
			t.Fatalf("clone %s to %s: %v", sn, dn, err)
		}
		if sst, _ := v.Stat(src.ino); sst.Blocks > 0 && st.SharedBlocks == 0 {
			t.Fatalf("clone of %s (%d bytes) shared nothing: %+v", sn, len(src.data), st)
		}
		dst.data = append([]byte(nil), src.data...)
		m.reflinked[sn], m.reflinked[dn] = true, true
		return "clone"
	case op == 4: // clone a range into another file
		sn, src := m.pick()
		dn, dst := m.pick()
		if sn == dn || len(src.data) == 0 {
			return "skip"
		}
		srcOff := m.rng.Intn(len(src.data))
		n := m.rng.Intn(len(src.data) - srcOff + 1)
		dstOff := m.rng.Intn(len(dst.data)+1) &^ (bs - 1)
		if m.rng.Intn(2) == 0 {
			dstOff += srcOff % bs // congruent: shares
		} else {
			dstOff += m.rng.Intn(bs)
		}
		_, err := v.Files().CloneRange(dst.ino, int64(dstOff), src.ino, int64(srcOff), int64(n))
		switch {
		case (dstOff-srcOff)%bs != 0:
			if !errors.Is(err, xfs.ErrUnaligned) {
				t.Fatalf("incongruent clone %s@%d to %s@%d: %v, want ErrUnaligned", sn, srcOff, dn, dstOff, err)
			}
			return "clone-unaligned"
		case errors.Is(err, xfs.ErrShared) && m.reflinked[dn]:
			// An edge of dst's range lies in a block dst shares: the
			// copy of that edge was refused; the shared part may have
			// happened, so take dst's bytes from the volume.
			m.reread(dst)
			m.reflinked[sn] = true
			return "clone-range-refused"
		case err != nil:
			t.Fatalf("clone %d bytes of %s@%d to %s@%d: %v", n, sn, srcOff, dn, dstOff, err)
		}
		if end := dstOff + n; end > len(dst.data) {
			dst.data = append(dst.data, make([]byte, end-len(dst.data))...)
		}
		copy(dst.data[dstOff:], src.data[srcOff:srcOff+n])
		m.reflinked[sn], m.reflinked[dn] = true, true
		return "clone-range"
	case op == 5: // overwrite in place
		n, f := m.pick()
		off := m.rng.Intn(len(f.data) + 1)
		p := m.random(1 + m.rng.Intn(3*bs))
		if _, err := v.Files().WriteAt(f.ino, p, int64(off)); err != nil {
			if errors.Is(err, xfs.ErrShared) && m.reflinked[n] {
				m.reread(f) // chunks before the shared one may be written
				return "write-refused"
			}
			t.Fatalf("write %s: %v", n, err)
		}
		if end := off + len(p); end > len(f.data) {
			f.data = append(f.data, make([]byte, end-len(f.data))...)
		}
		copy(f.data[off:], p)
		return "write"
	case op == 6: // truncate
		n, f := m.pick()
		size := m.rng.Intn(len(f.data) + 1)
		if m.rng.Intn(2) == 0 {
			size &^= bs - 1
		}
		if err := v.Files().Truncate(f.ino, int64(size)); err != nil {
			if errors.Is(err, xfs.ErrShared) && m.reflinked[n] {
				return "truncate-refused"
			}
			t.Fatalf("truncate %s to %d: %v", n, size, err)
		}
		f.data = f.data[:size]
		return "truncate"
	case op == 7: // punch whole blocks
		n, f := m.pick()
		if len(f.data) < 2*bs {
			return "skip"
		}
		first := m.rng.Intn(len(f.data)/bs) * bs
		length := (1 + m.rng.Intn(8)) * bs
		if err := v.Files().PunchHole(f.ino, int64(first), int64(length)); err != nil {
			t.Fatalf("punch %s: %v", n, err)
		}
		clear(f.data[first:min(first+length, len(f.data))])
		return "punch"
	default: // delete
		n, f := m.pick()
		if err := v.Names().Unlink(v.Root(), n); err != nil {
			t.Fatalf("unlink %s: %v", n, err)
		}
		delete(m.files, n)
		_ = f
		return "unlink"
	}
}

// reread takes a file's bytes from the volume after a refused change
// that may have done part of its work.
func (m *cloneModel) reread(f *modelFile) {
	st, err := m.v.Stat(f.ino)
	if err != nil {
		m.t.Fatal(err)
	}
	f.data = make([]byte, st.Size)
	if _, err := m.v.Files().ReadAt(f.ino, f.data, 0); err != nil && st.Size > 0 {
		m.t.Fatal(err)
	}
}

func (m *cloneModel) check(v *xfs.Volume, when string) {
	m.t.Helper()
	for _, n := range m.names() {
		f := m.files[n]
		st, err := v.Stat(f.ino)
		if err != nil || st.Size != int64(len(f.data)) {
			m.t.Fatalf("%s: %s has size %d, want %d (%v)", when, n, st.Size, len(f.data), err)
		}
		got := make([]byte, len(f.data))
		if _, err := v.Files().ReadAt(f.ino, got, 0); err != nil && len(got) > 0 {
			m.t.Fatalf("%s: read %s: %v", when, n, err)
		}
		if !bytes.Equal(got, f.data) {
			m.t.Fatalf("%s: %s reads other bytes", when, n)
		}
	}
}

// TestCloneModel draws clones of whole files and ranges (chains of
// copies of copies), writes, truncates, punches and deletes in every
// order over a reflink volume made by mkfs.xfs; the engine reads what
// the model holds throughout, and at the end xfs_repair -n (which checks
// every reference count against the files' mappings) is clean and the
// kernel reads the same bytes.
func TestCloneModel(t *testing.T) {
	for _, seed := range []int64{1, 2, 3, 4, 5} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { cloneModelRun(t, seed, 300) })
	}
}

func cloneModelRun(t *testing.T, seed int64, steps int) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "reflink.img")
	oracle.Mkfs(t, img, 256<<20, "-m", "reflink=1")
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { v.Close() }()
	m := &cloneModel{t: t, v: v, rng: rand.New(rand.NewSource(seed)), bs: v.Geometry().BlockSize,
		files: map[string]*modelFile{}, reflinked: map[string]bool{}}
	ops := map[string]int{}
	for i := 0; i < steps; i++ {
		ops[m.step()]++
		if i%25 == 24 {
			m.check(v, fmt.Sprintf("step %d", i))
		}
	}
	t.Logf("operations: %v", ops)
	sh, err := v.Space().Shared()
	if err != nil {
		t.Fatal(err)
	}
	if sh.SharedBlocks == 0 {
		t.Fatalf("nothing shared at the end: %+v", sh)
	}
	t.Logf("shared: %+v", sh)
	m.check(v, "end")
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if v, err = xfs.Open(img, xfs.Options{}); err != nil {
		t.Fatal(err)
	}
	m.check(v, "reopened")
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	for _, n := range m.names() {
		got, err := os.ReadFile(filepath.Join(mnt, n))
		if err != nil || !bytes.Equal(got, m.files[n].data) {
			t.Errorf("the kernel reads %s wrongly (%d bytes, want %d): %v", n, len(got), len(m.files[n].data), err)
		}
	}
}

// TestCloneRefusals: what CloneRange refuses, and that a refusal changes
// nothing.
func TestCloneRefusals(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs)
	img := filepath.Join(t.TempDir(), "reflink.img")
	oracle.Mkfs(t, img, 128<<20, "-m", "reflink=1")
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	bs := int64(v.Geometry().BlockSize)
	a, _ := v.Names().Create(v.Root(), "a", xfs.Attrs{Mode: 0o644})
	b, _ := v.Names().Create(v.Root(), "b", xfs.Attrs{Mode: 0o644})
	if _, err := v.Files().WriteAt(a, bytes.Repeat([]byte("a"), int(4*bs)), 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name           string
		dst            format.Ino
		dstOff, srcOff int64
		n              int64
		want           error
	}{
		{"itself", a, 0, 0, bs, xfs.ErrInvalid},
		{"past the source's end", b, 0, 0, 5 * bs, xfs.ErrInvalid},
		{"negative", b, -bs, 0, bs, xfs.ErrInvalid},
		{"incongruent offsets", b, 1, 0, bs, xfs.ErrUnaligned},
		{"into a directory", v.Root(), 0, 0, bs, xfs.ErrInvalid},
	} {
		if _, err := v.Files().CloneRange(c.dst, c.dstOff, a, c.srcOff, c.n); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if st, _ := v.Stat(b); st.Size != 0 || st.Blocks != 0 || st.Flags2&format.Diflag2Reflink != 0 {
		t.Errorf("refused clones changed b: %+v", st)
	}
	if _, err := v.Files().CloneRange(b, 0, a, 0, 4*bs); err != nil {
		t.Fatal(err)
	}
	for _, f := range []format.Ino{a, b} {
		if st, _ := v.Stat(f); st.Flags2&format.Diflag2Reflink == 0 || st.Blocks != 4 {
			t.Errorf("inode %d after a clone: flags2 %#x, %d blocks", f, st.Flags2, st.Blocks)
		}
	}
	if _, err := v.Files().WriteAt(b, []byte("x"), bs+3); !errors.Is(err, xfs.ErrShared) {
		t.Errorf("write into a shared block: %v, want ErrShared", err)
	}
	if err := v.Files().Truncate(b, bs+3); !errors.Is(err, xfs.ErrShared) {
		t.Errorf("truncate inside a shared block: %v, want ErrShared", err)
	}
	if err := v.Files().Truncate(b, 2*bs); err != nil {
		t.Errorf("truncate at a block boundary: %v", err)
	}
	if _, err := v.Files().WriteAt(b, []byte("x"), 3*bs); err != nil {
		t.Errorf("write past the shared blocks: %v", err)
	}
}

// TestReflinkKernelAuthored: the kernel shares extents of files of many
// extents with cp --reflink; the engine then opens the volume for
// writing, deletes an original, writes past a copy's end, is refused a
// write into shared blocks, truncates and clones again; xfs_repair -n is
// clean and the kernel reads every file as the engine says.
func TestReflinkKernelAuthored(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolMount, "cp")
	img := filepath.Join(t.TempDir(), "kernel.img")
	oracle.Mkfs(t, img, 256<<20, "-m", "reflink=1")
	rng := rand.New(rand.NewSource(7))
	want := map[string][]byte{}
	mnt := oracle.Mount(t, img, false)
	const bs = 4096
	for i, extents := range []int{1, 40, 700} {
		name := fmt.Sprintf("orig%d", i)
		f, err := os.Create(filepath.Join(mnt, name))
		if err != nil {
			t.Fatal(err)
		}
		var data []byte
		for e := 0; e < extents; e++ {
			// Every other block written, with a sync between, gives
			// one extent per block written.
			p := make([]byte, bs)
			rng.Read(p)
			if _, err := f.WriteAt(p, int64(2*e*bs)); err != nil {
				t.Fatal(err)
			}
			if e%64 == 63 {
				f.Sync()
			}
			data = append(data, make([]byte, 2*e*bs-len(data))...)
			data = append(data, p...)
		}
		tail := make([]byte, 100)
		rng.Read(tail)
		data = append(data, tail...)
		if _, err := f.WriteAt(tail, int64(len(data)-len(tail))); err != nil {
			t.Fatal(err)
		}
		f.Close()
		want[name] = data
		for c := 0; c < 2; c++ {
			cp := fmt.Sprintf("copy%d-%d", i, c)
			if out, err := exec.Command("cp", "--reflink=always", filepath.Join(mnt, name), filepath.Join(mnt, cp)).CombinedOutput(); err != nil {
				t.Fatalf("cp --reflink: %v\n%s", err, out)
			}
			want[cp] = data
		}
	}
	oracle.Unmount(t, mnt)
	oracle.Repair(t, img)

	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatalf("open a volume the kernel reflinked: %v", err)
	}
	defer func() { v.Close() }()
	before, err := v.Space().Shared()
	if err != nil || before.SharedBlocks == 0 {
		t.Fatalf("shared blocks of the kernel's copies: %+v, %v", before, err)
	}
	ino := func(name string) format.Ino {
		i, err := v.Names().Lookup(v.Root(), name)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	// The originals go: their copies keep every block.
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("orig%d", i)
		if err := v.Names().Unlink(v.Root(), name); err != nil {
			t.Fatal(err)
		}
		delete(want, name)
	}
	// A write into a shared block is refused and changes nothing.
	c := ino("copy2-0")
	if _, err := v.Files().WriteAt(c, []byte("changed"), 10); !errors.Is(err, xfs.ErrShared) {
		t.Fatalf("write into the kernel's shared block: %v, want ErrShared", err)
	}
	// A write past the end, into new blocks, works.
	more := bytes.Repeat([]byte("z"), 3*bs)
	end := (len(want["copy2-0"]) + bs - 1) &^ (bs - 1)
	if _, err := v.Files().WriteAt(c, more, int64(end)); err != nil {
		t.Fatal(err)
	}
	want["copy2-0"] = append(append(want["copy2-0"], make([]byte, end-len(want["copy2-0"]))...), more...)
	// Truncating a copy at a block boundary drops its references.
	if err := v.Files().Truncate(ino("copy1-1"), 20*bs); err != nil {
		t.Fatal(err)
	}
	want["copy1-1"] = want["copy1-1"][:20*bs]
	// A copy of a copy.
	n, err := v.Names().Create(v.Root(), "copy-again", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	src := want["copy2-1"]
	if _, err := v.Files().CloneRange(n, 0, ino("copy2-1"), 0, int64(len(src))); err != nil {
		t.Fatal(err)
	}
	want["copy-again"] = src
	// And the last reference of one copy's blocks goes.
	for _, name := range []string{"copy0-0", "copy0-1"} {
		if err := v.Names().Unlink(v.Root(), name); err != nil {
			t.Fatal(err)
		}
		delete(want, name)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	mnt = oracle.Mount(t, img, true)
	for name, data := range want {
		got, err := os.ReadFile(filepath.Join(mnt, name))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("the kernel reads %s wrongly (%d bytes, want %d): %v", name, len(got), len(data), err)
		}
	}
	entries, err := os.ReadDir(mnt)
	if err != nil || len(entries) != len(want) {
		t.Errorf("the kernel sees %d names, want %d (%v)", len(entries), len(want), err)
	}
}

// TestReflinkQuotaKernel: clones charge their project for every block
// they map, as the kernel charges reflinked files: our usage after
// clones and deletes in two projects is what xfs_quota reports under a
// quota-enabled kernel, and a clone past a hard limit is refused.
func TestReflinkQuotaKernel(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolUML)
	img := filepath.Join(t.TempDir(), "quota.img")
	oracle.Mkfs(t, img, 128<<20, "-m", "reflink=1")
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bs := v.Geometry().BlockSize
	a, err := v.Names().Mkdir(v.Root(), "a", xfs.Attrs{Mode: 0o777, ProjID: 7})
	if err != nil {
		t.Fatal(err)
	}
	b, err := v.Names().Mkdir(v.Root(), "b", xfs.Attrs{Mode: 0o777, ProjID: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Quotas().SetLimits(8, quota.Limits{BlkHard: 100}); err != nil {
		t.Fatal(err)
	}
	src, err := v.Names().Create(a, "src", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Files().WriteAt(src, bytes.Repeat([]byte("s"), 40*bs), 0); err != nil {
		t.Fatal(err)
	}
	clone := func(dir format.Ino, name string) error {
		ino, err := v.Names().Create(dir, name, xfs.Attrs{Mode: 0o644})
		if err != nil {
			return err
		}
		_, err = v.Files().CloneRange(ino, 0, src, 0, int64(40*bs))
		return err
	}
	for _, c := range []struct {
		dir  format.Ino
		name string
	}{{a, "copy1"}, {a, "copy2"}, {b, "copy1"}, {b, "copy2"}} {
		if err := clone(c.dir, c.name); err != nil {
			t.Fatal(err)
		}
	}
	// A third copy in b would map 120 blocks against a limit of 100.
	if err := clone(b, "copy3"); !errors.Is(err, xfs.ErrQuota) {
		t.Fatalf("a clone past the hard limit: %v, want ErrQuota", err)
	}
	if err := v.Names().Unlink(a, "copy2"); err != nil {
		t.Fatal(err)
	}
	if err := v.Names().Unlink(a, "src"); err != nil {
		t.Fatal(err)
	}
	ours := map[uint32]quota.Usage{}
	for _, id := range []uint32{7, 8} {
		q, err := v.Quotas().Get(id)
		if err != nil {
			t.Fatal(err)
		}
		ours[id] = q.Usage
	}
	if ours[7].Blocks < 40 || ours[8].Blocks < 80 {
		t.Fatalf("copies charged %d and %d blocks, want at least 40 and 80 (every block they map)", ours[7].Blocks, ours[8].Blocks)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	rows := kernelQuotaReport(t, img, "")
	kib := uint64(bs / 1024)
	for id, u := range ours {
		if got := rows[id]; got.BlocksKiB != uint64(u.Blocks)*kib || got.Inodes != uint64(u.Inodes) {
			t.Errorf("project %d: the kernel reports %d KiB and %d inodes, we charged %d blocks and %d inodes", id, got.BlocksKiB, got.Inodes, u.Blocks, u.Inodes)
		}
	}
	oracle.Repair(t, img)
}

// TestReflinkFreesOnFullVolume: every AG keeps back what its refcount
// btree may need, so that on a volume filled to ENOSPC, freeing every
// other block of a shared extent (each free splits a refcount record,
// and the tree grows by leaves) still works; xfs_repair is clean.
func TestReflinkFreesOnFullVolume(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair)
	img := filepath.Join(t.TempDir(), "full.img")
	oracle.Mkfs(t, img, 64<<20, "-m", "reflink=1")
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { v.Close() }()
	bs := int64(v.Geometry().BlockSize)
	a, _ := v.Names().Create(v.Root(), "a", xfs.Attrs{Mode: 0o644})
	b, _ := v.Names().Create(v.Root(), "b", xfs.Attrs{Mode: 0o644})
	const n = 2000
	if _, err := v.Files().WriteAt(a, bytes.Repeat([]byte("a"), int(n*bs)), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Files().CloneRange(b, 0, a, 0, n*bs); err != nil {
		t.Fatal(err)
	}
	// Fill the volume.
	chunk := bytes.Repeat([]byte("f"), int(64*bs))
	for i := 0; ; i++ {
		f, err := v.Names().Create(v.Root(), fmt.Sprintf("fill%d", i), xfs.Attrs{Mode: 0o644})
		if err == nil {
			_, err = v.Files().WriteAt(f, chunk, 0)
		}
		if errors.Is(err, xfs.ErrNoSpace) {
			t.Logf("filled after %d files: %v", i, err)
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	st, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("full: %d blocks free, %d of them kept back for the refcount btrees", st.FreeBlocks, st.ReservedBlocks)
	// Every other block of b goes: each punch splits a shared record.
	for i := int64(1); i < n; i += 2 {
		if err := v.Files().PunchHole(b, i*bs, bs); err != nil {
			t.Fatalf("punch block %d of a shared file on a full volume: %v", i, err)
		}
	}
	sh, err := v.Space().Shared()
	if err != nil || sh.Records < n/2 {
		t.Fatalf("shared after the punches: %+v, %v", sh, err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}
