package attr

import (
	"fmt"
	"os"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// image reads inodes and blocks of an XFS image file, enough to give a
// read-only fork.Reader over an inode's attribute fork.
type image struct {
	f *os.File
	g format.Geometry
}

func openImage(t testing.TB, path string) *image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sec := make([]byte, format.BBSize)
	if _, err := f.ReadAt(sec, 0); err != nil {
		t.Fatal(err)
	}
	sb, err := format.DecodeSuperblock(sec)
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Verify(sec); err != nil {
		t.Fatal(err)
	}
	return &image{f: f, g: format.NewGeometry(sb)}
}

func (im *image) readAt(n int, daddr format.Daddr) ([]byte, error) {
	b := make([]byte, n)
	if _, err := im.f.ReadAt(b, format.DaddrToByte(daddr)); err != nil {
		return nil, err
	}
	return b, nil
}

// inode returns the verified core and the raw bytes of an inode.
func (im *image) inode(ino format.Ino) (*format.Dinode, []byte, error) {
	off, err := im.g.InoLocation(ino)
	if err != nil {
		return nil, nil, err
	}
	b := make([]byte, im.g.InodeSize)
	if _, err := im.f.ReadAt(b, off); err != nil {
		return nil, nil, err
	}
	d, err := format.VerifyInode(&im.g, ino, b)
	return d, b, err
}

// imgFork is a read-only attribute fork of an image inode.
type imgFork struct {
	im     *image
	ino    format.Ino
	core   *format.Dinode
	fmt    int8
	inline []byte
	ext    []format.Extent
}

func (im *image) attrFork(ino format.Ino) (*imgFork, error) {
	d, b, err := im.inode(ino)
	if err != nil {
		return nil, err
	}
	f := &imgFork{im: im, ino: ino, core: d, fmt: format.FmtExtents}
	if d.ForkOff == 0 {
		return f, nil
	}
	_, afork := d.Forks(b)
	f.fmt = d.AFormat
	switch d.AFormat {
	case format.FmtLocal:
		f.inline = afork
	case format.FmtExtents:
		n := int(d.AttrExtents())
		if n*format.ExtentRecSize > len(afork) {
			return nil, fmt.Errorf("inode %d: %d attr extents overflow the fork", ino, n)
		}
		for i := 0; i < n; i++ {
			f.ext = append(f.ext, format.DecodeExtent(afork[i*format.ExtentRecSize:]))
		}
	case format.FmtBtree:
		root, err := format.DecodeBmdrRoot(afork)
		if err != nil {
			return nil, err
		}
		for _, p := range root.Ptrs {
			if err := f.bmbt(p, int(root.Level)-1); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("inode %d: attr fork format %d", ino, d.AFormat)
	}
	return f, nil
}

// bmbt collects the extent records under a bmbt block.
func (f *imgFork) bmbt(fsb format.FsBlock, level int) error {
	g := &f.im.g
	daddr := g.FsbToDaddr(fsb)
	b, err := f.im.readAt(g.BlockSize, daddr)
	if err != nil {
		return err
	}
	h, err := format.VerifyBtreeBlock(g, &format.BmbtShape, b, daddr, uint64(f.ino))
	if err != nil {
		return err
	}
	if int(h.Level) != level {
		return fmt.Errorf("bmbt block %d: level %d, want %d", fsb, h.Level, level)
	}
	for i := 0; i < int(h.NumRecs); i++ {
		if level == 0 {
			f.ext = append(f.ext, format.DecodeExtent(format.BmbtShape.Rec(b, i)))
			continue
		}
		if err := f.bmbt(format.FsBlock(format.BmbtShape.Ptr(b, i)), level-1); err != nil {
			return err
		}
	}
	return nil
}

func (f *imgFork) Geometry() *format.Geometry { return &f.im.g }
func (f *imgFork) Owner() format.Ino          { return f.ino }
func (f *imgFork) Format() int8               { return f.fmt }
func (f *imgFork) Inline() []byte             { return f.inline }
func (f *imgFork) Size() int64                { return 0 }

func (f *imgFork) Read(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	if count != 1 {
		return nil, 0, fmt.Errorf("imgFork reads one block at a time, asked for %d", count)
	}
	for _, e := range f.ext {
		if off >= e.StartOff && off < e.End() {
			daddr := f.im.g.FsbToDaddr(e.StartBlock + format.FsBlock(off-e.StartOff))
			b, err := f.im.readAt(f.im.g.BlockSize, daddr)
			if err != nil {
				return nil, 0, err
			}
			if ops != nil && ops.Verify != nil {
				if err := ops.Verify(b, daddr); err != nil {
					return nil, 0, err
				}
			}
			return b, daddr, nil
		}
	}
	return nil, 0, format.Corrupt("attr fork", "", "block %d is not mapped", off)
}

func (f *imgFork) Mapped() ([][2]format.FileOff, error) {
	var out [][2]format.FileOff
	for _, e := range f.ext {
		if n := len(out); n > 0 && out[n-1][1] == e.StartOff {
			out[n-1][1] = e.End()
		} else {
			out = append(out, [2]format.FileOff{e.StartOff, e.End()})
		}
	}
	return out, nil
}
