package dir_test

import (
	"fmt"
	"os"
	"path"
	"sort"
	"testing"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/trans"
)

// image reads inodes and their data forks straight from an XFS image
// file, so kernel-written directories can be read through dir's API.
type image struct {
	f *os.File
	g format.Geometry
}

func openImage(t testing.TB, p string) *image {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sector := make([]byte, 512)
	if _, err := f.ReadAt(sector, 0); err != nil {
		t.Fatal(err)
	}
	sb, err := format.DecodeSuperblock(sector)
	if err == nil {
		err = sb.Verify(sector)
	}
	if err != nil {
		t.Fatalf("superblock of %s: %v", p, err)
	}
	return &image{f: f, g: format.NewGeometry(sb)}
}

func (im *image) readAt(daddr format.Daddr, n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := im.f.ReadAt(b, format.DaddrToByte(daddr))
	return b, err
}

// inodeFork is a read-only fork.Reader over one inode's data fork.
type inodeFork struct {
	im   *image
	ino  format.Ino
	core *format.Dinode
	data []byte
	ext  []format.Extent
}

func (im *image) fork(ino format.Ino) (*inodeFork, error) {
	loc, err := im.g.InoLocation(ino)
	if err != nil {
		return nil, err
	}
	b := make([]byte, im.g.InodeSize)
	if _, err := im.f.ReadAt(b, loc); err != nil {
		return nil, err
	}
	core, err := format.VerifyInode(&im.g, ino, b)
	if err != nil {
		return nil, err
	}
	data, _ := core.Forks(b)
	fk := &inodeFork{im: im, ino: ino, core: core, data: data}
	switch core.Format {
	case format.FmtExtents:
		for i := 0; i < int(core.DataExtents()); i++ {
			fk.ext = append(fk.ext, format.DecodeExtent(data[16*i:]))
		}
	case format.FmtBtree:
		if fk.ext, err = im.walkBmbt(ino, data); err != nil {
			return nil, err
		}
	}
	return fk, nil
}

// walkBmbt collects the extents of a B+tree fork, level by level.
func (im *image) walkBmbt(ino format.Ino, fork []byte) ([]format.Extent, error) {
	root, err := format.DecodeBmdrRoot(fork)
	if err != nil {
		return nil, err
	}
	shape := &format.BmbtShape
	ptrs := root.Ptrs
	var out []format.Extent
	for level := int(root.Level) - 1; level >= 0; level-- {
		var next []format.FsBlock
		for _, p := range ptrs {
			d := im.g.FsbToDaddr(p)
			b, err := im.readAt(d, im.g.BlockSize)
			if err != nil {
				return nil, err
			}
			h, err := format.VerifyBtreeBlock(&im.g, shape, b, d, uint64(ino))
			if err != nil {
				return nil, err
			}
			for r := 0; r < int(h.NumRecs); r++ {
				if level == 0 {
					out = append(out, format.DecodeExtent(shape.Rec(b, r)))
				} else {
					next = append(next, format.FsBlock(shape.Ptr(b, r)))
				}
			}
		}
		ptrs = next
	}
	return out, nil
}

func (fk *inodeFork) Geometry() *format.Geometry { return &fk.im.g }
func (fk *inodeFork) Owner() format.Ino          { return fk.ino }
func (fk *inodeFork) Format() int8               { return fk.core.Format }
func (fk *inodeFork) Size() int64                { return fk.core.Size }
func (fk *inodeFork) Inline() []byte {
	if fk.core.Format != format.FmtLocal || fk.core.Size > int64(len(fk.data)) {
		return nil
	}
	return fk.data[:fk.core.Size]
}

func (fk *inodeFork) mapBlock(off format.FileOff) (format.FsBlock, bool) {
	i := sort.Search(len(fk.ext), func(i int) bool { return fk.ext[i].End() > off })
	if i == len(fk.ext) || fk.ext[i].StartOff > off {
		return 0, false
	}
	return fk.ext[i].StartBlock + format.FsBlock(off-fk.ext[i].StartOff), true
}

func (fk *inodeFork) Read(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	bs := fk.im.g.BlockSize
	buf := make([]byte, 0, count*bs)
	var first format.Daddr
	for i := 0; i < count; i++ {
		fsb, ok := fk.mapBlock(off + format.FileOff(i))
		if !ok {
			return nil, 0, format.Corrupt("fork", "", "block %d is not mapped", uint64(off)+uint64(i))
		}
		d := fk.im.g.FsbToDaddr(fsb)
		if i == 0 {
			first = d
		}
		b, err := fk.im.readAt(d, bs)
		if err != nil {
			return nil, 0, err
		}
		buf = append(buf, b...)
	}
	if ops != nil && ops.Verify != nil {
		if err := ops.Verify(buf, first); err != nil {
			return nil, 0, err
		}
	}
	return buf, first, nil
}

func (fk *inodeFork) Mapped() ([][2]format.FileOff, error) {
	var out [][2]format.FileOff
	for _, e := range fk.ext {
		if n := len(out); n > 0 && out[n-1][1] == e.StartOff {
			out[n-1][1] = e.End()
		} else {
			out = append(out, [2]format.FileOff{e.StartOff, e.End()})
		}
	}
	return out, nil
}

var _ fork.Reader = (*inodeFork)(nil)

// ftypeOf maps a snapshot entry type to the directory file types it allows.
func ftypeOK(typ string, ft uint8) bool {
	switch typ {
	case oracle.TypeFile:
		return ft == format.FTReg
	case oracle.TypeDir:
		return ft == format.FTDir
	case oracle.TypeSymlink:
		return ft == format.FTSymlink
	}
	return ft >= format.FTChrdev && ft <= format.FTSock
}

// checkKernelDirs reads every directory of a kernel-made image through
// List, Lookup, Parent and Inspect and compares them with the snapshot
// the kernel showed. It returns how many directories of each form it saw.
func checkKernelDirs(t *testing.T, img string, snap oracle.Snapshot) map[dir.Form]int {
	t.Helper()
	im := openImage(t, img)
	children := map[string][]oracle.Entry{}
	inoOf := map[string]uint64{}
	for _, e := range snap {
		inoOf[e.Path] = e.Ino
		if e.Path == "." {
			continue
		}
		parent := path.Dir(e.Path)
		children[parent] = append(children[parent], e)
	}
	forms := map[dir.Form]int{}
	for _, e := range snap {
		if e.Type != oracle.TypeDir {
			continue
		}
		where := fmt.Sprintf("%s (inode %d)", e.Path, e.Ino)
		fk, err := im.fork(format.Ino(e.Ino))
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		info, err := dir.Inspect(fk)
		if err != nil {
			t.Fatalf("%s: Inspect: %v", where, err)
		}
		forms[info.Form]++
		kids := children[e.Path]
		if info.Entries != len(kids) {
			t.Errorf("%s: Inspect counts %d entries, the kernel showed %d", where, info.Entries, len(kids))
		}
		got := listAll(t, fk)
		if len(got) != len(kids) {
			t.Errorf("%s: List has %d entries, the kernel showed %d", where, len(got), len(kids))
		}
		for i, k := range kids {
			name := path.Base(k.Path)
			ge, ok := got[name]
			if !ok || uint64(ge.ino) != k.Ino || !ftypeOK(k.Type, ge.ftype) {
				t.Errorf("%s: List has %q -> %v (present %v), kernel %d %s", where, name, ge, ok, k.Ino, k.Type)
				continue
			}
			if len(kids) > 2000 && i%7 != 0 {
				continue // List covers them all; Lookup a sample of the big ones
			}
			ino, ft, err := dir.Lookup(fk, []byte(name))
			if err != nil || ino != ge.ino || ft != ge.ftype {
				t.Errorf("%s: Lookup %q = %d %d %v", where, name, ino, ft, err)
			}
		}
		wantParent := inoOf[path.Dir(e.Path)]
		if e.Path == "." {
			wantParent = e.Ino
		}
		if p, err := dir.Parent(fk); err != nil || uint64(p) != wantParent {
			t.Errorf("%s: parent %d %v, want %d", where, p, err, wantParent)
		}
		if _, _, err := dir.Lookup(fk, []byte("no such name, surely")); err == nil {
			t.Errorf("%s: lookup of a missing name succeeded", where)
		}
	}
	t.Logf("directories by form: %v", forms)
	return forms
}

// TestKernelGolden reads every directory of the committed golden images
// (made by the kernel) through this package.
func TestKernelGolden(t *testing.T) {
	t.Parallel()
	for _, v := range oracle.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			img, snap := oracle.LoadGolden(t, v.Name)
			forms := checkKernelDirs(t, img, snap)
			if forms[dir.ShortForm] == 0 || forms[dir.BlockForm] == 0 {
				t.Errorf("golden image lacks short-form or block directories: %v", forms)
			}
		})
	}
}

// fullDirSpec is oracle.Full cut down to what matters for directories, so
// that building two images stays well under a minute: the directory sizes
// are Full's (node form with a multi-leaf da-btree and a btree data fork
// at 30,000 entries).
var fullDirSpec = oracle.FixtureSpec{
	Name: "full-dirs", Seed: 2, ImageSize: 1 << 30,
	DirSizes:    oracle.Full.DirSizes,
	MaxFileSize: 16, BtreeExtents: 40, RandomFileSize: 4 << 10,
	LeafXattrs: 40, NodeXattrs: 200, RemoteXattrSizes: []int{10000},
}

// TestKernelFull does the same on freshly built images with node
// directories (default geometry and 16 KiB directory blocks; the default
// only under the race detector).
func TestKernelFull(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds kernel fixtures")
	}
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolDB, oracle.ToolMount)
	variants := []oracle.Variant{oracle.Variants[0], oracle.Variants[3]}
	if raceEnabled {
		variants = variants[:1] // the race detector adds nothing to the second
	}
	for _, v := range variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			img, snap := oracle.BuildFixture(t, t.TempDir(), v, fullDirSpec)
			forms := checkKernelDirs(t, img, snap)
			for _, f := range []dir.Form{dir.ShortForm, dir.BlockForm, dir.LeafForm, dir.NodeForm} {
				if forms[f] == 0 {
					t.Errorf("no %v directory in the fixture: %v", f, forms)
				}
			}
		})
	}
}
