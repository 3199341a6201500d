package trans

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/xfs3/xfs3/xfs/format"
)

// Block copies are recycled. A transaction changes a private copy of each
// block it changes, and the copy becomes the block's next committed
// version; the version it replaces is garbage once nothing can read it.
// Left to Go's collector, those copies were two thirds of what a small
// change allocated and drove most of its collections; recycling them
// needs a proof that nothing reads a retired version.
//
// Who can hold a version's bytes:
//   - readers under a Lease (Cache.ReadLeased, ReadCopy): until Release;
//   - a transaction holding the block (its lock): only the current one;
//   - the log, through the commit's items: until the commit's batch is
//     written (the writer drops them then), before it is durable;
//   - the log, through the diff item of the commit that replaced it
//     (which the leader diffs against it when it writes that commit's
//     batch): borrowed by that commit until its write-back;
//   - the write-back: the commit's pinned entry, the pass's gathered
//     write and the unwritten map (ReadAt), until passEnd has written it
//     and forgotten it;
//   - lock-free readers (Cache.Read): for as long as they like.
//
// So a version created by a commit may be recycled at its passEnd, after
// its write and its forget, if it was published (a write-back may run
// before its commit has published it), is no longer the block's current
// one and no lock-free reader ever took it; one still current then is
// recycled at the passEnd of the commit that replaced it, by the same
// tests. Only versions whose write-back is done are recycled: one read
// from disk never is. Readers take a version through
// Buf.committed, which marks it shared and then checks it is still
// current; the recycler checks it is no longer current and then that it
// is not shared. Go's atomics are sequentially consistent, so of a
// reader's mark-then-check and a replacement-then-check at least one
// sees the other's store: either the recycler sees the mark and leaves
// the version to the collector, or the reader sees the replacement and
// takes the new version instead. Shared versions are never recycled;
// a Lease counts its reader in and out instead, by the same argument.

// A Lease holds the block versions one reader reads (a directory lookup)
// until Release; they are not recycled meanwhile. The reader must keep
// none of their bytes past Release. A Lease is used by one goroutine.
type Lease struct {
	held   []*version
	inline [4]*version
}

// Release gives back every version the lease holds.
func (l *Lease) Release() {
	for i, v := range l.held {
		v.borrowed.Add(-1)
		l.held[i] = nil
	}
	l.held = l.held[:0]
}

// ReadLeased is Read for a reader under lease l: the block's bytes stay
// valid until l.Release, and its version may be recycled after that.
func (c *Cache) ReadLeased(l *Lease, daddr format.Daddr, size int, ops *Ops) ([]byte, error) {
	b, v, err := c.borrowed(daddr, size, ops)
	if v != nil {
		if l.held == nil {
			l.held = l.inline[:0]
		}
		l.held = append(l.held, v)
	}
	return b, err
}

// ReadCopy copies len(dst) bytes at off of a block's committed content
// into dst, outside any transaction, reading and verifying the block on a
// miss: for readers that want a part of a block (an inode) and keep
// nothing of it.
func (c *Cache) ReadCopy(daddr format.Daddr, size int, ops *Ops, off int, dst []byte) error {
	if off < 0 || off+len(dst) > size {
		return fmt.Errorf("trans: copy of %d bytes at %d from a %d-byte block", len(dst), off, size)
	}
	b, v, err := c.borrowed(daddr, size, ops)
	if v != nil {
		defer v.borrowed.Add(-1)
	}
	if err != nil {
		return err
	}
	copy(dst, b[off:])
	return nil
}

// borrowed returns a block's committed content: borrowed from its version
// v, which the caller gives back with v.borrowed.Add(-1) (also on error),
// or read from disk (v nil: a version read from disk is never recycled).
func (c *Cache) borrowed(daddr format.Daddr, size int, ops *Ops) ([]byte, *version, error) {
	b, _, err := c.lookup(daddr, size, ops)
	if err != nil {
		return nil, nil, err
	}
	defer c.release(b)
	v := b.borrow()
	if v == nil {
		data, err := c.load(b, ops)
		return data, nil, err
	}
	if err := checkKind(b, v, ops); err != nil {
		return nil, v, err
	}
	return v.b, v, nil
}

// committed returns b's current version for a reader that holds no lock
// of the block, marked so that it is never recycled; nil if b holds no
// data.
func (b *Buf) committed() *version {
	for {
		v := b.data.Load()
		if v == nil || v.shared.Load() {
			return v
		}
		v.shared.Store(true)
		if b.data.Load() == v {
			return v
		}
	}
}

// borrow returns b's current version for a reader that gives it back
// with v.borrowed.Add(-1) (a Lease): the same handshake as committed,
// with a count instead of a mark, so that a version only borrowed can
// still be recycled if its readers are done when its write-back ends.
func (b *Buf) borrow() *version {
	for {
		v := b.data.Load()
		if v == nil {
			return nil
		}
		v.borrowed.Add(1)
		if b.data.Load() == v {
			return v
		}
		v.borrowed.Add(-1)
	}
}

// retired reports whether v, a version of b that a commit created, may
// be reused: it was published, b has moved past it, no lock-free reader
// took it for good and none has it on lease.
func (b *Buf) retired(v *version) bool {
	return v.published.Load() && b.data.Load() != v && !v.shared.Load() && v.borrowed.Load() == 0
}

// blockPool keeps retired block copies for the next transactions, by
// size class (powers of two from 512 bytes to 64 KiB), each class
// bounded to poolClassBytes.
type blockPool struct {
	classes [poolClasses]poolClass
}

type poolClass struct {
	mu   sync.Mutex
	free [][]byte
}

const (
	poolMinShift   = 9 // 512 bytes
	poolClasses    = 8 // up to 64 KiB
	poolClassBytes = 4 << 20
)

// poolClassOf returns the size class of n bytes, or -1 if n is not one.
func poolClassOf(n int) int {
	if n < 1<<poolMinShift || n&(n-1) != 0 {
		return -1
	}
	c := bits.TrailingZeros(uint(n)) - poolMinShift
	if c >= poolClasses {
		return -1
	}
	return c
}

// get returns n bytes of undefined content.
func (p *blockPool) get(n int) []byte {
	if c := poolClassOf(n); c >= 0 {
		pc := &p.classes[c]
		pc.mu.Lock()
		if k := len(pc.free); k > 0 {
			b := pc.free[k-1]
			pc.free[k-1] = nil
			pc.free = pc.free[:k-1]
			pc.mu.Unlock()
			return b
		}
		pc.mu.Unlock()
	}
	return make([]byte, n)
}

// clone returns a copy of src.
func (p *blockPool) clone(src []byte) []byte {
	b := p.get(len(src))
	copy(b, src)
	return b
}

// putAll gives back bufs, which nothing else refers to, taking each
// class's lock once. Under testChecks they are poisoned first, so that a
// reader the proof above missed decodes garbage and fails its checks
// instead of passing by luck.
func (p *blockPool) putAll(bufs [][]byte) {
	if testChecks() {
		for _, b := range bufs {
			copy(b, poison[:])
		}
	}
	for c := range p.classes {
		pc := &p.classes[c]
		locked := false
		for _, b := range bufs {
			if poolClassOf(len(b)) != c || cap(b) != len(b) {
				continue
			}
			if !locked {
				pc.mu.Lock()
				locked = true
			}
			if (len(pc.free)+1)*len(b) <= poolClassBytes {
				pc.free = append(pc.free, b)
			}
		}
		if locked {
			pc.mu.Unlock()
		}
	}
}

// poison is what a recycled copy holds under testChecks until reused.
var poison = func() (p [1 << (poolMinShift + poolClasses - 1)]byte) {
	for i := range p {
		p[i] = 0xDB
	}
	return p
}()

// retiredOf appends to bufs the copies a commit's write-backs let go,
// once passEnd has written and forgotten them: its own versions if they
// are retired already, and the versions they replaced, which were still
// current at their own passEnd.
func retiredOf(wb []writeBack, bufs [][]byte) [][]byte {
	for _, e := range wb {
		if e.v == nil {
			continue
		}
		e.v.written.Store(true)
		for _, v := range [2]*version{e.v, e.prev} {
			if v != nil && v.written.Load() && e.b.retired(v) && v.recycled.CompareAndSwap(false, true) {
				bufs = append(bufs, v.b)
			}
		}
	}
	return bufs
}
