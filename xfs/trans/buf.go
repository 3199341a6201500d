package trans

import (
	"sync"
	"sync/atomic"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// Ops describe a kind of metadata block.
type Ops struct {
	// Name is the kind of block. Ops of one name verify the same
	// structure (they may differ in the owner or AG they check): a block
	// verified by one is not verified again for another.
	Name string
	// Verify checks a block read from disk (CRC, then structure).
	Verify func(b []byte, daddr format.Daddr) error
	// Finish prepares a modified block for writing (sets its CRC).
	Finish func(b []byte)
}

// Buf is one cached metadata block: len(data) bytes at Daddr.
type Buf struct {
	daddr format.Daddr
	size  int
	ops   atomic.Pointer[Ops] // what the block is; its current holder decides

	// lock is held by the transaction that has the buffer; it serialises
	// writers. Readers outside transactions use data without it.
	lock sync.Mutex
	// data is the committed content; replaced, never modified in place.
	data atomic.Pointer[version]
	// newest is the log ticket of the latest commit that changed or freed
	// the block: a write-back of an older version skips the block when
	// that commit is durable too (it writes, or cancels, after it).
	newest atomic.Uint64
	refs   int // holders: transactions, readers, pending write-backs; guarded by the lock of its cache shard
	wbRefs int // of which pending write-backs; guarded by the shard's lock
	// queued are the tickets of the logged commits of the block whose
	// write-backs have not run, in log order; guarded by the shard's
	// lock. A write-back leaves the block to the next of them when that
	// one is durable too: it runs later in the same pass.
	queued []xlog.Ticket
}

// setOps records what the block now is. Most holders find the kind
// already set: skipping the store keeps the buffer's cache line shared
// between the CPUs that read it (an atomic store costs a locked exchange
// and a write barrier every time).
func (b *Buf) setOps(ops *Ops) {
	if b.ops.Load() != ops {
		b.ops.Store(ops)
	}
}

// held reports whether anything refers to the buffer, which then stays
// cached; the caller holds its shard's lock.
func (b *Buf) held() bool { return b.refs > 0 }

func (b *Buf) bytes() int64 { return int64(b.size) }

// Daddr is the buffer's disk address.
func (b *Buf) Daddr() format.Daddr { return b.daddr }

// Bytes returns the committed content. Callers must not modify it.
func (b *Buf) Bytes() []byte { return b.data.Load().b }

// version is one committed content of a block, with the kind it is known
// to be: the ops that verified it when it was read, or finished it at
// commit. A reader of another kind verifies it again (checkKind).
type version struct {
	b    []byte // never modified while it is a version
	kind atomic.Pointer[Ops]
	// shared: a reader without the block's lock took it; published: its
	// commit made it current. Both decide whether it may be recycled
	// once retired (see recycle.go).
	shared, published atomic.Bool
	borrowed          atomic.Int32 // readers reading it under a Lease
	// written: its commit's write-back is done (passEnd); recycled: it
	// went back to the pool, which happens once.
	written, recycled atomic.Bool
}

func newVersion(b []byte, kind *Ops) *version {
	v := &version{b: b}
	v.kind.Store(kind)
	return v
}
