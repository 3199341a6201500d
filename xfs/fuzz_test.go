package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// FuzzVolume patches one metadata structure of the default golden image
// in memory, opens it and walks everything. Whatever the bytes, the engine
// must not panic or hang, and every error must be one of its typed kinds.
//
//	go test -run '^$' -fuzz FuzzVolume -fuzztime 5m ./xfs/
//
// Inputs: region picks a structure (see metadataRegions), pos a byte inside
// it, data the bytes written there (clipped to the structure); flags bit 0
// recomputes the structure's CRC afterwards so that the checks behind the
// checksum get exercised, bit 1 XORs data into the old bytes instead of
// replacing them.
func FuzzVolume(f *testing.F) { fuzzPatchedGolden(f, "walk of", fuzzWalk) }

// fuzzPatchedGolden fuzzes body on the golden image with one structure
// patched as FuzzVolume's inputs say; a body that has not returned after
// 20 seconds (doing a volume: what it was doing) fails the input.
func fuzzPatchedGolden(f *testing.F, doing string, body func(t *testing.T, o *overlay)) {
	base := loadFuzzBase(f)
	for _, s := range fuzzSeeds(base) {
		f.Add(s.region, s.pos, s.data, s.flags)
	}
	f.Fuzz(func(t *testing.T, region uint16, pos uint16, data []byte, flags uint8) {
		o := newOverlay(base.im.b)
		r := base.pick(region)
		patchRegion(o, r, int(pos)%r.size, data, flags)
		watchdog := time.AfterFunc(20*time.Second, func() {
			panic(fmt.Sprintf("%s a volume with %s patched at %d did not finish in 20s", doing, r.what, pos))
		})
		defer watchdog.Stop()
		body(t, o)
	})
}

// metaRegion is one metadata structure of the image: size bytes at off,
// with its CRC at crc (-1 when it has none).
type metaRegion struct {
	what string
	off  int64
	size int
	crc  int
}

type fuzzBaseData struct {
	im      *image
	regions []metaRegion
	// classes group the regions by kind (the text of what before its
	// first digit), so that the few AG headers and btree blocks are
	// picked as often as the hundreds of inodes.
	classes [][]metaRegion
}

// pick chooses a class with the low bits of sel and a region of that
// class with the rest.
func (b *fuzzBaseData) pick(sel uint16) metaRegion {
	c := b.classes[int(sel)%len(b.classes)]
	return c[int(sel)/len(b.classes)%len(c)]
}

// classify groups regions by kind, in order of first appearance.
func classify(rs []metaRegion) [][]metaRegion {
	var classes [][]metaRegion
	index := map[string]int{}
	for _, r := range rs {
		kind := strings.TrimRight(r.what[:strings.IndexFunc(r.what+"0", func(c rune) bool { return c >= '0' && c <= '9' })], " ")
		i, ok := index[kind]
		if !ok {
			i = len(classes)
			index[kind] = i
			classes = append(classes, nil)
		}
		classes[i] = append(classes[i], r)
	}
	return classes
}

var fuzzBaseOnce struct {
	sync.Once
	base *fuzzBaseData
}

// loadFuzzBase decompresses the golden image once per process and lists
// its metadata structures by decoding them.
func loadFuzzBase(tb testing.TB) *fuzzBaseData {
	fuzzBaseOnce.Do(func() {
		img, snap := oracle.LoadGolden(tb, "default")
		im := loadImage(tb, img)
		rs := metadataRegions(tb, im, snap)
		fuzzBaseOnce.base = &fuzzBaseData{im: im, regions: rs, classes: classify(rs)}
	})
	if fuzzBaseOnce.base == nil {
		tb.Fatal("loading the golden image failed earlier")
	}
	return fuzzBaseOnce.base
}

// metadataRegions lists every structure the engine reads while walking:
// the superblock, AG headers, the end of the log, every inode of the
// snapshot, and the blocks of their directory, btree, attribute and
// symlink forks.
func metadataRegions(tb testing.TB, im *image, snap oracle.Snapshot) []metaRegion {
	g := &im.geo
	var rs []metaRegion
	add := func(what string, off int64, size, crc int) {
		rs = append(rs, metaRegion{what, off, size, crc})
	}
	add("superblock", 0, g.SectSize, format.SbCRCOff)
	for ag := format.AgNumber(0); ag < format.AgNumber(g.AgCount); ag++ {
		add(fmt.Sprintf("AGF %d", ag), im.agHeaderOff(ag, 1), g.SectSize, format.AgfCRCOff)
		add(fmt.Sprintf("AGI %d", ag), im.agHeaderOff(ag, 2), g.SectSize, format.AgiCRCOff)
	}
	logStart := format.DaddrToByte(g.FsbToDaddr(im.sb.LogStart))
	log := &xlog.Log{R: newOverlay(im.b), Start: logStart, Blocks: im.sb.LogBlocks << (g.BlockLog - format.BBShift)}
	head, _, err := log.FindHead()
	if err != nil {
		tb.Fatal(err)
	}
	_, at, err := log.LastRecord(head)
	if err != nil {
		tb.Fatal(err)
	}
	add("log start", logStart, 1024, -1)
	add("log end", logStart+int64(log.Blocks-1)*format.BBSize, format.BBSize, -1)
	add("last log record", logStart+int64(at)*format.BBSize, int(head-at)*format.BBSize, -1)

	seen := map[format.Ino]bool{}
	for _, e := range snap {
		ino := format.Ino(e.Ino)
		if seen[ino] {
			continue
		}
		seen[ino] = true
		d, _ := im.dinode(tb, ino)
		add(fmt.Sprintf("inode %d", ino), im.inoOff(tb, ino), g.InodeSize, format.InodeCRCOff)
		forks := []xfs.Fork{xfs.DataFork}
		if d.ForkOff != 0 {
			forks = append(forks, xfs.AttrFork)
		}
		for _, f := range forks {
			fmtv := d.Format
			if f == xfs.AttrFork {
				fmtv = d.AFormat
			}
			if fmtv != format.FmtExtents && fmtv != format.FmtBtree {
				continue
			}
			if fmtv == format.FmtBtree {
				for _, level := range im.bmbtLevels(tb, ino, f) {
					for _, fsb := range level {
						add(fmt.Sprintf("bmbt block of inode %d", ino), im.fsbOff(fsb), g.BlockSize, format.LongBlockCRCOff)
					}
				}
			}
			switch {
			case f == xfs.AttrFork:
				for _, e := range im.extents(tb, ino, f) {
					for i := uint64(0); i < e.BlockCount; i++ {
						add(fmt.Sprintf("attr block %d of inode %d", uint64(e.StartOff)+i, ino),
							im.fsbOff(e.StartBlock+format.FsBlock(i)), g.BlockSize, format.DaBlkinfoCRCOff) // XARM has its CRC there too
					}
				}
			case d.Mode&format.SIFMT == format.SIFDIR:
				per := g.DirBlockFsbs()
				ext := im.extents(tb, ino, f)
				for _, e := range ext {
					for i := uint64(0); i < e.BlockCount; i += uint64(per) {
						off := e.StartOff + format.FileOff(i)
						crc := format.Dir3DataCRCOff // data and free index blocks
						if off >= im.leafDa() && off < 2*im.leafDa() {
							crc = format.DaBlkinfoCRCOff
						}
						add(fmt.Sprintf("dir block %d of inode %d", off, ino), im.mapOff(tb, ext, off, per), g.DirBlkSize, crc)
					}
				}
			case d.Mode&format.SIFMT == format.SIFLNK:
				for _, e := range im.extents(tb, ino, f) {
					add(fmt.Sprintf("symlink block of inode %d", ino), im.fsbOff(e.StartBlock), int(e.BlockCount)<<g.BlockLog, format.RmtCRCOff)
				}
			}
		}
	}
	return rs
}

// patchRegion writes data at byte pos of r (clipped to r), replacing or
// XORing the old bytes, and recomputes r's CRC when asked.
func patchRegion(o *overlay, r metaRegion, pos int, data []byte, flags uint8) {
	if n := r.size - pos; len(data) > n {
		data = data[:n]
	}
	if flags&2 != 0 {
		old := o.read(r.off+int64(pos), len(data))
		for i := range old {
			old[i] ^= data[i]
		}
		data = old
	}
	o.write(r.off+int64(pos), data)
	if flags&1 != 0 && r.crc >= 0 {
		o.reseal(r.off, r.size, r.crc)
	}
}

// typedErrors are the kinds a walk over a damaged volume may meet: the
// damage itself, refusals (ErrSick: a change to a structure the damage
// marked sick), and what a damaged tree makes of names and
// symlinks. A damaged hash index can hide a listed name from a lookup:
// a directory entry (ErrNotFound) or an attribute (ErrNoData: the fuzzer
// made an attribute tree whose listing shows a name its hash lookup does
// not reach, seed dfa827b4e4705cb4).
var typedErrors = []error{xfs.ErrCorrupt, xfs.ErrSick, xfs.ErrUnsupported, xfs.ErrNeedsRecovery, xfs.ErrNotFound,
	xfs.ErrNotDir, xfs.ErrLoop, xfs.ErrNameTooLong, xfs.ErrNoData}

func isTyped(err error) bool {
	for _, k := range typedErrors {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// fuzzWalk opens the device and walks it, failing on an untyped error.
func fuzzWalk(t *testing.T, d *overlay) {
	v, err := xfs.OpenDevice(d, xfs.Options{ReadOnly: true})
	if err != nil {
		if !isTyped(err) {
			t.Fatalf("open: untyped error: %v", err)
		}
		return
	}
	defer v.Close()
	w := newWalker(v, walkLimits{maxNodes: 4000, maxDepth: 40, readCap: 64 << 10}, func(op string, err error) bool {
		if !isTyped(err) {
			t.Errorf("%s: untyped error: %v", op, err)
		}
		return true
	})
	w.lenient = true
	w.run()
}

type fuzzSeed struct {
	region, pos uint16
	data        []byte
	flags       uint8
}

// fuzzSeeds aims a few patches at structures of each kind.
func fuzzSeeds(base *fuzzBaseData) []fuzzSeed {
	// find returns the selector of the first region named like prefix.
	find := func(prefix string) uint16 {
		n := len(base.classes)
		for c, class := range base.classes {
			for i, r := range class {
				if strings.HasPrefix(r.what, prefix) {
					return uint16(i*n + c)
				}
			}
		}
		panic("no metadata region " + prefix)
	}
	return []fuzzSeed{
		{find("superblock"), 88, []byte{0, 0, 0, 0}, 1},               // agcount 0
		{find("superblock"), 96, []byte{0xff, 0xff, 0xff, 0xff}, 1},   // log blocks
		{find("AGF 1"), 16, []byte{0, 0, 0x40, 0}, 1},                 // bnobt root
		{find("inode 128"), 5, []byte{3}, 1},                          // root dir as btree
		{find("dir block 0 of inode 76608"), 100, []byte{0xff, 0}, 1}, // block dir entry
		{find("bmbt block"), 6, []byte{0xff, 0xff}, 1},                // numrecs
		{find("attr block 0"), 56, []byte{0x7f}, 3},                   // attr leaf count
		{find("symlink block"), 4, []byte{0, 0, 0x10}, 1},             // rmt offset
		{find("last log record"), 0, []byte{0}, 2},                    // nothing changes
	}
}

// FuzzWritableVolume patches the golden image as FuzzVolume does, then
// opens it writable and changes it: a writable open reads more than a
// walk (the unlinked lists, the quota files, the free-space counters), and
// a change goes through the allocators, the directory code and the log.
// Whatever the bytes, the engine must not panic or hang, and every error
// must be one of its typed kinds.
//
//	go test -run '^$' -fuzz FuzzWritableVolume -fuzztime 5m ./xfs/
func FuzzWritableVolume(f *testing.F) { fuzzPatchedGolden(f, "changes to", fuzzChange) }

// writeErrors are the kinds a change to a damaged volume may meet besides
// typedErrors: what a damaged tree or counter makes of a change.
var writeErrors = []error{xfs.ErrExist, xfs.ErrIsDir, xfs.ErrNotEmpty, xfs.ErrInvalid, xfs.ErrNoSpace, xfs.ErrQuota}

// fuzzChange opens d writable and, when that works, changes it
// (changeVolume) and closes it; it fails on an untyped error.
func fuzzChange(t *testing.T, d *overlay) {
	typed := func(op string, err error) {
		if err == nil || isTyped(err) {
			return
		}
		for _, k := range writeErrors {
			if errors.Is(err, k) {
				return
			}
		}
		t.Errorf("%s: untyped error: %v", op, err)
	}
	v, err := xfs.OpenDevice(d, xfs.Options{})
	if err != nil {
		typed("open", err)
		return
	}
	changeVolume(v, typed)
	typed("close", v.Close())
}

// changeVolume creates, writes, renames and removes files and
// directories beside and among the volume's own entries, and hands the
// outcome of each step to check.
func changeVolume(v *xfs.Volume, check func(op string, err error)) {
	root := v.Root()
	ino, err := v.Names().Create(root, "fuzz-new", xfs.Attrs{Mode: 0o644})
	check("create", err)
	if err == nil {
		_, err = v.Files().WriteAt(ino, bytes.Repeat([]byte("x"), 20000), 0)
		check("write", err)
		check("setxattr", v.Xattrs().Set(ino, "user.fuzz", []byte("v"), 0))
	}
	dir, err := v.Names().Mkdir(root, "fuzz-dir", xfs.Attrs{Mode: 0o755})
	check("mkdir", err)
	if err == nil {
		check("rename", v.Names().Rename(root, "fuzz-new", dir, "moved"))
		check("unlink", v.Names().Unlink(dir, "moved"))
		check("rmdir", v.Names().Rmdir(root, "fuzz-dir"))
	}
	changeExisting(v, check) // before the root's entries are renamed
	ents, err := v.Names().ReadDir(root)
	check("readdir", err)
	changed := 0
	for _, e := range ents {
		if e.Name == "." || e.Name == ".." || changed == 8 {
			continue
		}
		if changed%2 == 0 && e.Type != format.FTDir {
			check("unlink "+e.Name, v.Names().Unlink(root, e.Name))
		} else {
			check("rename "+e.Name, v.Names().Rename(root, e.Name, root, e.Name+".moved"))
		}
		changed++
	}
	_, err = v.Space().Statfs()
	check("statfs", err)
}

// The golden image's structures changeExisting changes: directories in
// short-form, block and leaf form, attribute forks in every form, and a
// file with a B+tree data fork.
var (
	existingDirs = func() (ps []string) {
		for _, n := range oracle.Small.DirSizes {
			ps = append(ps, oracle.FixtureDir(n))
		}
		return ps
	}()
	existingXattrs = []string{oracle.FixtureXattrSF, oracle.FixtureXattrLeaf, oracle.FixtureXattrNode, oracle.FixtureXattrLocal, oracle.FixtureXattrRmt}
)

// changeExisting changes structures the image already has, in each of
// their forms, so that the fuzzer's damage meets the write paths too: an
// entry added to and one removed from each of existingDirs, an attribute
// added to and removed from each of existingXattrs, and the B+tree file
// appended to, truncated and punched. A path the image lacks is skipped
// (TestChangePristineGolden requires the golden image to have them all).
func changeExisting(v *xfs.Volume, check func(op string, err error)) {
	lookup := func(path string) (format.Ino, bool) {
		ino, err := v.Names().LookupPath(path, false)
		if !errors.Is(err, xfs.ErrNotFound) {
			check("lookup "+path, err)
		}
		return ino, err == nil
	}
	for _, path := range existingDirs {
		d, ok := lookup(path)
		if !ok {
			continue
		}
		_, err := v.Names().Create(d, "fuzz-added", xfs.Attrs{Mode: 0o644})
		check("create in "+path, err)
		ents, err := v.Names().ReadDir(d)
		check("readdir "+path, err)
		for _, e := range ents {
			if e.Type == format.FTReg && e.Name != "fuzz-added" {
				check("unlink in "+path, v.Names().Unlink(d, e.Name))
				break
			}
		}
	}
	for _, path := range existingXattrs {
		ino, ok := lookup(path)
		if !ok {
			continue
		}
		check("setxattr on "+path, v.Xattrs().Set(ino, "user.fuzz-added", bytes.Repeat([]byte("a"), 100), 0))
		check("removexattr on "+path, v.Xattrs().Remove(ino, "user.fuzz-added"))
	}
	if ino, ok := lookup(oracle.FixtureBtreeFile); ok {
		st, err := v.Stat(ino)
		check("stat "+oracle.FixtureBtreeFile, err)
		if err == nil {
			_, err = v.Files().WriteAt(ino, bytes.Repeat([]byte("b"), 3*4096), st.Size+4096)
			check("append to "+oracle.FixtureBtreeFile, err)
			check("truncate "+oracle.FixtureBtreeFile, v.Files().Truncate(ino, st.Size/2))
			check("punch "+oracle.FixtureBtreeFile, v.Files().PunchHole(ino, 8192, 5*4096))
		}
	}
}

// TestChangePristineGolden: the changes FuzzWritableVolume makes all work
// on the undamaged image, and leave it clean for xfs_repair, so that the
// fuzzer's errors come from its damage.
func TestChangePristineGolden(t *testing.T) {
	base := loadFuzzBase(t)
	o := newOverlay(base.im.b)
	v, err := xfs.OpenDevice(o, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range slices.Concat(existingDirs, existingXattrs, []string{oracle.FixtureBtreeFile}) {
		if _, err := v.Names().LookupPath(path, false); err != nil {
			t.Errorf("the golden image lacks %s, which the fuzzer changes: %v", path, err)
		}
	}
	changeAndRepair(t, v, base.im.b, o)
}

// changeAndRepair makes changeVolume's changes to v, opened on o over the
// image base, requiring each to work, closes v and runs xfs_repair -n on
// the image o then holds.
func changeAndRepair(t *testing.T, v *xfs.Volume, base []byte, o *overlay) {
	t.Helper()
	changeVolume(v, func(op string, err error) {
		if err != nil {
			t.Errorf("%s: %v", op, err)
		}
	})
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "changed.img")
	if err := os.WriteFile(img, base, 0o644); err != nil {
		t.Fatal(err)
	}
	o.writeTo(t, img)
	oracle.Repair(t, img)
}
