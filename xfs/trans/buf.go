package trans

import (
	"sync"
	"sync/atomic"

	"github.com/xfs3/xfs3/xfs/format"
)

// Ops describe a kind of metadata block.
type Ops struct {
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
	data atomic.Pointer[[]byte]
	// newest is the log ticket of the latest commit that changed or freed
	// the block: a write-back of an older version skips the block when
	// that commit is durable too (it writes, or cancels, after it).
	newest atomic.Uint64
	// lru links, guarded by Cache.mu
	prev, next *Buf
	refs       int // holders: transactions, readers, pending write-backs; guarded by Cache.mu
	wbRefs     int // of which pending write-backs; guarded by Cache.mu
}

// Daddr is the buffer's disk address.
func (b *Buf) Daddr() format.Daddr { return b.daddr }

// Bytes returns the committed content. Callers must not modify it.
func (b *Buf) Bytes() []byte { return *b.data.Load() }
