package dev

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// ErrPowerCut is returned by every write and flush after a Fault device's
// power was cut.
var ErrPowerCut = errors.New("power cut (injected)")

// faultPage is the granularity of a Fault device's overlays.
const faultPage = 4096

// Fault is a test device over a base image with a volatile write cache:
// writes are visible to reads at once but survive a power cut only once a
// Sync has completed after them. CutAt arms a cut at the n-th write; from
// then on writes and syncs fail with ErrPowerCut, and Image builds what a
// disk would hold afterwards. Overlays are kept per 4 KiB page, so a large
// sparse base costs only what is written.
type Fault struct {
	base io.ReaderAt
	size int64

	mu      sync.Mutex       // guards everything below
	durable map[int64][]byte // pages as of the last completed Sync
	current map[int64][]byte // pages written since then (what reads see)
	pending []faultWrite     // writes since the last Sync, in order
	writes  int              // writes so far
	cutAt   int              // the write number that hits the cut (0: none)
	cut     bool             // power is off
	syncs   int              // completed syncs

	noDiscard bool    // Discard fails with ErrDiscardUnsupported
	discarded []Range // every range discarded, in order
}

// faultWrite is a write, or with data nil a discard of zero bytes.
type faultWrite struct {
	off  int64
	data []byte
	zero int64
}

func (w faultWrite) len() int64 {
	if w.data == nil {
		return w.zero
	}
	return int64(len(w.data))
}

// NewFault returns a device showing base (size bytes) with nothing written.
func NewFault(base io.ReaderAt, size int64) *Fault {
	return &Fault{base: base, size: size, durable: make(map[int64][]byte), current: make(map[int64][]byte)}
}

// OpenFault returns a Fault device over the image file at path, which it
// opens read-only and never writes; closeBase releases the file once the
// device and its Image are no longer needed.
func OpenFault(path string) (f *Fault, closeBase func() error, err error) {
	base, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := base.Stat()
	if err != nil {
		base.Close()
		return nil, nil, err
	}
	return NewFault(base, st.Size()), base.Close, nil
}

// CutAt arms a power cut: write number n (counting from 1 since the device
// was created) and everything after it fails with ErrPowerCut.
func (f *Fault) CutAt(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cutAt = n
}

// Cut cuts the power now.
func (f *Fault) Cut() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cut = true
}

// IsCut reports whether the power is off.
func (f *Fault) IsCut() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cut
}

// Stats returns the number of writes and completed syncs so far.
func (f *Fault) Stats() (writes, syncs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes, f.syncs
}

// Pending returns how many writes are not yet durable.
func (f *Fault) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

func (f *Fault) page(m map[int64][]byte, pg int64, fallback map[int64][]byte) ([]byte, error) {
	if p, ok := m[pg]; ok {
		return p, nil
	}
	if fallback != nil {
		if p, ok := fallback[pg]; ok {
			return p, nil
		}
	}
	p := make([]byte, faultPage)
	n := int64(faultPage)
	if pg+n > f.size {
		n = f.size - pg
	}
	if _, err := f.base.ReadAt(p[:n], pg); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return p, nil
}

// ReadAt reads what the device currently shows.
func (f *Fault) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > f.size {
		return 0, fmt.Errorf("read of %d bytes at %d: %w (device has %d bytes)", len(p), off, io.ErrUnexpectedEOF, f.size)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	done := 0
	for done < len(p) {
		pos := off + int64(done)
		pg := pos &^ (faultPage - 1)
		src, err := f.page(f.current, pg, f.durable)
		if err != nil {
			return done, err
		}
		done += copy(p[done:], src[pos-pg:])
	}
	return done, nil
}

// WriteAt writes p at off into the volatile cache.
func (f *Fault) WriteAt(p []byte, off int64) (int, error) {
	if err := f.write(faultWrite{off: off, data: append([]byte(nil), p...)}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteAtDurable writes p at off and makes that range durable, as a write
// with RWF_DSYNC does; other writes not yet flushed stay volatile.
func (f *Fault) WriteAtDurable(p []byte, off int64) (int, error) {
	if err := f.writeMode(faultWrite{off: off, data: append([]byte(nil), p...)}, true); err != nil {
		return 0, err
	}
	return len(p), nil
}

// trimWrites returns ws without the bytes in [lo, hi); a write that
// straddles the range keeps its pieces either side, in its place.
func trimWrites(ws []faultWrite, lo, hi int64) []faultWrite {
	var out []faultWrite
	for _, w := range ws {
		end := w.off + w.len()
		if end <= lo || w.off >= hi {
			out = append(out, w)
			continue
		}
		if w.off < lo {
			out = append(out, w.piece(0, lo-w.off))
		}
		if end > hi {
			out = append(out, w.piece(hi-w.off, end-w.off))
		}
	}
	return out
}

// piece is the part [from, to) of w, relative to its start.
func (w faultWrite) piece(from, to int64) faultWrite {
	if w.data == nil {
		return faultWrite{off: w.off + from, zero: to - from}
	}
	return faultWrite{off: w.off + from, data: w.data[from:to]}
}

// write applies w to the volatile cache and queues it for a crash.
func (f *Fault) write(w faultWrite) error { return f.writeMode(w, false) }

// writeMode is write, or with durable set a write that is durable at once.
func (f *Fault) writeMode(w faultWrite, durable bool) error {
	if w.off < 0 || w.off+w.len() > f.size {
		return fmt.Errorf("write of %d bytes at %d: %w (device has %d bytes)", w.len(), w.off, io.ErrUnexpectedEOF, f.size)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut {
		return ErrPowerCut
	}
	f.writes++
	if f.cutAt > 0 && f.writes >= f.cutAt {
		f.cut = true
		return ErrPowerCut
	}
	if err := f.apply(f.current, f.durable, w); err != nil {
		return err
	}
	if durable {
		// Older volatile writes must not land over it in a crash image.
		f.pending = trimWrites(f.pending, w.off, w.off+w.len())
		return f.apply(f.durable, nil, w)
	}
	f.pending = append(f.pending, w)
	return nil
}

// zeroPage stands for every page a discard covered whole; it is shared
// and never written (apply copies it first).
var zeroPage = make([]byte, faultPage)

func isZeroPage(p []byte) bool { return len(p) > 0 && &p[0] == &zeroPage[0] }

// apply writes w into the pages of m, taking missing pages from fallback
// or the base; pages it touches are private to m afterwards, except
// whole pages a zero write covers, which become zeroPage.
func (f *Fault) apply(m, fallback map[int64][]byte, w faultWrite) error {
	n := w.len()
	for done := int64(0); done < n; {
		pos := w.off + done
		pg := pos &^ (faultPage - 1)
		span := min(faultPage-(pos-pg), n-done)
		if w.data == nil && span == faultPage {
			m[pg] = zeroPage
			done += span
			continue
		}
		dst, ok := m[pg]
		if !ok || isZeroPage(dst) {
			src, err := f.page(m, pg, fallback)
			if err != nil {
				return err
			}
			dst = append([]byte(nil), src...)
			m[pg] = dst
		}
		if w.data == nil {
			clear(dst[pos-pg : pos-pg+span])
		} else {
			copy(dst[pos-pg:], w.data[done:done+span])
		}
		done += span
	}
	return nil
}

// Discard zeros [off, off+n) in the volatile cache. It counts as one
// write: a cut can hit it, and a crash may drop it like any write not yet
// flushed (a disk may forget a discard too; either way the range held
// nothing of value).
func (f *Fault) Discard(off, n int64) error {
	if f.refusesDiscard() {
		return ErrDiscardUnsupported
	}
	if n <= 0 {
		return fmt.Errorf("discard of %d bytes at %d: %w", n, off, io.ErrUnexpectedEOF)
	}
	if err := f.write(faultWrite{off: off, zero: n}); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.discarded = append(f.discarded, Range{off, n})
	return nil
}

// DiscardGranularity is a sector.
func (f *Fault) DiscardGranularity() int64 { return 512 }

// RefuseDiscard makes the device one that cannot discard.
func (f *Fault) RefuseDiscard() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noDiscard = true
}

func (f *Fault) refusesDiscard() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.noDiscard
}

// Discarded returns every range discarded so far, in order.
func (f *Fault) Discarded() []Range {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Range(nil), f.discarded...)
}

// Sync makes every write so far durable.
func (f *Fault) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut {
		return ErrPowerCut
	}
	for pg, p := range f.current {
		f.durable[pg] = p
	}
	f.current = make(map[int64][]byte)
	f.pending = nil
	f.syncs++
	return nil
}

// Size returns the device size.
func (f *Fault) Size() int64 { return f.size }

// Close does nothing: the overlays stay readable for Image.
func (f *Fault) Close() error { return nil }

// Crash says what survives a power cut beyond the durable state: of the
// first Keep writes that were not yet flushed, all of them (a disk that
// wrote part of its cache in order) or, with Subset, those Subset picks
// (a disk that reorders); the last one kept is torn when Tear is set: its
// final sector does not reach the disk.
type Crash struct {
	Keep   int
	Tear   bool
	Subset func(i int) bool
}

// Image writes the post-crash content into path, which must already hold a
// copy of the base image.
func (f *Fault) Image(path string, c Crash) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer out.Close()
	pages := make(map[int64][]byte, len(f.durable))
	for pg, p := range f.durable {
		if !isZeroPage(p) {
			p = append([]byte(nil), p...) // Image may be called again
		}
		pages[pg] = p
	}
	keep := min(c.Keep, len(f.pending))
	var kept []faultWrite
	for i, w := range f.pending[:keep] {
		if c.Subset == nil || c.Subset(i) {
			kept = append(kept, w)
		}
	}
	for i, w := range kept {
		if c.Tear && i == len(kept)-1 {
			// The final sector never reaches the disk. Sectors are the
			// unit a disk writes atomically (XFS relies on that for its
			// one-sector headers), so a one-sector write is simply lost.
			if w.data == nil {
				w.zero = max(w.zero-512, 0)
			} else {
				w.data = w.data[:max(len(w.data)-512, 0)]
			}
		}
		if err := f.apply(pages, nil, w); err != nil {
			return err
		}
	}
	for pg, p := range pages {
		n := int64(len(p))
		if pg+n > f.size {
			n = f.size - pg
		}
		if _, err := out.WriteAt(p[:n], pg); err != nil {
			return err
		}
	}
	return out.Sync()
}
