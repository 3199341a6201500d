package refcount

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/trans"
	"github.com/xfs3/xfs3/xfs/trans/transtest"
)

// image is a volume file open through a buffer cache without a log
// (commits go straight to the file), with its allocator: how these tests
// read and change volumes that mkfs.xfs and the kernel made.
type image struct {
	t      testing.TB
	path   string
	dev    *dev.File
	sb     *format.Superblock
	geo    format.Geometry
	cache  *trans.Cache
	space  *alloc.Space
	closed bool
}

func openImage(t testing.TB, path string) *image {
	t.Helper()
	d, err := dev.Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	sector := make([]byte, 512)
	if _, err := d.ReadAt(sector, 0); err != nil {
		t.Fatal(err)
	}
	sb, err := format.DecodeSuperblock(sector)
	if err != nil {
		t.Fatal(err)
	}
	im := &image{t: t, path: path, dev: d, sb: sb, geo: format.NewGeometry(sb), cache: trans.NewCache(d, 16<<20)}
	im.space = alloc.NewSpace(&im.geo, im.cache.Busy())
	t.Cleanup(func() { im.close() })
	return im
}

// close flushes everything to the file and closes it, so that the kernel
// and xfs_repair see the changes.
func (im *image) close() {
	if im.closed {
		return
	}
	im.closed = true
	if err := errors.Join(im.cache.Sync(), im.dev.Close()); err != nil {
		im.t.Error(err)
	}
}

// change runs fn in a transaction of its own and commits it; a search
// that finds only busy space makes the blocks freed so far reusable and
// runs fn again.
func (im *image) change(fn func(tx *alloc.Tx) error) {
	im.t.Helper()
	for try := 0; ; try++ {
		tc, err := im.cache.Begin()
		if err != nil {
			im.t.Fatal(err)
		}
		tx := im.space.Begin(tc, transtest.NoReservation{})
		if err := fn(tx); err != nil {
			tx.Cancel()
			if errors.Is(err, alloc.ErrBusyOnly) && try == 0 {
				if err := im.cache.Sync(); err != nil {
					im.t.Fatal(err)
				}
				continue
			}
			im.t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			im.t.Fatal(err)
		}
		return
	}
}

// ags lists the volume's AG numbers.
func (im *image) ags() []format.AgNumber {
	var out []format.AgNumber
	for ag := range format.AgNumber(im.geo.AgCount) {
		out = append(out, ag)
	}
	return out
}

// records returns every AG's records as committed, after checking each
// tree whole (Check: structure, records, merges, agf_refcount_blocks).
func (im *image) records() map[format.AgNumber][]Rec {
	im.t.Helper()
	out := map[format.AgNumber][]Rec{}
	for _, ag := range im.ags() {
		tr, err := Committed(im.cache.Read, &im.geo, ag)
		if err != nil {
			im.t.Fatal(err)
		}
		if _, err := tr.Check(); err != nil {
			im.t.Fatalf("AG %d: %v", ag, err)
		}
		recs := records(im.t, tr)
		if len(recs) > 0 {
			out[ag] = recs
		}
	}
	return out
}

// levels returns the height of every AG's tree.
func (im *image) levels() []int {
	var out []int
	for _, ag := range im.ags() {
		tr, err := Committed(im.cache.Read, &im.geo, ag)
		if err != nil {
			im.t.Fatal(err)
		}
		out = append(out, tr.Levels())
	}
	return out
}

// freeExtents returns every AG's free extents (bnobt) as committed.
func (im *image) freeExtents() map[format.AgNumber][]Extent {
	im.t.Helper()
	out := map[format.AgNumber][]Extent{}
	im.change(func(tx *alloc.Tx) error {
		for _, ag := range im.ags() {
			a, err := tx.Lock(ag)
			if err != nil {
				return err
			}
			c := a.Tree(format.BtBno).NewCursor()
			ok, err := c.First()
			for ; err == nil && ok; ok, err = c.Increment() {
				b, _ := c.Get()
				r := format.DecodeAllocRec(b)
				out[ag] = append(out[ag], Extent{r.StartBlock, r.BlockCount})
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out
}

// isFree reports whether all of e in AG ag is free.
func isFree(free map[format.AgNumber][]Extent, ag format.AgNumber, e Extent) bool {
	for _, f := range free[ag] {
		if f.Start <= e.Start && e.End() <= f.End() {
			return true
		}
	}
	return false
}

// writeCounters stores the AGFs' free block totals in the superblock, as
// the engine does at close, so that xfs_repair finds them consistent.
func (im *image) writeCounters() {
	im.t.Helper()
	var fdblocks uint64
	for _, ag := range im.ags() {
		agf, err := alloc.Committed(im.cache.Read, &im.geo, ag)
		if err != nil {
			im.t.Fatal(err)
		}
		fdblocks += uint64(agf.FreeBlks) + uint64(agf.FlCount) + uint64(agf.BtreeBlks)
	}
	sector := make([]byte, im.geo.SectSize)
	if _, err := im.dev.ReadAt(sector, 0); err != nil {
		im.t.Fatal(err)
	}
	sb, err := format.DecodeSuperblock(sector)
	if err != nil {
		im.t.Fatal(err)
	}
	sb.FDBlocks = fdblocks
	sb.Encode(sector)
	format.SetCRC(sector, format.SbCRCOff)
	if _, err := im.dev.WriteAt(sector, 0); err != nil {
		im.t.Fatal(err)
	}
}

// mapping is one extent of a file's data fork, in AG terms.
type mapping struct {
	ag  format.AgNumber
	bno format.AgBlock
	n   uint32
}

var dbBmapLine = regexp.MustCompile(`startblock \d+ \((\d+)/(\d+)\) count (\d+) flag \d`)

// dbMappings returns the data fork extents of the file at path (from the
// root) as xfs_db reads them from the unmounted image.
func dbMappings(t testing.TB, img, path string) []mapping {
	t.Helper()
	out := oracle.DB(t, img, "path "+path, "bmap")
	var maps []mapping
	for _, m := range dbBmapLine.FindAllStringSubmatch(out, -1) {
		ag, _ := strconv.ParseUint(m[1], 10, 32)
		bno, _ := strconv.ParseUint(m[2], 10, 32)
		n, _ := strconv.ParseUint(m[3], 10, 32)
		maps = append(maps, mapping{format.AgNumber(ag), format.AgBlock(bno), uint32(n)})
	}
	if len(maps) == 0 {
		t.Fatalf("xfs_db found no extents of %s:\n%s", path, out)
	}
	return maps
}

// sharingModel counts, for every block the given files map, how many
// file extents map it, and derives the records a correct tree holds.
type sharingModel map[format.AgNumber]map[format.AgBlock]uint32

func modelOf(files ...[]mapping) sharingModel {
	m := sharingModel{}
	for _, f := range files {
		for _, e := range f {
			if m[e.ag] == nil {
				m[e.ag] = map[format.AgBlock]uint32{}
			}
			for b := e.bno; b < e.bno+format.AgBlock(e.n); b++ {
				m[e.ag][b]++
			}
		}
	}
	return m
}

// records returns the canonical shared records per AG: maximal runs of
// touching blocks with one count of 2 or more.
func (m sharingModel) records() map[format.AgNumber][]Rec {
	out := map[format.AgNumber][]Rec{}
	for ag, counts := range m {
		blocks := slices.Sorted(maps.Keys(counts))
		for i := 0; i < len(blocks); {
			c := counts[blocks[i]]
			j := i + 1
			for j < len(blocks) && blocks[j] == blocks[j-1]+1 && counts[blocks[j]] == c {
				j++
			}
			if c >= 2 {
				out[ag] = append(out[ag], Rec{Start: blocks[i], Len: uint32(j - i), Count: c, Domain: Shared})
			}
			i = j
		}
	}
	return out
}

// diffRecords describes how two sets of per-AG records differ ("" when
// they are equal).
func diffRecords(got, want map[format.AgNumber][]Rec) string {
	for _, ag := range slices.Sorted(maps.Keys(mergeKeys(got, want))) {
		if !slices.Equal(got[ag], want[ag]) {
			return fmt.Sprintf("AG %d: %d records, want %d; %s", ag, len(got[ag]), len(want[ag]), firstDiff(got[ag], want[ag]))
		}
	}
	return ""
}

func mergeKeys[V any](a, b map[format.AgNumber]V) map[format.AgNumber]bool {
	out := map[format.AgNumber]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// only keeps the records of domain d.
func only(recs map[format.AgNumber][]Rec, d Domain) map[format.AgNumber][]Rec {
	out := map[format.AgNumber][]Rec{}
	for ag, rs := range recs {
		for _, r := range rs {
			if r.Domain == d {
				out[ag] = append(out[ag], r)
			}
		}
	}
	return out
}

// copyImage copies an image file for a test of its own.
func copyImage(t testing.TB, from string) string {
	t.Helper()
	to := t.TempDir() + "/vol.img"
	oracle.CopySparse(t, from, to)
	return to
}

// writeFile writes n bytes of a pattern at off in the file at path and
// flushes them.
func writeFile(t testing.TB, path string, off, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(off + int64(i)*7)
	}
	if _, err := f.WriteAt(buf, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}
