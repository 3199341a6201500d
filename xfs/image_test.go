package xfs_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// Helpers shared by the corruption table and the fuzz target: an image held
// in memory that is decoded with package format to find metadata, a
// copy-on-write device to patch it, and a bounded walk over a volume.

// image is a pristine volume image in memory with its geometry.
type image struct {
	b   []byte
	sb  *format.Superblock
	geo format.Geometry
}

func loadImage(t testing.TB, img string) *image {
	t.Helper()
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := format.DecodeSuperblock(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Verify(b[:sb.SectSize]); err != nil {
		t.Fatalf("%s: %v", img, err)
	}
	return &image{b: b, sb: sb, geo: format.NewGeometry(sb)}
}

// fsbOff is the byte offset of a filesystem block.
func (im *image) fsbOff(fsb format.FsBlock) int64 {
	return format.DaddrToByte(im.geo.FsbToDaddr(fsb))
}

// agHeaderOff is the byte offset of AG header sector n (1 AGF, 2 AGI).
func (im *image) agHeaderOff(ag format.AgNumber, n int) int64 {
	return format.DaddrToByte(im.geo.AgHeaderDaddr(ag, n))
}

// inoOff is the byte offset of an inode.
func (im *image) inoOff(t testing.TB, ino format.Ino) int64 {
	t.Helper()
	off, err := im.geo.InoLocation(ino)
	if err != nil {
		t.Fatal(err)
	}
	return off
}

// dinode returns the verified core and raw bytes of an inode.
func (im *image) dinode(t testing.TB, ino format.Ino) (*format.Dinode, []byte) {
	t.Helper()
	off := im.inoOff(t, ino)
	raw := im.b[off : off+int64(im.geo.InodeSize)]
	d, err := format.VerifyInode(&im.geo, ino, raw)
	if err != nil {
		t.Fatalf("pristine inode %d: %v", ino, err)
	}
	return d, raw
}

// forkOff is the byte offset of the start of an inode's fork.
func (im *image) forkOff(t testing.TB, ino format.Ino, f xfs.Fork) int64 {
	t.Helper()
	d, _ := im.dinode(t, ino)
	off := im.inoOff(t, ino) + format.InodeCoreSize
	if f == xfs.AttrFork {
		if d.ForkOff == 0 {
			t.Fatalf("inode %d has no attr fork", ino)
		}
		off += int64(d.ForkOff) << 3
	}
	return off
}

// extents returns the extent map of an extents or btree fork.
func (im *image) extents(t testing.TB, ino format.Ino, f xfs.Fork) []format.Extent {
	t.Helper()
	d, raw := im.dinode(t, ino)
	data, attr := d.Forks(raw)
	fork, fmtv, n := data, d.Format, d.DataExtents()
	if f == xfs.AttrFork {
		fork, fmtv, n = attr, d.AFormat, d.AttrExtents()
	}
	switch fmtv {
	case format.FmtExtents:
		ext := make([]format.Extent, n)
		for i := range ext {
			ext[i] = format.DecodeExtent(fork[i*format.ExtentRecSize:])
		}
		return ext
	case format.FmtBtree:
		levels := im.bmbtLevels(t, ino, f)
		var ext []format.Extent
		shape := &format.BmbtShape
		for _, fsb := range levels[len(levels)-1] {
			b := im.block(fsb)
			nrecs := int(binary.BigEndian.Uint16(b[6:]))
			for r := 0; r < nrecs; r++ {
				ext = append(ext, format.DecodeExtent(shape.Rec(b, r)))
			}
		}
		return ext
	}
	t.Fatalf("inode %d %v has format %d", ino, f, fmtv)
	return nil
}

// bmbtLevels returns the on-disk blocks of a btree fork, one slice per
// level from the highest block level down to the leaves, in key order.
func (im *image) bmbtLevels(t testing.TB, ino format.Ino, f xfs.Fork) [][]format.FsBlock {
	t.Helper()
	d, raw := im.dinode(t, ino)
	data, attr := d.Forks(raw)
	fork := data
	if f == xfs.AttrFork {
		fork = attr
	}
	root, err := format.DecodeBmdrRoot(fork)
	if err != nil {
		t.Fatalf("inode %d: %v", ino, err)
	}
	var levels [][]format.FsBlock
	ptrs := root.Ptrs
	for level := int(root.Level) - 1; level >= 0; level-- {
		levels = append(levels, ptrs)
		var next []format.FsBlock
		for _, p := range ptrs {
			b := im.block(p)
			if level > 0 {
				for r := 0; r < int(binary.BigEndian.Uint16(b[6:])); r++ {
					next = append(next, format.FsBlock(format.BmbtShape.Ptr(b, r)))
				}
			}
		}
		ptrs = next
	}
	return levels
}

// block returns the bytes of one filesystem block.
func (im *image) block(fsb format.FsBlock) []byte {
	off := im.fsbOff(fsb)
	return im.b[off : off+int64(im.geo.BlockSize)]
}

// mapOff returns the byte offset of a run of count file blocks starting
// at fileoff, which must be mapped contiguously.
func (im *image) mapOff(t testing.TB, ext []format.Extent, fileoff format.FileOff, count int) int64 {
	t.Helper()
	for _, e := range ext {
		if e.StartOff <= fileoff && fileoff+format.FileOff(count) <= e.End() {
			return im.fsbOff(e.StartBlock + format.FsBlock(fileoff-e.StartOff))
		}
	}
	t.Fatalf("file blocks %d+%d are not mapped contiguously", fileoff, count)
	return 0
}

// dirBlockOff returns the byte offset of directory block da (in
// filesystem blocks of the data fork) and the directory block size.
func (im *image) dirBlockOff(t testing.TB, ino format.Ino, da format.FileOff) (int64, int) {
	t.Helper()
	return im.mapOff(t, im.extents(t, ino, xfs.DataFork), da, im.geo.DirBlockFsbs()), im.geo.DirBlkSize
}

// leafDa is the first directory leaf block (da number in fs blocks).
func (im *image) leafDa() format.FileOff {
	return format.FileOff(uint64(format.DirLeafOffset) >> im.geo.BlockLog)
}

// overlay is a copy-on-write dev.Device over a pristine image: writes go
// to private copies of 4 KiB pages, so each test or fuzz input patches
// the image without copying all of it. A device may be declared larger
// than its image; the rest reads as zeros. Like a file, it takes reads
// and writes from several goroutines at once: the log's writer and the
// write-back run beside the caller's transactions.
type overlay struct {
	base  []byte
	size  int64
	mu    sync.Mutex // guards pages and their bytes
	pages map[int64][]byte
}

const overlayPage = 4096

var zeroPage = make([]byte, overlayPage)

func newOverlay(base []byte) *overlay {
	return &overlay{base: base, size: int64(len(base)), pages: make(map[int64][]byte)}
}

func (o *overlay) page(pg int64, write bool) []byte {
	if p, ok := o.pages[pg]; ok {
		return p
	}
	start := pg * overlayPage
	var p []byte
	if end := start + overlayPage; end <= int64(len(o.base)) {
		p = o.base[start:end]
	} else {
		p = zeroPage
		if start < int64(len(o.base)) {
			p = append(o.base[start:len(o.base):len(o.base)], zeroPage[:end-int64(len(o.base))]...)
		}
	}
	if write {
		p = append([]byte(nil), p...)
		o.pages[pg] = p
	}
	return p
}

func (o *overlay) check(n int, off int64) error {
	if off < 0 || off+int64(n) > o.size {
		return fmt.Errorf("access of %d bytes at %d: %w (device has %d bytes)", n, off, io.ErrUnexpectedEOF, o.size)
	}
	return nil
}

func (o *overlay) ReadAt(p []byte, off int64) (int, error) {
	if err := o.check(len(p), off); err != nil {
		return 0, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for n := 0; n < len(p); {
		pos := off + int64(n)
		n += copy(p[n:], o.page(pos/overlayPage, false)[pos%overlayPage:])
	}
	return len(p), nil
}

func (o *overlay) WriteAt(p []byte, off int64) (int, error) {
	if err := o.check(len(p), off); err != nil {
		return 0, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for n := 0; n < len(p); {
		pos := off + int64(n)
		n += copy(o.page(pos/overlayPage, true)[pos%overlayPage:], p[n:])
	}
	return len(p), nil
}

func (o *overlay) Size() int64  { return o.size }
func (o *overlay) Sync() error  { return nil }
func (o *overlay) Close() error { return nil }

// read returns a copy of n bytes at off.
func (o *overlay) read(off int64, n int) []byte {
	b := make([]byte, n)
	if _, err := o.ReadAt(b, off); err != nil {
		panic(err)
	}
	return b
}

func (o *overlay) write(off int64, b []byte) {
	if _, err := o.WriteAt(b, off); err != nil {
		panic(err)
	}
}

func (o *overlay) put8(off int64, v uint8) { o.write(off, []byte{v}) }

func (o *overlay) put16(off int64, v uint16) {
	o.write(off, binary.BigEndian.AppendUint16(nil, v))
}

func (o *overlay) put32(off int64, v uint32) {
	o.write(off, binary.BigEndian.AppendUint32(nil, v))
}

func (o *overlay) put64(off int64, v uint64) {
	o.write(off, binary.BigEndian.AppendUint64(nil, v))
}

func (o *overlay) get16(off int64) uint16 { return binary.BigEndian.Uint16(o.read(off, 2)) }
func (o *overlay) get32(off int64) uint32 { return binary.BigEndian.Uint32(o.read(off, 4)) }
func (o *overlay) get64(off int64) uint64 { return binary.BigEndian.Uint64(o.read(off, 8)) }

// flip inverts one byte, which breaks a CRC without touching anything the
// verifiers check before it.
func (o *overlay) flip(off int64) { o.put8(off, ^o.read(off, 1)[0]) }

// reseal recomputes the CRC at crcOff of the n-byte structure at off.
func (o *overlay) reseal(off int64, n, crcOff int) {
	b := o.read(off, n)
	format.SetCRC(b, crcOff)
	o.write(off, b)
}

// writeTo copies every patched page into the image file img, which must
// hold the same pristine bytes.
func (o *overlay) writeTo(t testing.TB, img string) {
	t.Helper()
	f, err := os.OpenFile(img, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for pg, p := range o.pages {
		if _, err := f.WriteAt(p, pg*overlayPage); err != nil {
			t.Fatal(err)
		}
	}
}

// walkLimits bound a walk over a possibly corrupt volume.
type walkLimits struct {
	maxNodes int   // inodes visited
	maxDepth int   // directory depth
	readCap  int64 // bytes read from the start of each file (plus its tail)
}

// walker visits everything reachable from the root: Statfs, and for every
// inode Stat, xattrs (list and get), file data, symlink targets,
// directory listings with a hash lookup of every name, and path lookups.
// It reports every error to onErr and stops when onErr returns false.
// Directories are entered once, so a corrupt tree cannot make it loop.
type walker struct {
	v       *xfs.Volume
	lim     walkLimits
	onErr   func(op string, err error) bool
	nodes   int
	entered map[format.Ino]bool
	stopped bool
	buf     []byte
	// lenient accepts a hash lookup that finds another inode than the
	// directory listing, which a damaged directory may legitimately do.
	lenient bool
}

func newWalker(v *xfs.Volume, lim walkLimits, onErr func(string, error) bool) *walker {
	return &walker{v: v, lim: lim, onErr: onErr, entered: make(map[format.Ino]bool), buf: make([]byte, 256<<10)}
}

func (w *walker) fail(op string, err error) bool {
	if err == nil || w.stopped {
		return w.stopped
	}
	if !w.onErr(op, err) {
		w.stopped = true
	}
	return true
}

func (w *walker) run() {
	if _, err := w.v.Space().Statfs(); w.fail("statfs", err) {
		if w.stopped {
			return
		}
	}
	w.visit(w.v.Root(), ".", 0)
}

func (w *walker) visit(ino format.Ino, p string, depth int) {
	if w.stopped || w.nodes >= w.lim.maxNodes {
		return
	}
	w.nodes++
	st, err := w.v.Stat(ino)
	if w.fail("stat "+p, err) {
		return
	}
	if xs, err := w.v.Xattrs().List(ino); !w.fail("listxattr "+p, err) {
		for _, x := range xs {
			if _, err := w.v.Xattrs().Get(ino, x.FullName()); w.fail("getxattr "+p+" "+x.FullName(), err) {
				break
			}
		}
	}
	if w.stopped {
		return
	}
	if p != "." && depth <= 4 {
		_, err := w.v.Names().LookupPath(p, false)
		w.fail("lookuppath "+p, err)
	}
	switch st.Mode & format.SIFMT {
	case format.SIFREG:
		w.read(ino, p, st.Size)
	case format.SIFLNK:
		if _, err := w.v.Files().Readlink(ino); !w.fail("readlink "+p, err) && depth <= 4 {
			// Targets may dangle or loop: only a failure to read
			// what they pass through counts.
			_, err := w.v.Names().LookupPath(p, true)
			if !errors.Is(err, xfs.ErrNotFound) && !errors.Is(err, xfs.ErrNotDir) && !errors.Is(err, xfs.ErrLoop) && !errors.Is(err, xfs.ErrNameTooLong) {
				w.fail("lookuppath follow "+p, err)
			}
		}
	case format.SIFDIR:
		if w.entered[ino] || depth >= w.lim.maxDepth {
			return
		}
		w.entered[ino] = true
		ents, err := w.v.Names().ReadDir(ino)
		if w.fail("readdir "+p, err) {
			return
		}
		for _, de := range ents {
			if w.stopped {
				return
			}
			got, err := w.v.Names().Lookup(ino, de.Name)
			if w.fail("lookup "+path.Join(p, de.Name), err) {
				continue
			}
			if got != de.Ino && !w.lenient {
				w.fail("lookup "+path.Join(p, de.Name), fmt.Errorf("lookup found inode %d, readdir %d", got, de.Ino))
				continue
			}
			w.visit(de.Ino, path.Join(p, de.Name), depth+1)
		}
	}
}

// read reads up to readCap bytes from the start of a file and its last
// block, which is enough to map every extent of small files and to touch
// both ends of big ones.
func (w *walker) read(ino format.Ino, p string, size int64) {
	for off := int64(0); off < min(size, w.lim.readCap); off += int64(len(w.buf)) {
		if _, err := w.v.Files().ReadAt(ino, w.buf, off); err != nil && !errors.Is(err, io.EOF) {
			w.fail("read "+p, err)
			return
		}
	}
	if size > w.lim.readCap {
		if _, err := w.v.Files().ReadAt(ino, w.buf[:4096], size-1); err != nil && !errors.Is(err, io.EOF) {
			w.fail("read tail "+p, err)
		}
	}
}

// firstError walks v and returns the first error the walk meets.
func firstError(v *xfs.Volume) (op string, err error) {
	w := newWalker(v, walkLimits{maxNodes: 1 << 20, maxDepth: 64, readCap: 1 << 40}, func(o string, e error) bool {
		op, err = o, e
		return false
	})
	w.run()
	return op, err
}

// lookupSnap returns the inode of a path of a golden snapshot.
func lookupSnap(t testing.TB, snap oracle.Snapshot, p string) format.Ino {
	t.Helper()
	e, ok := snap.Lookup(p)
	if !ok {
		t.Fatalf("golden snapshot has no %s", p)
	}
	return format.Ino(e.Ino)
}

// TestOverlayConcurrent: the overlay takes reads and writes from several
// goroutines at once, as the engine's log writer and write-back make
// them, and each write lands whole. (Without its lock, the race detector
// fails this test, as it failed TestReplayBase under CI.)
func TestOverlayConcurrent(t *testing.T) {
	const pages, writers = 64, 4
	o := newOverlay(make([]byte, pages*overlayPage))
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pg := w; pg < pages; pg += writers {
				o.write(int64(pg)*overlayPage+100, []byte{byte(pg), byte(pg)})
				o.read(int64((pg+1)%pages)*overlayPage, overlayPage)
			}
		}()
	}
	wg.Wait()
	for pg := range pages {
		if got := o.get16(int64(pg)*overlayPage + 100); got != uint16(pg)<<8|uint16(pg) {
			t.Errorf("page %d holds %#x after the concurrent writes, want %#x", pg, got, uint16(pg)<<8|uint16(pg))
		}
	}
}
