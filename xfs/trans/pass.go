package trans

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// wbPass gathers the in-place writes of one write-back pass (xlog runs
// one at a time, between its PassHooks) and issues them at its end
// sorted and merged: the blocks a pass's many commits changed lie close
// together (an inode chunk, a directory's blocks, an AG's header
// sectors), and one write per run of adjacent blocks instead of one per
// block cut the in-place writes of an unlink about fourfold.
//
// While a pass is open, a commit that becomes durable after the pass
// took its durable ticket does not make the blocks it freed reusable
// until the pass's writes are done. The pass still writes a block that
// one of its commits changed and such a later commit freed; reused as
// file data, the block must not get that old metadata over its new
// contents. Blocks freed by commits up to the pass's ticket are never
// written by it (the write-back leaves them alone), so they are
// reusable at once.
type wbPass struct {
	mu      sync.Mutex // guards the fields up to scratch: OnDurable runs beside a pass
	open    bool
	durable uint64 // the open pass's durable ticket
	clearTo uint64 // newest durable ticket told while open (0: none)
	writes  []gatheredWrite
	index   map[gatheredKey]int // of writes
	seq     int                 // of the newest write gathered
	done    []passDone

	// scratch joins a run of adjacent blocks for one write on a device
	// without vectored writes, iovecs lists them for one with; only the
	// pass's End uses them (and retired), and keeps them for the next
	// pass.
	scratch []byte
	iovecs  [][]byte
	// retired collects the copies the pass's commits retired, given back
	// to the pool together.
	retired [][]byte
}

type gatheredKey struct {
	daddr format.Daddr
	size  int
}

type gatheredWrite struct {
	off  int64
	data []byte
	seq  int // when it was last gathered: for overlapping writes
}

func (w gatheredWrite) end() int64 { return w.off + int64(len(w.data)) }

// passDone is what a pass does once its writes are on the device: a
// commit's blocks are no longer unwritten, its pins and references go.
type passDone struct {
	wb      []writeBack
	own     xlog.Ticket
	release *Buf
}

// maxMergedWrite bounds one merged write.
const maxMergedWrite = 1 << 20

// passStart opens a pass whose durable ticket is durable (xlog's
// PassHooks.Start).
func (c *Cache) passStart(durable xlog.Ticket) {
	p := &c.pass
	p.mu.Lock()
	defer p.mu.Unlock()
	p.open, p.durable = true, uint64(durable)
}

// durableTold makes the blocks freed by commits up to t reusable: at
// once, or those freed after the open pass's ticket at the pass's end.
func (c *Cache) durableTold(t xlog.Ticket) {
	now := uint64(t)
	p := &c.pass
	p.mu.Lock()
	if p.open && now > p.durable {
		p.clearTo = max(p.clearTo, now)
		now = p.durable
	}
	p.mu.Unlock()
	c.busy.Clear(now)
}

// gather queues data for daddr in the open pass and reports whether a
// pass was open; a later write of the same block replaces an earlier.
func (p *wbPass) gather(daddr format.Daddr, data []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.open {
		return false
	}
	p.seq++
	k := gatheredKey{daddr, len(data)}
	w := gatheredWrite{off: format.DaddrToByte(daddr), data: data, seq: p.seq}
	if i, ok := p.index[k]; ok {
		p.writes[i] = w
		return true
	}
	if p.index == nil {
		p.index = make(map[gatheredKey]int)
	}
	p.index[k] = len(p.writes)
	p.writes = append(p.writes, w)
	return true
}

// after queues what to do once the open pass's writes are issued, and
// reports whether a pass was open.
func (p *wbPass) after(d passDone) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		p.done = append(p.done, d)
	}
	return p.open
}

// passEnd writes what the pass gathered, finishes its commits and makes
// the blocks freed meanwhile reusable (xlog's PassHooks.End). The pass's
// lock is not held through the writes, so a batch made durable meanwhile
// does not wait for them.
func (c *Cache) passEnd() error {
	p := &c.pass
	var err error
	for {
		p.mu.Lock()
		writes, done := p.writes, p.done
		p.writes, p.done = nil, nil
		clear(p.index)
		if len(writes) == 0 && len(done) == 0 {
			p.open = false
			clearTo := p.clearTo
			p.clearTo = 0
			p.mu.Unlock()
			if clearTo > 0 {
				c.busy.Clear(clearTo)
			}
			return err
		}
		p.mu.Unlock()
		if err == nil {
			if err = p.writeGathered(c.dev, writes); err != nil {
				c.shutDown(err)
			}
		}
		for _, d := range done {
			if d.wb != nil {
				if err == nil {
					c.unwritten.forget(d.wb, d.own)
				}
				c.unpin(d.wb)
				if err == nil {
					p.retired = retiredOf(d.wb, p.retired)
				}
			}
			if d.release != nil {
				c.release(d.release)
			}
		}
		c.blocks.putAll(p.retired)
		clear(p.retired)
		p.retired = p.retired[:0]
	}
}

// writeGathered issues the gathered writes in address order, each run of
// adjacent blocks as one write. Overlapping blocks (a block freed and
// reused with another size within a pass) never merge: then every write
// goes alone, in the order they were gathered, as they would have.
func (p *wbPass) writeGathered(d io.WriterAt, ws []gatheredWrite) error {
	slices.SortFunc(ws, func(a, b gatheredWrite) int { return cmp.Compare(a.off, b.off) })
	for i := 1; i < len(ws); i++ {
		if ws[i].off < ws[i-1].end() {
			slices.SortFunc(ws, func(a, b gatheredWrite) int { return cmp.Compare(a.seq, b.seq) })
			for _, w := range ws {
				if err := writeAt(d, w.data, w.off); err != nil {
					return err
				}
			}
			return nil
		}
	}
	vd, vectored := d.(vectorWriter)
	for i := 0; i < len(ws); {
		j, n := i+1, len(ws[i].data)
		for j < len(ws) && ws[j].off == ws[j-1].end() && n+len(ws[j].data) <= maxMergedWrite {
			n += len(ws[j].data)
			j++
		}
		var err error
		switch {
		case j == i+1:
			_, err = d.WriteAt(ws[i].data, ws[i].off)
		case vectored:
			p.iovecs = p.iovecs[:0]
			for _, w := range ws[i:j] {
				p.iovecs = append(p.iovecs, w.data)
			}
			_, err = vd.WriteVAt(p.iovecs, ws[i].off)
			clear(p.iovecs)
		default:
			p.scratch = p.scratch[:0]
			for _, w := range ws[i:j] {
				p.scratch = append(p.scratch, w.data...)
			}
			_, err = d.WriteAt(p.scratch, ws[i].off)
		}
		if err != nil {
			return fmt.Errorf("write daddr %d (%d bytes): %w", ws[i].off/format.BBSize, n, err)
		}
		i = j
	}
	return nil
}

// vectorWriter is a device that writes several buffers as one (dev.File):
// a merged run then needs no copy.
type vectorWriter interface {
	WriteVAt(bufs [][]byte, off int64) (int, error)
}

func writeAt(d io.WriterAt, data []byte, off int64) error {
	if _, err := d.WriteAt(data, off); err != nil {
		return fmt.Errorf("write daddr %d (%d bytes): %w", off/format.BBSize, len(data), err)
	}
	return nil
}
