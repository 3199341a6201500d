package quota

import (
	"math/rand"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// fakeRecords stands in for the quota file: records by project, read
// back by a Loader that counts its reads.
type fakeRecords struct {
	mu    sync.Mutex
	recs  map[uint32]Record
	loads atomic.Int64
}

func newFakeRecords(rng *rand.Rand, n uint32) *fakeRecords {
	f := &fakeRecords{recs: map[uint32]Record{}}
	for id := uint32(0); id < n; id++ {
		r := NewRecord(&testGeo, id)
		r.BCount, r.ICount = uint64(rng.Intn(1000)), uint64(rng.Intn(50))
		r.BlkHard = uint64(2000 + rng.Intn(1000))
		f.recs[id] = r
	}
	return f
}

func (f *fakeRecords) load(id uint32) (Record, format.Daddr, bool, error) {
	f.loads.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.recs[id]
	_, off := Locate(&testGeo, id)
	return r, format.Daddr(off), ok, nil
}

// newTestManager returns a manager holding every record of f, bounded to
// bound dquots; evictions run only when the test calls evict.
func newTestManager(f *fakeRecords, bound int) *Manager {
	m := NewManager(&testGeo, true)
	for _, r := range f.recs {
		m.Add(r, 0)
	}
	m.load, m.bound = f.load, int64(bound)
	return m
}

func (m *Manager) inTable(id uint32) *Dquot {
	v, ok := m.table.Load(id)
	if !ok {
		return nil
	}
	return v.(*Dquot)
}

// TestEvictionSparesReferencedAndDirty: an eviction pass removes only
// dquots nobody references whose counters equal their record, never
// project 0; a dquot it removed is dead (no reference can be taken), and
// the next user gets a new dquot read back from the record.
func TestEvictionSparesReferencedAndDirty(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	f := newFakeRecords(rng, 64)
	m := newTestManager(f, 8)
	var held, dirty []*Dquot
	for id := uint32(1); id <= 5; id++ {
		d, err := m.get(id)
		if err != nil || d == nil {
			t.Fatalf("get %d: %v %v", id, d, err)
		}
		held = append(held, d)
	}
	for id := uint32(6); id <= 9; id++ {
		d, _ := m.get(id)
		d.blocks.Add(3) // a reservation whose holder has dropped its reference
		d.put()
		dirty = append(dirty, d)
	}
	victim := m.inTable(40)
	m.evict() // the first pass spares what was used since the last one
	m.evict()
	if cached, evicted := m.Cached(); cached != 10 || evicted != 54 {
		t.Fatalf("cached %d, evicted %d; want 10 (project 0, 5 referenced, 4 dirty) and 54", cached, evicted)
	}
	for _, d := range append(append([]*Dquot{}, held...), dirty...) {
		if m.inTable(d.id) != d || d.refs.Load() < 0 {
			t.Fatalf("project %d: evicted while referenced or dirty", d.id)
		}
	}
	if m.inTable(0) == nil {
		t.Fatal("project 0 (the defaults) was evicted")
	}
	if victim.tryGet() {
		t.Fatal("a reference was taken on an evicted (dead) dquot")
	}
	loads := f.loads.Load()
	d, err := m.get(40)
	if err != nil || d == nil || d == victim {
		t.Fatalf("get after eviction: %p (evicted %p), %v", d, victim, err)
	}
	if f.loads.Load() != loads+1 || d.Usage().Blocks != int64(f.recs[40].BCount) || d.Limits().BlkHard != f.recs[40].BlkHard {
		t.Fatalf("read back %+v %+v, record %+v", d.Usage(), d.Limits(), f.recs[40])
	}
	d.put()
	for _, d := range held {
		d.put()
	}
	for _, d := range dirty {
		d.blocks.Add(-3)
	}
	m.evict()
	m.evict()
	if cached, _ := m.Cached(); cached > 6 {
		t.Fatalf("cached %d after everything became evictable, want ≤ 6 (the bound less a quarter)", cached)
	}
}

// TestConcurrentGetPutEvict: many goroutines reserve and release on many
// projects through a manager bounded to 4 dquots while eviction runs; no
// reservation is ever lost or doubled (every dquot ends equal to its
// record), and each project has at most one dquot.
func TestConcurrentGetPutEvict(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	const projects = 40
	f := newFakeRecords(rng, projects)
	m := newTestManager(f, 4)
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			r := rand.New(rand.NewSource(seed))
			for i := 0; i < 2000; i++ {
				id := uint32(r.Intn(projects))
				n := int64(1 + r.Intn(4))
				if err := m.Reserve(id, n, 1); err != nil {
					t.Errorf("reserve %d: %v", id, err)
					return
				}
				if r.Intn(4) == 0 {
					m.maybeEvict()
				}
				m.Release(id, n, 1)
			}
		}(int64(g))
	}
	wg.Wait()
	for m.evicting.Load() { // let a running pass finish
		runtime.Gosched()
	}
	m.evict()
	if _, evicted := m.Cached(); evicted == 0 {
		t.Fatal("nothing was evicted: the test did not exercise eviction")
	}
	n := int64(0)
	m.table.Range(func(_, v any) bool {
		d := v.(*Dquot)
		n++
		rec := f.recs[d.id]
		if d.refs.Load() != 0 || d.blocks.Load() != int64(rec.BCount) || d.inodes.Load() != int64(rec.ICount) || !d.clean() {
			t.Errorf("project %d: refs %d, blocks %d inodes %d, record %d %d", d.id, d.refs.Load(), d.blocks.Load(), d.inodes.Load(), rec.BCount, rec.ICount)
		}
		return true
	})
	if cached, _ := m.Cached(); cached != n {
		t.Fatalf("cached %d, table holds %d", cached, n)
	}
}
