package trans

import (
	"fmt"
	"sync"

	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// Cache holds metadata buffers by disk address, bounded by a memory
// budget. Buffers held by a transaction are never evicted.
type Cache struct {
	dev    dev.Device
	budget int // bytes

	mu    sync.Mutex // guards bufs, the LRU list, bytes and refs
	bufs  map[format.Daddr]*Buf
	head  Buf // LRU sentinel: head.next is the most recently used
	bytes int

	busy Busy

	// log receives every commit before its blocks are written in place
	// (nil: blocks are written in place directly, for tests of this
	// package). logged holds the size of every block logged since the
	// log was opened, so that freeing one logs a cancel.
	log      *xlog.Writer
	loggedMu sync.Mutex // guards logged
	logged   map[format.Daddr]int
	// noWriteback leaves committed blocks only in the log (tests of
	// recovery).
	noWriteback bool

	shutMu  sync.Mutex // guards shutErr
	shutErr error      // set once a commit's write failed
}

// NewCache returns a cache over d keeping about budget bytes of buffers.
func NewCache(d dev.Device, budget int) *Cache {
	c := &Cache{dev: d, budget: budget, bufs: make(map[format.Daddr]*Buf)}
	c.head.next, c.head.prev = &c.head, &c.head
	c.busy.init()
	return c
}

// SetLog routes every later commit through w.
func (c *Cache) SetLog(w *xlog.Writer) {
	c.log = w
	c.logged = make(map[format.Daddr]int)
}

// Log returns the log writer, if any.
func (c *Cache) Log() *xlog.Writer { return c.log }

// SkipWriteback makes commits stop writing blocks in place: they exist
// only in the log and the cache, as after a crash right after the log
// write. For recovery tests only.
func (c *Cache) SkipWriteback() { c.noWriteback = true }

// Device is the device the cache reads and writes.
func (c *Cache) Device() dev.Device { return c.dev }

// Busy returns the busy-extent tracker shared by this cache's transactions.
func (c *Cache) Busy() *Busy { return &c.busy }

// lookup finds or creates the buffer header for daddr; the caller gets a
// reference that must be dropped with release. loaded reports whether the
// buffer already holds data.
func (c *Cache) lookup(daddr format.Daddr, size int, ops *Ops) (*Buf, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.bufs[daddr]; ok && b.size != size && b.refs == 0 {
		// The block was reused as metadata of another size: forget the
		// old buffer.
		b.prev.next, b.next.prev = b.next, b.prev
		b.next, b.prev = nil, nil
		delete(c.bufs, daddr)
		c.bytes -= b.size
	}
	if b, ok := c.bufs[daddr]; ok {
		if b.size != size {
			return nil, false, fmt.Errorf("buffer at daddr %d is cached with %d bytes, asked for %d: %w",
				daddr, b.size, size, format.Corrupt("buffer", fmt.Sprintf("daddr %d", daddr), "overlapping metadata of different sizes"))
		}
		if ops != nil {
			b.ops.CompareAndSwap(nil, ops)
		}
		b.refs++
		c.touchLocked(b)
		return b, b.data.Load() != nil, nil
	}
	b := &Buf{daddr: daddr, size: size, refs: 1}
	b.ops.Store(ops)
	c.bufs[daddr] = b
	c.bytes += size
	c.touchLocked(b)
	c.evictLocked()
	return b, false, nil
}

func (c *Cache) release(b *Buf) {
	c.mu.Lock()
	b.refs--
	c.evictLocked()
	c.mu.Unlock()
}

func (c *Cache) touchLocked(b *Buf) {
	if b.next != nil {
		b.prev.next, b.next.prev = b.next, b.prev
	}
	b.next, b.prev = c.head.next, &c.head
	c.head.next.prev, c.head.next = b, b
}

// evictLocked drops least recently used unreferenced buffers over budget.
func (c *Cache) evictLocked() {
	for b := c.head.prev; c.bytes > c.budget && b != &c.head; {
		prev := b.prev
		if b.refs == 0 {
			b.prev.next, b.next.prev = b.next, b.prev
			b.next, b.prev = nil, nil
			delete(c.bufs, b.daddr)
			c.bytes -= b.size
		}
		b = prev
	}
}

// Read returns the committed content of a block outside any transaction,
// reading and verifying it on a miss. The slice must not be modified.
func (c *Cache) Read(daddr format.Daddr, size int, ops *Ops) ([]byte, error) {
	b, loaded, err := c.lookup(daddr, size, ops)
	if err != nil {
		return nil, err
	}
	defer c.release(b)
	if loaded {
		return b.Bytes(), nil
	}
	if err := c.load(b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// load reads and verifies a buffer's block from the device. Concurrent
// loads of the same block are harmless: both read the same committed bytes.
func (c *Cache) load(b *Buf) error {
	data := make([]byte, b.size)
	if _, err := c.dev.ReadAt(data, format.DaddrToByte(b.daddr)); err != nil {
		return fmt.Errorf("read daddr %d: %w", b.daddr, err)
	}
	if ops := b.ops.Load(); ops != nil && ops.Verify != nil {
		if err := ops.Verify(data, b.daddr); err != nil {
			return format.Located(err, fmt.Sprintf("daddr %d", b.daddr))
		}
	}
	b.data.CompareAndSwap(nil, &data)
	return nil
}

// Invalidate forgets a cached block (used when metadata is freed, so a
// later reuse of the block as file data cannot be shadowed by stale
// metadata). It must not be held by a transaction.
func (c *Cache) Invalidate(daddr format.Daddr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.bufs[daddr]; ok && b.refs == 0 {
		b.prev.next, b.next.prev = b.next, b.prev
		delete(c.bufs, daddr)
		c.bytes -= b.size
	}
}
