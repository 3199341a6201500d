package dir_test

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

var (
	seedFlag = flag.Int64("dir.seed", 0, "run the directory model test with this seed only")
	longFlag = flag.Bool("dir.long", false, "run the directory model test with more seeds")
)

// modelRun is the size of one randomized run on one geometry.
type modelRun struct {
	gc       geoCase
	peak     int // entries to grow to before shrinking back to empty
	racePeak int // the same under the race detector (0: peak)
}

// modelRuns: 1 KiB directory blocks grow to 50,000 entries (a three-level
// da-btree and a dozen free-index blocks); the others stay smaller to keep
// the test fast, but every run passes through all four formats both ways.
// Under the race detector the 1 KiB run stops at 10,000 entries (still
// three levels and several free-index blocks) and 64 KiB directory blocks
// stop short of node form (which needs 8,100 entries).
var modelRuns = []modelRun{
	{geo("4k"), 6000, 3000},
	{geo("4k-attrfork"), 3000, 0},
	{geo("b1k"), 3000, 0},
	{geo("d1k"), 50000, 10000},
	{geo("n16k"), 9000, 4000},
	{geo("n64k"), 9000, 1500},
	{geo("i2k"), 3000, 0},
}

// regressionSeeds are seeds that once failed, kept forever.
var regressionSeeds = []int64{}

func TestModel(t *testing.T) {
	t.Parallel()
	seeds := append([]int64{1}, regressionSeeds...)
	if *longFlag {
		for s := int64(2); s <= 8; s++ {
			seeds = append(seeds, s)
		}
	}
	if *seedFlag != 0 {
		seeds = []int64{*seedFlag}
	}
	for _, mr := range modelRuns {
		for _, seed := range seeds {
			peak := mr.peak
			if raceEnabled && mr.racePeak > 0 {
				peak = mr.racePeak
			}
			if testing.Short() {
				peak = min(peak, 2000)
			}
			t.Run(fmt.Sprintf("%s/seed%d", mr.gc.name, seed), func(t *testing.T) {
				t.Parallel()
				mt := newModelTest(t, mr.gc, seed)
				defer func() {
					if t.Failed() {
						t.Logf("reproduce with: go test ./xfs/dir -run 'TestModel/%s/seed%d' -dir.seed=%d", mr.gc.name, seed, seed)
					}
				}()
				mt.run(peak)
			})
		}
	}
}

type modelTest struct {
	t      *testing.T
	gc     geoCase
	m      *fork.Mem
	rng    *rand.Rand
	ig     inoGen
	model  map[string]entry
	names  []string // keys of model, for random picks
	index  map[string]int
	parent format.Ino
	family [][]byte // colliding names waiting to be added
	ops    int
	checks int
	maxInf dir.Info
	forms  map[dir.Form]bool
}

func newModelTest(t *testing.T, gc geoCase, seed int64) *modelTest {
	g := testGeometry(gc)
	rng := rand.New(rand.NewSource(seed))
	mt := &modelTest{t: t, gc: gc, rng: rng, ig: inoGen{&g, rng}, model: map[string]entry{},
		index: map[string]int{}, parent: 128, forms: map[dir.Form]bool{}}
	mt.m = newDir(t, gc, mt.parent)
	return mt
}

// randomName returns a name of 1..255 bytes, no NUL or '/'.
func (mt *modelTest) randomName() []byte {
	n := 1 + mt.rng.Intn(255)
	if mt.rng.Intn(3) == 0 {
		n = 1 + mt.rng.Intn(24) // many short names keep blocks full of entries
	}
	b := make([]byte, n)
	for i := range b {
		for b[i] == 0 || b[i] == '/' {
			b[i] = byte(mt.rng.Intn(256))
		}
	}
	return b
}

// collide returns names with the hash of base: the hash folds each 4-byte
// group as c0<<21 ^ c1<<14 ^ c2<<7 ^ c3, so flipping bit 0 of c0 and bit 7
// of c1 (or of c2 and c3) leaves it unchanged.
func collide(rng *rand.Rand, base []byte, n int) [][]byte {
	groups := len(base) / 4
	seen := map[string]bool{string(base): true}
	out := [][]byte{base}
	for tries := 0; len(out) < n && tries < 20*n; tries++ {
		v := append([]byte(nil), base...)
		for g := 0; g < groups; g++ {
			for half := 0; half < 2; half++ {
				if rng.Intn(2) == 0 {
					i := 4*g + 2*half
					a, b := v[i]^1, v[i+1]^0x80
					if a != 0 && a != '/' && b != 0 && b != '/' {
						v[i], v[i+1] = a, b
					}
				}
			}
		}
		if !seen[string(v)] {
			seen[string(v)] = true
			out = append(out, v)
		}
	}
	return out
}

func (mt *modelTest) newName() []byte {
	if len(mt.family) == 0 && mt.rng.Intn(1500) == 0 {
		// A run of equal hashes long enough to cross leaf blocks.
		base := mt.randomName()
		for len(base) < 24 {
			base = mt.randomName()
		}
		fam := collide(mt.rng, base, 100+mt.rng.Intn(300))
		for _, f := range fam {
			if format.DaHashName(f) != format.DaHashName(base) {
				mt.t.Fatalf("collide made %q with another hash", f)
			}
		}
		mt.family = fam
	}
	if len(mt.family) > 0 && mt.rng.Intn(3) > 0 {
		n := mt.family[len(mt.family)-1]
		mt.family = mt.family[:len(mt.family)-1]
		return n
	}
	return mt.randomName()
}

func (mt *modelTest) put(name string, e entry) {
	if _, ok := mt.model[name]; !ok {
		mt.index[name] = len(mt.names)
		mt.names = append(mt.names, name)
	}
	mt.model[name] = e
}

func (mt *modelTest) del(name string) {
	i := mt.index[name]
	last := mt.names[len(mt.names)-1]
	mt.names[i] = last
	mt.index[last] = i
	mt.names = mt.names[:len(mt.names)-1]
	delete(mt.index, name)
	delete(mt.model, name)
}

func (mt *modelTest) pick() string { return mt.names[mt.rng.Intn(len(mt.names))] }

// fingerprint hashes the fork's committed state.
func fingerprint(m *fork.Mem) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%d %d %x|", m.Fmt, m.DiSize, m.Data)
	ranges, _ := m.Mapped()
	for _, r := range ranges {
		for off := r[0]; off < r[1]; off++ {
			b, d, _ := m.Block(off)
			fmt.Fprintf(h, "%d %d|", off, d)
			h.Write(b)
		}
	}
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// step does one random operation, growing when grow is set.
func (mt *modelTest) step(grow bool) {
	t := mt.t
	mt.ops++
	r := mt.rng.Intn(100)
	// Growing: 80% adds, 12% removes; shrinking: 10% adds, 80% removes;
	// then 6% replaces, 1% ".." changes, 1% operations on missing names.
	addPct, removePct := 10, 80
	if grow {
		addPct, removePct = 80, 12
	}
	cancel := mt.rng.Intn(50) == 0
	var fp [32]byte
	fullCancelCheck := cancel && (mt.m.Blocks() < 32 || mt.rng.Intn(200) == 0)
	if fullCancelCheck {
		fp = fingerprint(mt.m)
	}
	mt.m.Begin()
	var name string
	var want entry
	var kind string
	var err error
	switch {
	case r < addPct || len(mt.names) == 0:
		kind = "add"
		nb := mt.newName()
		name = string(nb)
		want = entry{mt.ig.next(3), uint8(1 + mt.rng.Intn(7))}
		err = dir.Add(mt.m, nb, want.ino, want.ftype)
		_, exists := mt.model[name]
		exists = exists || name == "." || name == ".."
		if exists != errors.Is(err, dir.ErrExist) || !exists && err != nil {
			t.Fatalf("op %d: add %q: %v (exists %v)", mt.ops, name, err, exists)
		}
		if exists {
			cancel = true
			fullCancelCheck = false
		} else if !cancel {
			mt.put(name, want)
		}
	case r < addPct+removePct:
		kind = "remove"
		name = mt.pick()
		var ino format.Ino
		ino, err = dir.Remove(mt.m, []byte(name))
		if err != nil || ino != mt.model[name].ino {
			t.Fatalf("op %d: remove %q: %d %v, want %d", mt.ops, name, ino, err, mt.model[name].ino)
		}
		if !cancel {
			mt.del(name)
		}
	case r < 98:
		kind = "replace"
		name = mt.pick()
		want = entry{mt.ig.next(10), uint8(1 + mt.rng.Intn(7))}
		var old format.Ino
		old, err = dir.Replace(mt.m, []byte(name), want.ino, want.ftype)
		if err != nil || old != mt.model[name].ino {
			t.Fatalf("op %d: replace %q: %d %v, want %d", mt.ops, name, old, err, mt.model[name].ino)
		}
		if !cancel {
			mt.put(name, want)
		}
	case r < 99:
		kind = "setparent"
		p := mt.ig.next(30)
		if err = dir.SetParent(mt.m, p); err != nil {
			t.Fatalf("op %d: set parent: %v", mt.ops, err)
		}
		if !cancel {
			mt.parent = p
		}
	default:
		kind = "miss"
		name = string(mt.randomName())
		if _, ok := mt.model[name]; ok || name == "." || name == ".." {
			name = ""
			break
		}
		if _, err := dir.Remove(mt.m, []byte(name)); !errors.Is(err, dir.ErrNotFound) {
			t.Fatalf("op %d: remove of missing %q: %v", mt.ops, name, err)
		}
		if _, _, err := dir.Lookup(mt.m, []byte(name)); !errors.Is(err, dir.ErrNotFound) {
			t.Fatalf("op %d: lookup of missing %q: %v", mt.ops, name, err)
		}
		cancel = true
		fullCancelCheck = false
	}
	if cancel {
		mt.m.Cancel()
		if fullCancelCheck && fingerprint(mt.m) != fp {
			t.Fatalf("op %d: %s %q then Cancel changed the directory", mt.ops, kind, name)
		}
	} else {
		mt.m.Commit()
	}
	f, err := dir.GetForm(mt.m)
	if err != nil {
		t.Fatalf("op %d: %v", mt.ops, err)
	}
	mt.forms[f] = true
	// The entry touched reads back as the model says.
	if name != "" && name != "." && name != ".." {
		ino, ft, err := dir.Lookup(mt.m, []byte(name))
		e, ok := mt.model[name]
		if ok != (err == nil) || ok && (ino != e.ino || ft != e.ftype) {
			t.Fatalf("op %d (%s, cancel %v): lookup %q = %d/%d %v, model %v %v", mt.ops, kind, cancel, name, ino, ft, err, e, ok)
		}
	}
}

// verify checks the whole directory against the model.
func (mt *modelTest) verify() {
	t := mt.t
	mt.checks++
	info, err := dir.Inspect(mt.m)
	if err != nil {
		t.Fatalf("after op %d (%d entries): %v", mt.ops, len(mt.model), err)
	}
	mt.forms[info.Form] = true
	if info.Entries != len(mt.model) {
		t.Fatalf("after op %d: Inspect counts %d entries, model has %d", mt.ops, info.Entries, len(mt.model))
	}
	if info.Levels > mt.maxInf.Levels {
		mt.maxInf.Levels = info.Levels
	}
	if info.FreeBlocks > mt.maxInf.FreeBlocks {
		mt.maxInf.FreeBlocks = info.FreeBlocks
	}
	got := listAll(t, mt.m)
	if len(got) != len(mt.model) {
		t.Fatalf("after op %d: List has %d entries, model %d", mt.ops, len(got), len(mt.model))
	}
	for k, v := range mt.model {
		if got[k] != v {
			t.Fatalf("after op %d: List says %q -> %v, model %v", mt.ops, k, got[k], v)
		}
	}
	for i := 0; i < 20 && len(mt.names) > 0; i++ {
		k := mt.pick()
		ino, ft, err := dir.Lookup(mt.m, []byte(k))
		if err != nil || (entry{ino, ft}) != mt.model[k] {
			t.Fatalf("after op %d: lookup %q = %d %d %v, model %v", mt.ops, k, ino, ft, err, mt.model[k])
		}
	}
	if p, err := dir.Parent(mt.m); err != nil || p != mt.parent {
		t.Fatalf("after op %d: parent %d %v, want %d", mt.ops, p, err, mt.parent)
	}
	if dot, ft, err := dir.Lookup(mt.m, []byte(".")); err != nil || dot != testOwner || ft != format.FTDir {
		t.Fatalf("after op %d: \".\" = %d %d %v", mt.ops, dot, ft, err)
	}
	empty, err := dir.IsEmpty(mt.m)
	if err != nil || empty != (len(mt.model) == 0) {
		t.Fatalf("after op %d: IsEmpty %v %v with %d entries", mt.ops, empty, err, len(mt.model))
	}
}

func (mt *modelTest) run(peak int) {
	next := 0
	checkpoint := func() {
		if mt.ops >= next {
			mt.verify()
			next = mt.ops + 25 + len(mt.model)/5
		}
	}
	for len(mt.model) < peak {
		mt.step(true)
		checkpoint()
	}
	mt.verify()
	for len(mt.model) > 0 {
		mt.step(false)
		checkpoint()
	}
	mt.verify()
	// A few more operations around empty, and the end state.
	for i := 0; i < 200; i++ {
		mt.step(i%2 == 0)
	}
	for len(mt.names) > 0 {
		mt.m.Begin()
		if _, err := dir.Remove(mt.m, []byte(mt.names[0])); err != nil {
			mt.t.Fatal(err)
		}
		mt.m.Commit()
		mt.del(mt.names[0])
	}
	mt.verify()
	if f, _ := dir.GetForm(mt.m); f != dir.ShortForm || mt.m.Blocks() != 0 {
		mt.t.Fatalf("empty directory is %v with %d blocks", f, mt.m.Blocks())
	}
	var forms []string
	for f := range mt.forms {
		forms = append(forms, f.String())
	}
	sort.Strings(forms)
	mt.t.Logf("%d ops, %d checks, forms %v, max levels %d, max free blocks %d", mt.ops, mt.checks, forms, mt.maxInf.Levels, mt.maxInf.FreeBlocks)
	// A short run (-short) or a 64k-block directory below 8,500 entries is too
	// small to reach node form; every full run must reach all four.
	tooSmall := testing.Short() || (mt.gc.dirLog == 4 && peak < 8500)
	if len(mt.forms) != 4 && !tooSmall {
		mt.t.Errorf("only reached forms %v", forms)
	}
	if peak >= 10000 && mt.gc.name == "d1k" && (mt.maxInf.Levels < 3 || mt.maxInf.FreeBlocks < 2) {
		mt.t.Errorf("50,000 entries gave %d levels and %d free-index blocks; want a multi-level tree and several free blocks", mt.maxInf.Levels, mt.maxInf.FreeBlocks)
	}
}
