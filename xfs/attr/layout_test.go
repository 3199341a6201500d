package attr

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

var kernelRandom = flag.Int("attr.kernel.random", 0, "extra random scripts for TestKernelLayout (a soak)")

// TestKernelLayout runs scripted sequences of setxattr/removexattr on
// files of a kernel-mounted image, then replays each script through this
// package on an in-memory fork that starts like the kernel's new inode,
// and requires the same result byte for byte: fork offset, format,
// short-form bytes, which fork blocks are mapped, and every leaf, node and
// remote block (apart from CRC, LSN and disk address).
func TestKernelLayout(t *testing.T) {
	t.Parallel()
	if testing.Short() && os.Getenv(oracle.RequireEnv) != "1" {
		t.Skip("runs the kernel")
	}
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolMount)
	for _, v := range []struct {
		name  string
		bs    int
		opts  []string
		heavy bool // also the long scripts (deep trees, long random mixes)
	}{
		{"default", 4096, nil, true},
		{"b1k", 1024, []string{"-b", "size=1024"}, true},
		{"i2k", 4096, []string{"-i", "size=2048"}, false},
		{"b64k", 65536, []string{"-b", "size=65536"}, false}, // the kernel's experimental large blocks
	} {
		t.Run(v.name, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), v.name+".img")
			oracle.Mkfs(t, img, 1<<30, v.opts...)
			scripts := layoutScripts(v.bs, v.heavy)
			mnt := oracle.Mount(t, img, false)
			inos := make([]uint64, len(scripts))
			for i, sc := range scripts {
				inos[i] = runKernelScript(t, filepath.Join(mnt, sc.name), sc)
			}
			oracle.Unmount(t, mnt)

			im := openImage(t, img)
			empty, err := im.attrFork(format.Ino(inos[0]))
			if err != nil {
				t.Fatal(err)
			}
			initOff := int(empty.core.ForkOff)
			t.Logf("a new file has forkoff %d, aformat %d", initOff, empty.core.AFormat)
			for i, sc := range scripts {
				kf, err := im.attrFork(format.Ino(inos[i]))
				if err != nil {
					t.Fatalf("%s: %v", sc.name, err)
				}
				if err := Check(kf); err != nil {
					t.Errorf("%s: Check of the kernel's fork: %v", sc.name, err)
				}
				dataFmt, dataBytes, err := dataForkOf(im, format.Ino(inos[i]))
				if err != nil {
					t.Fatalf("%s: %v", sc.name, err)
				}
				if sc.setup != "" && strings.HasSuffix(sc.name, "-grow") {
					t.Logf("%s: data fork format %d, %d bytes; attr forkoff %d", sc.name, dataFmt, dataBytes, kf.core.ForkOff)
				}
				ours := replayScript(t, im.g, format.Ino(inos[i]), initOff, dataFmt, dataBytes, sc)
				if err := Check(ours); err != nil {
					t.Errorf("%s: Check of our fork: %v", sc.name, err)
				}
				compareLayout(t, sc.name, kf, ours)
				if strings.HasPrefix(sc.name, "long-names") {
					if root, err := newOp(ours).t.Read(0); err == nil && dabtree.Magic(root.B) == dabtree.NodeMagic {
						t.Logf("%s: %d levels of nodes above the leaves", sc.name, dabtree.NodeLevel(root.B))
					}
				}
			}
		})
	}
}

type scriptOp struct {
	remove bool
	ns     uint8
	name   string
	value  []byte
}

type script struct {
	name  string
	setup string // "": empty file; "data": one data extent; "frag": btree data fork; "dir": short-form directory
	ops   []scriptOp
}

var nsPrefix = map[uint8]string{User: "user.", Trusted: "trusted.", Secure: "security."}

func runKernelScript(t *testing.T, path string, sc script) uint64 {
	if err := setupFile(path, sc.setup); err != nil {
		t.Fatalf("%s: %v", sc.name, err)
	}
	for i, op := range sc.ops {
		var err error
		full := nsPrefix[op.ns] + op.name
		if op.remove {
			err = syscall.Removexattr(path, full)
		} else {
			err = syscall.Setxattr(path, full, op.value, 0)
		}
		if err != nil {
			t.Fatalf("%s: op %d on %q: %v", sc.name, i, full, err)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// setupFile creates the file a script works on, with the data fork the
// script asks for. Its data fork never changes afterwards.
func setupFile(path, setup string) error {
	switch setup {
	case "dir":
		if err := os.Mkdir(path, 0o755); err != nil {
			return err
		}
		for _, n := range []string{"a", "bb", "ccc"} {
			if err := os.WriteFile(filepath.Join(path, n), nil, 0o644); err != nil {
				return err
			}
		}
		return nil
	case "data", "frag":
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		pieces := 1
		if setup == "frag" {
			pieces = 40 // one extent each: more than the inode holds
		}
		for i := 0; i < pieces; i++ {
			if _, err := f.WriteAt(bytes.Repeat([]byte{'d'}, 4096), int64(i)*65536); err != nil {
				return err
			}
			if err := f.Sync(); err != nil {
				return err
			}
		}
		return nil
	}
	return os.WriteFile(path, nil, 0o644)
}

// dataForkOf describes an image inode's data fork as Fork.DataFork does.
func dataForkOf(im *image, ino format.Ino) (int8, int, error) {
	d, b, err := im.inode(ino)
	if err != nil {
		return 0, 0, err
	}
	switch d.Format {
	case format.FmtLocal:
		return d.Format, int(d.Size), nil
	case format.FmtExtents:
		return d.Format, int(d.DataExtents()) * format.ExtentRecSize, nil
	case format.FmtBtree:
		data, _ := d.Forks(b)
		root, err := format.DecodeBmdrRoot(data)
		if err != nil {
			return 0, 0, err
		}
		return d.Format, bmdrSpace(int(root.NumRecs)), nil
	}
	return d.Format, 0, nil
}

func replayScript(t *testing.T, g format.Geometry, ino format.Ino, initOff int, dataFmt int8, dataBytes int, sc script) *memFork {
	f := newMemFork(g, ino, dataFmt, dataBytes)
	if initOff != 0 {
		if err := f.AddFork(initOff); err != nil {
			t.Fatal(err)
		}
	}
	for i, op := range sc.ops {
		var err error
		if op.remove {
			err = Remove(f, op.ns, []byte(op.name))
		} else {
			err = Set(f, op.ns, []byte(op.name), op.value, 0)
		}
		if err != nil {
			t.Fatalf("%s: replaying op %d on %q: %v", sc.name, i, op.name, err)
		}
		f.Commit()
	}
	return f
}

// compareLayout requires our fork to hold the same bytes as the kernel's.
func compareLayout(t *testing.T, name string, kf *imgFork, ours *memFork) {
	t.Helper()
	kfmt := kf.Format()
	if kfmt == format.FmtBtree {
		kfmt = format.FmtExtents // the extent map's own format is the engine's business
	}
	if int(kf.core.ForkOff) != ours.ForkOff() || kfmt != ours.Format() {
		t.Errorf("%s: kernel has forkoff %d format %d, we have %d format %d", name,
			kf.core.ForkOff, kf.Format(), ours.ForkOff(), ours.Format())
		return
	}
	if kf.Format() == format.FmtLocal {
		kb := kf.inline[:sfTotsize(kf.inline)]
		if !bytes.Equal(kb, ours.Data) {
			t.Errorf("%s: short form differs:\nkernel %x\nours   %x", name, kb, ours.Data)
		}
		return
	}
	km, _ := kf.Mapped()
	om, _ := ours.Mapped()
	if fmt.Sprint(km) != fmt.Sprint(om) {
		t.Errorf("%s: kernel maps blocks %v, we map %v", name, km, om)
		return
	}
	for _, r := range km {
		for off := r[0]; off < r[1]; off++ {
			kb, _, err := kf.Read(off, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			ob, _, _ := ours.Block(off)
			kb, ob = bytes.Clone(kb), bytes.Clone(ob)
			if bytes.Equal(kb[:4], []byte("XARM")) {
				clear(kb[12:16]) // crc
				clear(ob[12:16])
				clear(kb[40:48]) // blkno
				clear(ob[40:48])
			} else {
				clear(kb[12:32]) // crc, blkno, lsn
				clear(ob[12:32])
			}
			if !bytes.Equal(kb, ob) {
				i := 0
				for kb[i] == ob[i] {
					i++
				}
				lo, hi := max(0, i-16), min(len(kb), i+48)
				t.Errorf("%s: block %d differs at byte %d:\nkernel %x\nours   %x", name, off, i, kb[lo:hi], ob[lo:hi])
				return
			}
		}
	}
}

// layoutScripts are the sequences both the kernel and we run.
func layoutScripts(bs int, heavy bool) []script {
	var out []script
	add := func(name string, ops ...scriptOp) { out = append(out, script{name: name, ops: ops}) }
	addOn := func(setup, name string, ops ...scriptOp) {
		out = append(out, script{name: name, setup: setup, ops: ops})
	}
	set := func(ns uint8, name string, v []byte) scriptOp { return scriptOp{ns: ns, name: name, value: v} }
	rm := func(ns uint8, name string) scriptOp { return scriptOp{remove: true, ns: ns, name: name} }
	val := func(n int, seed byte) []byte {
		v := make([]byte, n)
		for i := range v {
			v[i] = seed + byte(i*7)
		}
		return v
	}

	add("empty")
	// Short form growing until it becomes a leaf.
	for _, n := range []int{1, 5, 8, 9, 10, 11, 12, 13, 14, 20, 30} {
		var ops []scriptOp
		for i := 0; i < n; i++ {
			ops = append(ops, set(User, fmt.Sprintf("attr%02d", i), val(15, byte(i))))
		}
		add(fmt.Sprintf("grow-%d", n), ops...)
	}
	// Value sizes around every threshold.
	for _, n := range []int{0, 1, 200, 254, 255, 256, 1000, 3000, localMax(bs) - 12, localMax(bs) - 11, localMax(bs) - 8,
		localMax(bs), 4000, 20000, 60000, format.MaxAttrValueLen} {
		add(fmt.Sprintf("value-%d", n), set(User, "v", val(n, 1)))
		add(fmt.Sprintf("value-%d-plus", n), set(User, "small", []byte("s")), set(Trusted, "vv", val(n, 2)),
			set(Secure, "after", []byte("after")))
	}
	// Remote entries with every name length modulo 4.
	{
		var ops []scriptOp
		for n := 1; n <= 9; n++ {
			ops = append(ops, set(User, string(bytes.Repeat([]byte{'r'}, n)), val(bs, byte(n))))
		}
		add("remote-names", ops...)
	}
	// Replacements in every format, local and remote, growing and shrinking.
	{
		ops := []scriptOp{set(User, "a", []byte("1")), set(User, "b", []byte("2")), set(User, "a", []byte("one")),
			set(User, "b", val(300, 3)), set(User, "b", []byte("small again")), set(User, "a", val(5000, 4)),
			set(User, "a", []byte("x")), set(User, "c", val(60000, 5)), set(User, "c", val(9000, 6)), set(User, "c", []byte("c"))}
		add("replace-small", ops...)
	}
	// A leaf, then a node, then removals that join leaves and go back to
	// short form, and finally nothing.
	{
		var grow, shrink []scriptOp
		for i := 0; i < 600; i++ {
			grow = append(grow, set(User, fmt.Sprintf("node-%04d", i), val(4+i%13, byte(i))))
		}
		add("node-600", grow...)
		r := rand.New(rand.NewPCG(1, 2))
		for _, i := range r.Perm(600)[:590] {
			shrink = append(shrink, rm(User, fmt.Sprintf("node-%04d", i)))
		}
		add("node-600-shrink-590", append(append([]scriptOp(nil), grow...), shrink...)...)
		var all []scriptOp
		for _, i := range r.Perm(600) {
			all = append(all, rm(User, fmt.Sprintf("node-%04d", i)))
		}
		add("node-600-shrink-all", append(append([]scriptOp(nil), grow...), all...)...)
	}
	// Long names: many levels of nodes with small blocks.
	if heavy {
		n := 600 // a 64 KiB block takes ~200 of them
		switch bs {
		case 1024:
			n = 1500 // three levels
		case 4096:
			n = 5600 // three levels
		}
		var ops []scriptOp
		long := func(i int) string { return fmt.Sprintf("%04d-%s", i, bytes.Repeat([]byte{'l'}, 240)) }
		for i := 0; i < n; i++ {
			ops = append(ops, set(User, long(i), []byte{byte(i)}))
		}
		add("long-names", ops...)
		r := rand.New(rand.NewPCG(3, 4))
		for _, i := range r.Perm(n)[:n*9/10] {
			ops = append(ops, rm(User, long(i)))
		}
		add("long-names-shrink", ops...)
	}
	// The fork goes with the last attribute and comes back sized for the
	// next one (its value length taken modulo 256, as the kernel does).
	for _, n := range []int{0, 15, 100, 200, 300, 600, 10000} {
		add(fmt.Sprintf("refork-%d", n), set(User, "a", []byte("a")), rm(User, "a"), set(User, "b", val(n, 9)),
			set(User, "c", val(15, 1)), set(User, "d", val(30, 2)))
	}
	// Other data forks: the short-form rules depend on them.
	for _, setup := range []string{"data", "frag", "dir"} {
		var grow []scriptOp
		for i := 0; i < 40; i++ {
			grow = append(grow, set(User, fmt.Sprintf("a%02d", i), val(10+i, byte(i))))
		}
		addOn(setup, setup+"-grow", grow...)
		var shrink []scriptOp
		for i := 39; i >= 0; i-- {
			shrink = append(shrink, rm(User, fmt.Sprintf("a%02d", i)))
		}
		addOn(setup, setup+"-grow-shrink", append(append([]scriptOp(nil), grow...), shrink...)...)
		addOn(setup, setup+"-refork", set(User, "a", []byte("a")), rm(User, "a"), set(User, "b", val(100, 1)),
			set(User, "c", val(150, 2)))
		addOn(setup, setup+"-random", randomScript(uint64(len(setup)), 300)...)
	}
	// Random mixes.
	for seed := uint64(1); seed <= 6; seed++ {
		add(fmt.Sprintf("random-%d", seed), randomScript(seed, 500)...)
	}
	for seed := uint64(10); heavy && seed < 13+uint64(*kernelRandom); seed++ {
		add(fmt.Sprintf("random-long-%d", seed), randomScript(seed, 3000)...)
	}
	return out
}

// randomScript makes ops sets, replacements and removals over a few
// hundred names in the three namespaces, with values of every size.
func randomScript(seed uint64, n int) []scriptOp {
	r := rand.New(rand.NewPCG(seed, 77))
	var ops []scriptOp
	type k struct {
		ns   uint8
		name string
	}
	var live []k
	present := map[k]bool{}
	for len(ops) < n {
		p := r.IntN(100)
		if p < 55 || len(live) == 0 {
			ns := [...]uint8{User, User, Trusted, Secure}[r.IntN(4)]
			nl := 1 + r.IntN(20)
			if r.IntN(10) == 0 {
				nl = 1 + r.IntN(255-len(nsPrefix[ns]))
			}
			name := make([]byte, nl)
			for i := range name {
				name[i] = byte('a' + r.IntN(26))
			}
			kk := k{ns, string(name)}
			if present[kk] {
				continue
			}
			present[kk] = true
			live = append(live, kk)
			ops = append(ops, scriptOp{ns: ns, name: kk.name, value: randomValue(r)})
			continue
		}
		i := r.IntN(len(live))
		kk := live[i]
		if p < 75 {
			ops = append(ops, scriptOp{ns: kk.ns, name: kk.name, value: randomValue(r)})
			continue
		}
		ops = append(ops, scriptOp{remove: true, ns: kk.ns, name: kk.name})
		delete(present, kk)
		live[i] = live[len(live)-1]
		live = live[:len(live)-1]
	}
	return ops
}

func randomValue(r *rand.Rand) []byte {
	var n int
	switch p := r.IntN(100); {
	case p < 60:
		n = r.IntN(40)
	case p < 75:
		n = 250 + r.IntN(8)
	case p < 90:
		n = 40 + r.IntN(1000)
	case p < 97:
		n = 2000 + r.IntN(3000)
	default:
		n = 5000 + r.IntN(format.MaxAttrValueLen-5000)
	}
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(r.Uint32())
	}
	return v
}
