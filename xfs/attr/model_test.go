package attr

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// The randomized model test grows forks to 2,000+ attributes and back to
// nothing, comparing with a map after every change. A failure prints its
// seed; rerun it with
//
//	go test ./xfs/attr -run TestModel -attr.seed=N [-attr.long]
//
// and add the seed to regressionSeeds once fixed.
var (
	seedFlag = flag.Uint64("attr.seed", 0, "seed of the randomized attribute model test (0: the fixed seeds)")
	longFlag = flag.Bool("attr.long", false, "run the randomized attribute model test longer")
)

// testGeometry is enough of a filesystem for attribute forks.
func testGeometry(bs, inodeSize int) format.Geometry {
	g := format.Geometry{BlockSize: bs, InodeSize: inodeSize}
	for 1<<g.BlockLog < bs {
		g.BlockLog++
	}
	copy(g.UUID[:], "xfs3-attr-tests!")
	return g
}

const testIno = format.Ino(1234567)

// modelCase is one geometry of the randomized test.
type modelCase struct {
	name      string
	bs, isize int
	dataFmt   int8
	dataBytes int
	target    int // attributes to grow to
}

var modelCases = []modelCase{
	{"4k-i512-extents", 4096, 512, format.FmtExtents, 16, 2100},
	{"1k-i512-local", 1024, 512, format.FmtLocal, 40, 2100},
	{"64k-i2048-extents", 65536, 2048, format.FmtExtents, 48, 2100},
	{"4k-i2048-local", 4096, 2048, format.FmtLocal, 120, 400},
	{"1k-i512-btree", 1024, 512, format.FmtBtree, bmdrSpace(2), 700},
}

// regressionSeeds are seeds that once failed; they run every time.
var traceModel = false

var regressionSeeds = []uint64{}

func TestModel(t *testing.T) {
	seeds := append([]uint64{1}, regressionSeeds...)
	if *seedFlag != 0 {
		seeds = []uint64{*seedFlag}
	}
	for _, mc := range modelCases {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed=%d", mc.name, seed), func(t *testing.T) {
				t.Parallel()
				target := mc.target
				if testing.Short() {
					target /= 4
				}
				if *longFlag {
					target *= 2
				}
				runModel(t, mc, seed, target)
			})
		}
	}
}

type model struct {
	t       *testing.T
	mc      modelCase
	seed    uint64
	rng     *rand.Rand
	f       *memFork
	attrs   map[string][]byte // namespace byte + name → value
	keys    []string          // attrs' keys, for picking at random
	ops     int
	forms   map[Form]bool // formats seen
	depth   int           // deepest tree seen (levels including the leaves)
	fullOps int           // operations that failed for lack of blocks
}

func (m *model) fatalf(f string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("seed %d, op %d (%d attributes): %s", m.seed, m.ops, len(m.attrs), fmt.Sprintf(f, args...))
}

func runModel(t *testing.T, mc modelCase, seed uint64, target int) {
	g := testGeometry(mc.bs, mc.isize)
	m := &model{t: t, mc: mc, seed: seed, rng: rand.New(rand.NewPCG(seed, uint64(mc.bs)<<16|uint64(mc.isize))),
		f: newMemFork(g, testIno, mc.dataFmt, mc.dataBytes), attrs: map[string][]byte{}, forms: map[Form]bool{}}
	// Full checks read every block: fewer of them with big blocks.
	period := 97
	if mc.bs > 4096 {
		period = 389
	}
	if raceEnabled {
		period *= 3
	}
	// Grow to the target, mostly adding.
	for len(m.attrs) < target {
		m.step(0.75)
		if m.ops%period == 0 || len(m.attrs) < 40 {
			m.verify()
		}
	}
	m.verify()
	if !m.forms[FormNode] {
		m.fatalf("never reached node form")
	}
	// Shrink to nothing, mostly removing.
	for len(m.attrs) > 0 {
		m.step(0.12)
		if m.ops%period == 0 || len(m.attrs) < 40 {
			m.verify()
		}
	}
	m.verify()
	if m.mc.dataFmt != format.FmtBtree && m.f.ForkOff() != 0 {
		m.fatalf("fork still there (forkoff %d) with no attributes", m.f.ForkOff())
	}
	if m.f.Blocks() != 0 {
		m.fatalf("%d blocks left with no attributes", m.f.Blocks())
	}
	t.Logf("%d operations (%d failed on a full volume), forms seen %v, tree depth up to %d", m.ops, m.fullOps, m.forms, m.depth)
	if m.fullOps == 0 && target >= 1000 {
		t.Errorf("no operation ran out of space")
	}
}

func (m *model) randName() []byte {
	var n int
	switch p := m.rng.IntN(100); {
	case p < 70:
		n = 1 + m.rng.IntN(16)
	case p < 90:
		n = 17 + m.rng.IntN(48)
	case p < 97:
		n = 65 + m.rng.IntN(190)
	default:
		n = 250 + m.rng.IntN(6)
	}
	b := make([]byte, n)
	for i := range b {
		if m.rng.IntN(4) == 0 {
			b[i] = byte(1 + m.rng.IntN(255))
		} else {
			b[i] = byte('a' + m.rng.IntN(26))
		}
	}
	return b
}

func (m *model) randValue() []byte {
	var n int
	switch p := m.rng.IntN(1000); {
	case p < 600:
		n = m.rng.IntN(40)
	case p < 750:
		n = 250 + m.rng.IntN(8) // around the short-form limit
	case p < 880:
		n = 40 + m.rng.IntN(600)
	case p < 960:
		n = 2900 + m.rng.IntN(300) // around 3/4 of a 4 KiB block
	case p < 990:
		n = 3100 + m.rng.IntN(20000)
	default:
		n = 60000 + m.rng.IntN(format.MaxAttrValueLen-60000+1)
	}
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(m.rng.Uint32())
	}
	return v
}

func (m *model) randNS() uint8 {
	return [...]uint8{User, User, User, Trusted, Secure}[m.rng.IntN(5)]
}

func key(ns uint8, name []byte) string { return string(rune(ns)) + string(name) }

func (m *model) pick() (uint8, []byte) {
	k := m.keys[m.rng.IntN(len(m.keys))]
	return uint8(k[0]), []byte(k[1:])
}

func (m *model) put(k string, v []byte) {
	if _, ok := m.attrs[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.attrs[k] = v
}

func (m *model) del(k string) {
	delete(m.attrs, k)
	for i, x := range m.keys {
		if x == k {
			m.keys[i] = m.keys[len(m.keys)-1]
			m.keys = m.keys[:len(m.keys)-1]
			return
		}
	}
}

// step runs one random operation; pAdd is the chance of adding a new name.
func (m *model) step(pAdd float64) {
	m.ops++
	p := m.rng.Float64()
	var ns uint8
	var name []byte
	newName := func() {
		for {
			ns, name = m.randNS(), m.randName()
			if _, ok := m.attrs[key(ns, name)]; !ok {
				return
			}
		}
	}
	switch {
	case p < pAdd || len(m.keys) == 0:
		newName()
		flags := 0
		if m.rng.IntN(4) == 0 {
			flags = Create
		}
		m.set(ns, name, m.randValue(), flags)
	case p < pAdd+(1-pAdd)*0.35:
		ns, name = m.pick()
		flags := 0
		if m.rng.IntN(3) == 0 {
			flags = Replace
		}
		m.set(ns, name, m.randValue(), flags)
	case p < pAdd+(1-pAdd)*0.85:
		ns, name = m.pick()
		m.remove(ns, name)
	default:
		// Operations that must fail and change nothing, and lookups.
		switch m.rng.IntN(4) {
		case 0:
			ns, name = m.pick()
			m.set(ns, name, []byte("x"), Create)
		case 1:
			newName()
			m.set(ns, name, []byte("x"), Replace)
		case 2:
			newName()
			m.remove(ns, name)
		default:
			newName()
			if _, err := Get(m.f, ns, name); !errors.Is(err, ErrNoData) {
				m.fatalf("Get of a missing name: %v", err)
			}
			ns, name = m.pick()
			m.checkOne(ns, name)
		}
	}
}

func (m *model) set(ns uint8, name, value []byte, flags int) {
	k := key(ns, name)
	_, exists := m.attrs[k]
	var want error
	switch {
	case exists && flags == Create:
		want = ErrExist
	case !exists && flags == Replace:
		want = ErrNoData
	}
	if m.mutate(func() error { return Set(m.f, ns, name, value, flags) }, want, ns, name) {
		m.put(k, value)
		m.checkOne(ns, name)
	}
}

func (m *model) remove(ns uint8, name []byte) {
	k := key(ns, name)
	var want error
	if _, exists := m.attrs[k]; !exists {
		want = ErrNoData
	}
	if m.mutate(func() error { return Remove(m.f, ns, name) }, want, ns, name) {
		m.del(k)
		m.checkOne(ns, name)
	}
}

// checkOne compares one attribute with the model.
func (m *model) checkOne(ns uint8, name []byte) {
	m.t.Helper()
	want, ok := m.attrs[key(ns, name)]
	got, err := Get(m.f, ns, name)
	switch {
	case !ok && !errors.Is(err, ErrNoData):
		m.fatalf("Get of removed %s.%q: %v", format.NamespaceName(ns), name, err)
	case ok && err != nil:
		m.fatalf("Get %s.%q: %v", format.NamespaceName(ns), name, err)
	case ok && !bytes.Equal(got, want):
		m.fatalf("Get %s.%q: %d bytes, want %d", format.NamespaceName(ns), name, len(got), len(want))
	}
}

// mutate runs fn in a transaction expecting wantErr. Failing operations
// and a few random ones are cancelled, and then nothing may have changed.
// Some operations run on a nearly full volume (fork.Mem's BlockLimit):
// they may fail for lack of blocks, and are then cancelled too. It
// reports whether the change was committed.
func (m *model) mutate(fn func() error, wantErr error, ns uint8, name []byte) bool {
	m.t.Helper()
	full := wantErr == nil && m.rng.IntN(12) == 0
	cancel := wantErr != nil || m.rng.IntN(40) == 0
	// Comparing whole forks is slow: do it for the random cancels, the
	// operations that ran out of space and some failing operations; the
	// rest only compare the inode side.
	deep := (cancel && (wantErr == nil || m.rng.IntN(8) == 0)) || full
	var before forkState
	if deep {
		before = m.f.state()
	}
	forkOff, blocks, data := m.f.ForkOff(), m.f.Blocks(), bytes.Clone(m.f.Data)
	if cancel || full {
		m.f.Begin()
	}
	if full {
		m.f.BlockLimit = m.f.Blocks() + m.rng.IntN(2)
	}
	err := fn()
	m.f.BlockLimit = 0
	if traceModel {
		m.t.Logf("op %d %s.%q cancel=%v full=%v err=%v form=%v", m.ops, format.NamespaceName(ns), name, cancel, full, err, m.f.Format())
	}
	switch {
	case full && errors.Is(err, fork.ErrMemFull):
		cancel = true
		m.fullOps++
	case (wantErr == nil && err != nil) || (wantErr != nil && !errors.Is(err, wantErr)):
		m.fatalf("%s.%q: got error %v, want %v", format.NamespaceName(ns), name, err, wantErr)
	}
	if cancel {
		m.f.Cancel()
		if m.f.ForkOff() != forkOff || m.f.Blocks() != blocks || !bytes.Equal(m.f.Data, data) {
			m.fatalf("cancelled operation on %s.%q changed the inode", format.NamespaceName(ns), name)
		}
		if deep {
			if after := m.f.state(); !after.equal(before) {
				m.fatalf("cancelled operation on %s.%q changed the fork", format.NamespaceName(ns), name)
			}
		}
		return false
	}
	m.f.Commit()
	return true
}

// verify compares the fork with the model and checks its format.
func (m *model) verify() {
	m.t.Helper()
	if err := Check(m.f); err != nil {
		m.fatalf("Check: %v", err)
	}
	got := map[string][]byte{}
	err := List(m.f, func(ns uint8, name, value []byte) error {
		k := key(ns, name)
		if _, dup := got[k]; dup {
			return fmt.Errorf("%q listed twice", name)
		}
		got[k] = bytes.Clone(value)
		return nil
	})
	if err != nil {
		m.fatalf("List: %v", err)
	}
	if len(got) != len(m.attrs) {
		m.fatalf("List returned %d attributes, model has %d", len(got), len(m.attrs))
	}
	keys := make([]string, 0, len(got))
	for k := range m.attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !bytes.Equal(got[k], m.attrs[k]) {
			m.fatalf("%q: listed %d bytes, model %d", k[1:], len(got[k]), len(m.attrs[k]))
		}
	}
	form, err := FormOf(m.f)
	if err != nil {
		m.fatalf("FormOf: %v", err)
	}
	m.forms[form] = true
	if form == FormNode {
		root, _ := newOp(m.f).t.Read(0)
		m.depth = max(m.depth, dabtree.NodeLevel(root.B)+1)
	}
	m.checkThresholds(form)
}

// checkThresholds checks that the format matches the kernel's rules for
// the attributes present.
func (m *model) checkThresholds(form Form) {
	m.t.Helper()
	sfSize, sfOK, remote := format.AttrSFHdrSize, true, false
	for k, v := range m.attrs {
		nl := len(k) - 1
		if nl >= sfEntMax || len(v) >= sfEntMax {
			sfOK = false
		}
		sfSize += sfEntsize(nl, len(v))
		if _, local := newEntsize(m.mc.bs, nl, len(v)); !local {
			remote = true
		}
	}
	switch form {
	case FormNone:
		if len(m.attrs) != 0 {
			m.fatalf("no attribute fork but %d attributes", len(m.attrs))
		}
	case FormShort:
		if !sfOK || remote {
			m.fatalf("short form holds an entry too long for it")
		}
		if got := m.f.lit() - m.f.ForkOff()*8; got < sfSize {
			m.fatalf("short form of %d bytes in a %d-byte fork", sfSize, got)
		}
	case FormLeaf, FormNode:
		if len(m.attrs) == 0 {
			m.fatalf("%v form with no attributes", form)
		}
		// A single leaf whose entries all fit in the inode should have gone
		// back to short form on the removal that made them fit.
		if leaf, _ := newOp(m.f).isLeaf(); leaf && form == FormLeaf {
			leaf, err := newOp(m.f).t.Read(0)
			if err != nil {
				m.fatalf("read leaf: %v", err)
			}
			if off := allFit(leaf.B, m.f); off != 0 && sfOK && !remote {
				dataFmt, _ := m.f.DataFork()
				if dataFmt != format.FmtBtree || len(m.attrs) > 0 {
					m.fatalf("leaf form although all %d attributes fit in short form (forkoff %d)", len(m.attrs), off)
				}
			}
		}
	}
	if m.f.ForkOff() != 0 && m.f.Format() != format.FmtLocal {
		dataFmt, _ := m.f.DataFork()
		if want := resetForkOff(&m.f.Geo, 0, dataFmt); dataFmt != format.FmtBtree && m.f.ForkOff() < want && form != FormNone {
			m.fatalf("block-form fork at offset %d, below the default %d", m.f.ForkOff(), want)
		}
	}
}
