package xfs_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// Each row of the corruption tables damages one structure of a pristine
// image, opens it and walks everything (or runs the one operation that
// reads the structure). The engine must answer with a *format.CorruptError
// naming the structure and where it was found: never a panic, never a
// silently wrong answer.

// corruption is one row. corrupt patches o (the image im copy-on-write)
// and returns the substrings the error's Where must contain.
type corruption struct {
	name    string
	corrupt func(t *testing.T, im *image, o *overlay) (where []string)
	// op, when set, replaces the full walk.
	op func(t *testing.T, v *xfs.Volume) error
	// structure is the CorruptError.Structure wanted; with unsupported
	// set, errors.Is(err, xfs.ErrUnsupported) is wanted instead.
	structure   string
	unsupported bool
	reason      string // a substring of the error message, when it matters
}

// runCorruptions runs the rows against fresh copies of an image: load
// returns the path of a new pristine copy, im is the same image decoded.
func runCorruptions(t *testing.T, load func(t *testing.T) string, im *image, rows []corruption) {
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			o := newOverlay(im.b)
			where := row.corrupt(t, im, o)
			img := load(t)
			o.writeTo(t, img)
			err := openAndRun(t, img, row.op)
			checkCorrupt(t, err, row, where)
		})
	}
}

// openAndRun opens img and runs op, or the full walk; it returns the
// first error. A panic or no answer within 10 seconds fails the test.
func openAndRun(t *testing.T, img string, op func(*testing.T, *xfs.Volume) error) error {
	type result struct {
		err   error
		panic any
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{panic: fmt.Sprintf("%v\n%s", r, debug.Stack())}
			}
		}()
		done <- result{err: openAndRunOnce(t, img, op)}
	}()
	select {
	case r := <-done:
		if r.panic != nil {
			t.Fatalf("panic: %v", r.panic)
		}
		return r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("no answer after 10 seconds: the engine hangs")
		return nil
	}
}

func openAndRunOnce(t *testing.T, img string, op func(*testing.T, *xfs.Volume) error) error {
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer v.Close()
	if op != nil {
		return op(t, v)
	}
	what, err := firstError(v)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func checkCorrupt(t *testing.T, err error, row corruption, where []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("corruption went unnoticed: the walk succeeded")
	}
	t.Logf("got: %v", err)
	if row.reason != "" && !strings.Contains(err.Error(), row.reason) {
		t.Errorf("error does not mention %q", row.reason)
	}
	if row.unsupported {
		if !errors.Is(err, xfs.ErrUnsupported) {
			t.Errorf("errors.Is(err, ErrUnsupported) is false")
		}
		return
	}
	if !errors.Is(err, xfs.ErrCorrupt) {
		t.Fatalf("errors.Is(err, ErrCorrupt) is false")
	}
	var ce *format.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("error is not a *format.CorruptError")
	}
	if ce.Structure != row.structure {
		t.Errorf("Structure %q, want %q", ce.Structure, row.structure)
	}
	for _, w := range where {
		if !strings.Contains(ce.Where, w) {
			t.Errorf("Where %q does not contain %q", ce.Where, w)
		}
	}
}

// Structure locators, all on the pristine image.

// daddrOf names a byte offset the way engine errors do.
func daddrOf(off int64) string { return fmt.Sprintf("daddr %d", off>>format.BBShift) }

func inoWhere(ino format.Ino) string { return fmt.Sprintf("inode %d", ino) }

// dataEntry is one live entry of a directory data block.
type dataEntry struct {
	off, size int // within the block
	name      string
	ino       format.Ino
}

// fileEntry returns the first entry of a data block that is not "." or "..".
func (im *image) fileEntry(t testing.TB, b []byte) dataEntry {
	t.Helper()
	for _, e := range im.dataEntries(t, b) {
		if e.name != "." && e.name != ".." {
			return e
		}
	}
	t.Fatal("no entry in directory block")
	return dataEntry{}
}

// freeInode finds an allocated but free inode in the chunk of one of the
// inodes of snap.
func (im *image) freeInode(t testing.TB, snap oracle.Snapshot) format.Ino {
	t.Helper()
	for _, e := range snap {
		first := format.Ino(e.Ino) &^ (format.InodesPerChunk - 1)
		for ino := first; ino < first+format.InodesPerChunk; ino++ {
			off, err := im.geo.InoLocation(ino)
			if err != nil {
				continue
			}
			d, err := format.VerifyInode(&im.geo, ino, im.b[off:off+int64(im.geo.InodeSize)])
			if err == nil && d.Mode == 0 {
				return ino
			}
		}
	}
	t.Fatal("no free inode in the chunks of the snapshot's inodes")
	return 0
}

// daNode returns the byte offset, size and entries of the da-btree node
// at da of a directory (fsbs > 1) or attr fork.
func (im *image) daNode(t testing.TB, ext []format.Extent, da format.FileOff, fsbs int) (int64, int, []daNodeEntry) {
	t.Helper()
	off := im.mapOff(t, ext, da, fsbs)
	b := im.b[off : off+int64(fsbs<<im.geo.BlockLog)]
	level, ents := decodeDaNode(t, b)
	if level != 1 {
		t.Fatalf("da node at %d has level %d; the rows expect one level of nodes", da, level)
	}
	return off, len(b), ents
}

// Patches that keep the structure's checksum valid.

func resealInode(im *image, o *overlay, t testing.TB, ino format.Ino) {
	o.reseal(im.inoOff(t, ino), im.geo.InodeSize, format.InodeCRCOff)
}

func resealSector(im *image, o *overlay, off int64, crcOff int) {
	o.reseal(off, im.geo.SectSize, crcOff)
}

// goldenRows damage the default golden image (4 KiB blocks, 512-byte
// inodes, 4 KiB directory blocks; see oracle.Small).
func goldenRows(snap oracle.Snapshot) []corruption {
	ino := func(t testing.TB, p string) format.Ino { return lookupSnap(t, snap, p) }
	sbRow := func(name string, patch func(o *overlay), structure, reason string) corruption {
		return corruption{name: "superblock/" + name, structure: structure, reason: reason,
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				patch(o)
				return []string{"daddr 0"}
			}}
	}
	agRow := func(hdr string, n, crcOff int, name string, patch func(o *overlay, off int64), reseal bool, reason string) corruption {
		return corruption{name: hdr + "/" + name, structure: hdr, reason: reason,
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				const ag = 2
				off := im.agHeaderOff(ag, n)
				patch(o, off)
				if reseal {
					resealSector(im, o, off, crcOff)
				}
				return []string{"AG 2", daddrOf(off)}
			}}
	}
	// inodeRow patches the inode of p; with reseal its CRC stays valid.
	inodeRow := func(name, p string, reseal bool, patch func(im *image, o *overlay, off int64), structure, reason string) corruption {
		return corruption{name: "inode/" + name, structure: structure, reason: reason,
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, p)
				patch(im, o, im.inoOff(t, n))
				if reseal {
					resealInode(im, o, t, n)
				}
				return []string{inoWhere(n)}
			}}
	}
	// bmbtRow patches the leaves of files/btree (a one-level tree: the
	// root lives in the inode, the leaves on disk).
	bmbtRow := func(name string, patch func(im *image, o *overlay, leaves []format.FsBlock) format.FsBlock, structure, reason string) corruption {
		return corruption{name: "bmbt/" + name, structure: structure, reason: reason,
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, oracle.FixtureBtreeFile)
				levels := im.bmbtLevels(t, n, xfs.DataFork)
				if len(levels) != 1 || len(levels[0]) < 3 {
					t.Fatalf("%s: want one level of at least 3 leaves, have %v", oracle.FixtureBtreeFile, levels)
				}
				fsb := patch(im, o, levels[0])
				return []string{inoWhere(n), fmt.Sprintf("fsb %d", fsb)}
			}}
	}
	bmbtSeal := func(im *image, o *overlay, fsb format.FsBlock) {
		o.reseal(im.fsbOff(fsb), im.geo.BlockSize, format.LongBlockCRCOff)
	}

	return []corruption{
		// Superblock.
		{name: "superblock/bad magic", unsupported: true, reason: "no XFS superblock",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				o.put32(0, 0x58465300)
				return nil
			}},
		sbRow("bad CRC", func(o *overlay) { o.flip(108) }, "superblock", "bad CRC"),
		sbRow("agcount 0", func(o *overlay) { o.put32(88, 0); o.reseal(0, 512, format.SbCRCOff) }, "superblock", "bad AG geometry"),
		sbRow("blocksize 3000", func(o *overlay) { o.put32(4, 3000); o.reseal(0, 512, format.SbCRCOff) }, "superblock", "bad block size"),

		// A geometry whose size in bytes does not fit an int64 must not
		// slip past the device size check (AG 1 would start at 4 GiB).
		{name: "superblock/size in bytes overflows", unsupported: true, reason: "the filesystem needs",
			op: func(t *testing.T, v *xfs.Volume) error {
				_, err := v.Stat(1<<23 | 128)
				return err
			},
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				o.put64(8, 1<<51+1)  // dblocks
				o.put32(84, 1<<20)   // agblocks
				o.put32(88, 1<<31+1) // agcount
				o.put8(124, 20)      // agblklog
				o.reseal(0, 512, format.SbCRCOff)
				return nil
			}},

		// AG headers, read by Statfs at the start of the walk.
		agRow("AGF", 1, format.AgfCRCOff, "bad magic", func(o *overlay, off int64) { o.put32(off, 0x58414700) }, true, "bad magic"),
		agRow("AGF", 1, format.AgfCRCOff, "bad CRC", func(o *overlay, off int64) { o.flip(off + 60) }, false, "bad CRC"),
		agRow("AGF", 1, format.AgfCRCOff, "wrong seqno", func(o *overlay, off int64) { o.put32(off+8, 3) }, true, "sequence number 3"),
		agRow("AGF", 1, format.AgfCRCOff, "bnobt root out of range", func(o *overlay, off int64) { o.put32(off+16, 1<<20) }, true, "root"),
		agRow("AGI", 2, format.AgiCRCOff, "bad magic", func(o *overlay, off int64) { o.put32(off, 0x58414700) }, true, "bad magic"),
		agRow("AGI", 2, format.AgiCRCOff, "bad CRC", func(o *overlay, off int64) { o.flip(off + 300) }, false, "bad CRC"),
		agRow("AGI", 2, format.AgiCRCOff, "wrong seqno", func(o *overlay, off int64) { o.put32(off+8, 0) }, true, "sequence number 0"),
		agRow("AGI", 2, format.AgiCRCOff, "inobt root out of range", func(o *overlay, off int64) { o.put32(off+20, 1<<20) }, true, "root"),

		// Inodes (files/small: extents format, one extent).
		inodeRow("bad CRC", "files/small", false, func(im *image, o *overlay, off int64) {
			o.flip(off + 92) // di_gen
		}, "inode", "bad CRC"),
		inodeRow("bad magic", "files/small", true, func(im *image, o *overlay, off int64) {
			o.put16(off, 0x4E49)
		}, "inode", "bad magic"),
		inodeRow("wrong di_ino", "files/small", true, func(im *image, o *overlay, off int64) {
			o.put64(off+152, o.get64(off+152)+1)
		}, "inode", "claims to be inode"),
		inodeRow("data fork format 9", "files/small", true, func(im *image, o *overlay, off int64) {
			o.put8(off+5, 9)
		}, "inode", "format 9"),
		inodeRow("extent count too large for the fork", "files/small", true, func(im *image, o *overlay, off int64) {
			o.put32(off+76, 22) // 22 records of 16 bytes > 336-byte fork
		}, "inode", "do not fit"),
		{name: "inode/nrext64 extent count overflows the fork check", structure: "inode", reason: "do not fit",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				o.put32(216, o.get32(216)|format.IncompatNrext64)
				o.reseal(0, 512, format.SbCRCOff)
				n := ino(t, "files/small")
				off := im.inoOff(t, n)
				o.put64(off+120, o.get64(off+120)|format.Diflag2Nrext64)
				o.put64(off+24, 1<<60) // 16 bytes each: 2^64, zero in 64 bits
				o.put32(off+76, 0)     // now the attr fork's extent count
				resealInode(im, o, t, n)
				return []string{inoWhere(n)}
			}},
		inodeRow("extent beyond the filesystem", "files/small", true, func(im *image, o *overlay, off int64) {
			fork := off + format.InodeCoreSize
			e := format.DecodeExtent(o.read(fork, 16))
			e.StartBlock = im.geo.AgToFsb(format.AgNumber(im.geo.AgCount), 8) // one AG past the last
			b := make([]byte, 16)
			e.Encode(b)
			o.write(fork, b)
		}, "extent", "outside the filesystem"),
		inodeRow("extent past the end of its AG", "files/small", true, func(im *image, o *overlay, off int64) {
			fork := off + format.InodeCoreSize
			e := format.DecodeExtent(o.read(fork, 16))
			e.StartBlock = im.geo.AgToFsb(0, format.AgBlock(im.geo.AgBlocks-1))
			e.BlockCount = 2
			b := make([]byte, 16)
			e.Encode(b)
			o.write(fork, b)
		}, "extent", "outside the filesystem"),

		// The bmap btree of files/btree.
		bmbtRow("leaf bad CRC", func(im *image, o *overlay, leaves []format.FsBlock) format.FsBlock {
			o.flip(im.fsbOff(leaves[1]) + 200)
			return leaves[1]
		}, "bmbt block", "bad CRC"),
		bmbtRow("leaf bad magic", func(im *image, o *overlay, leaves []format.FsBlock) format.FsBlock {
			o.put32(im.fsbOff(leaves[1]), format.BnobtMagic)
			bmbtSeal(im, o, leaves[1])
			return leaves[1]
		}, "bmbt block", "bad magic"),
		bmbtRow("leaf wrong owner", func(im *image, o *overlay, leaves []format.FsBlock) format.FsBlock {
			off := im.fsbOff(leaves[1])
			o.put64(off+56, o.get64(off+56)+1)
			bmbtSeal(im, o, leaves[1])
			return leaves[1]
		}, "bmbt block", "owner"),
		bmbtRow("leaf right sibling is itself", func(im *image, o *overlay, leaves []format.FsBlock) format.FsBlock {
			o.put64(im.fsbOff(leaves[1])+16, uint64(leaves[1]))
			bmbtSeal(im, o, leaves[1])
			return leaves[1]
		}, "bmbt block", "siblings"),
		bmbtRow("leaf right sibling is its left neighbour", func(im *image, o *overlay, leaves []format.FsBlock) format.FsBlock {
			o.put64(im.fsbOff(leaves[1])+16, uint64(leaves[0]))
			bmbtSeal(im, o, leaves[1])
			return leaves[1]
		}, "bmbt block", "siblings"),
		{name: "bmbt/root pointers name one block twice", structure: "bmbt block", reason: "siblings",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, oracle.FixtureBtreeFile)
				d, _ := im.dinode(t, n)
				fork := im.forkOff(t, n, xfs.DataFork)
				maxr := format.BmdrMaxRecs(d.DataForkSize(im.geo.InodeSize))
				ptrs := fork + format.BmdrHdrSize + int64(8*maxr)
				second := o.get64(ptrs + 8)
				o.put64(ptrs, second) // the first leaf then has the wrong left sibling
				resealInode(im, o, t, n)
				return []string{inoWhere(n), fmt.Sprintf("fsb %d", second)}
			}},

		// Directories.
		{name: "shortform dir/entry overruns the fork", structure: "short-form directory", reason: "overruns",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, "dirs/n3")
				fork := im.forkOff(t, n, xfs.DataFork)
				hdr := int64(6) // count, i8count, 4-byte parent
				if o.read(fork+1, 1)[0] != 0 {
					hdr = 10
				}
				o.put8(fork+hdr, 200) // namelen of the first entry
				resealInode(im, o, t, n)
				return []string{inoWhere(n)}
			}},
		{name: "block dir/bad CRC", structure: "dir3 data block", reason: "bad CRC",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, "dirs/n60")
				off, _ := im.dirBlockOff(t, n, 0)
				o.flip(off + 200)
				return []string{inoWhere(n), daddrOf(off)}
			}},
		{name: "block dir/entry tag wrong", structure: "dir3 data block", reason: "bad tag",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, "dirs/n60")
				off, size := im.dirBlockOff(t, n, 0)
				e := im.fileEntry(t, im.b[off:off+int64(size)])
				o.put16(off+int64(e.off+e.size-2), uint16(e.off+8))
				o.reseal(off, size, format.Dir3DataCRCOff)
				return []string{inoWhere(n), "dir block 0"}
			}},
		{name: "leaf dir/data block entry tag wrong", structure: "dir3 data block", reason: "bad tag",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, "dirs/n400")
				off, size := im.dirBlockOff(t, n, 2)
				e := im.fileEntry(t, im.b[off:off+int64(size)])
				o.put16(off+int64(e.off+e.size-2), 0xFFF8)
				o.reseal(off, size, format.Dir3DataCRCOff)
				return []string{inoWhere(n), "dir block 2"}
			}},
		{name: "leaf dir/leaf block bad magic", structure: "dir3 leaf", reason: "bad magic",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, "dirs/n400")
				off, size := im.dirBlockOff(t, n, im.leafDa())
				o.put16(off+8, format.Attr3LeafMagic)
				o.reseal(off, size, format.DaBlkinfoCRCOff)
				return []string{inoWhere(n), daddrOf(off)}
			}},
		{name: "leaf dir/leaf block bad CRC", structure: "dir3 leaf", reason: "bad CRC",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, "dirs/n400")
				off, _ := im.dirBlockOff(t, n, im.leafDa())
				o.flip(off + 100)
				return []string{inoWhere(n), daddrOf(off)}
			}},
		{name: "dir entry/inode outside the filesystem", structure: "directory entry", reason: "invalid inode",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, "dirs/n3")
				fork := im.forkOff(t, n, xfs.DataFork)
				if o.read(fork+1, 1)[0] != 0 {
					t.Fatal("dirs/n3 uses 8-byte inode numbers")
				}
				// The first entry's inode number follows its name and ftype.
				nl := int64(o.read(fork+6, 1)[0])
				o.put32(fork+6+3+nl+1, uint32(im.geo.AgInoToIno(format.AgNumber(im.geo.AgCount+5), 64)))
				resealInode(im, o, t, n)
				return []string{inoWhere(n)}
			}},
		{name: "dir entry/free inode", structure: "inode", reason: "free",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, "dirs/n60")
				off, size := im.dirBlockOff(t, n, 0)
				e := im.fileEntry(t, im.b[off:off+int64(size)])
				free := im.freeInode(t, snap)
				o.put64(off+int64(e.off), uint64(free))
				o.reseal(off, size, format.Dir3DataCRCOff)
				return []string{inoWhere(free)}
			}},

		// Extended attributes.
		{name: "shortform xattr/entry overruns the fork", structure: "short-form attributes", reason: "overruns",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, oracle.FixtureXattrSF)
				fork := im.forkOff(t, n, xfs.AttrFork)
				o.put8(fork+format.AttrSFHdrSize, 250) // namelen of the first entry
				resealInode(im, o, t, n)
				return []string{inoWhere(n)}
			}},
		{name: "leaf xattr/bad CRC", structure: "attr3 leaf", reason: "bad CRC",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, oracle.FixtureXattrLeaf)
				off := im.mapOff(t, im.extents(t, n, xfs.AttrFork), 0, 1)
				o.flip(off + 300)
				return []string{inoWhere(n), daddrOf(off)}
			}},
		{name: "node xattr/leaf forward chain loops", structure: "attr3 leaf", reason: "loops",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, oracle.FixtureXattrNode)
				ext := im.extents(t, n, xfs.AttrFork)
				_, _, ents := im.daNode(t, ext, 0, 1)
				// The leftmost leaf names itself as both siblings.
				first := ents[0].Before
				off := im.mapOff(t, ext, format.FileOff(first), 1)
				o.put32(off, first)
				o.put32(off+4, first)
				o.reseal(off, im.geo.BlockSize, format.DaBlkinfoCRCOff)
				return []string{inoWhere(n), fmt.Sprintf("block %d", first)}
			}},
		{name: "node xattr/leaf forward pointer back to the first leaf", structure: "attr3 leaf", reason: "back pointer",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, oracle.FixtureXattrNode)
				ext := im.extents(t, n, xfs.AttrFork)
				_, _, ents := im.daNode(t, ext, 0, 1)
				off := im.mapOff(t, ext, format.FileOff(ents[1].Before), 1)
				o.put32(off, ents[0].Before)
				o.reseal(off, im.geo.BlockSize, format.DaBlkinfoCRCOff)
				return []string{inoWhere(n)}
			}},
		{name: "node xattr/da node hash order broken", structure: "da node", reason: "hash order",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, oracle.FixtureXattrNode)
				ext := im.extents(t, n, xfs.AttrFork)
				off, size, ents := im.daNode(t, ext, 0, 1)
				o.put32(off+format.Da3NodeHdrSize+8, ents[0].HashVal-1) // entry 1 below entry 0
				o.reseal(off, size, format.DaBlkinfoCRCOff)
				return []string{inoWhere(n)}
			}},
		{name: "node xattr/da node child is the node", structure: "attr3 leaf", reason: "level",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, oracle.FixtureXattrNode)
				ext := im.extents(t, n, xfs.AttrFork)
				off, size, _ := im.daNode(t, ext, 0, 1)
				o.put32(off+format.Da3NodeHdrSize+4, 0) // entry 0 points at block 0, the node
				o.reseal(off, size, format.DaBlkinfoCRCOff)
				return []string{inoWhere(n)}
			}},
		{name: "remote xattr/value block bad CRC", structure: "attr remote block", reason: "bad CRC",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n, off := remoteValueBlock(t, im, ino(t, oracle.FixtureXattrRmt))
				o.flip(off + 1000)
				return []string{inoWhere(n), daddrOf(off)}
			}},
		{name: "remote xattr/value header offset wrong", structure: "attr remote block", reason: "holds offset",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n, off := remoteValueBlock(t, im, ino(t, oracle.FixtureXattrRmt))
				o.put32(off+4, 4096)
				o.reseal(off, im.geo.BlockSize, format.RmtCRCOff)
				return []string{inoWhere(n), daddrOf(off)}
			}},

		// Symlinks.
		{name: "remote symlink/bad CRC", structure: "symlink block", reason: "bad CRC",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, oracle.FixtureLongLink)
				off := im.mapOff(t, im.extents(t, n, xfs.DataFork), 0, 1)
				o.flip(off + 500)
				return []string{inoWhere(n), daddrOf(off)}
			}},
		{name: "remote symlink/size 2000", structure: "symlink", reason: "bad length 2000",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, oracle.FixtureLongLink)
				o.put64(im.inoOff(t, n)+56, 2000)
				resealInode(im, o, t, n)
				return []string{inoWhere(n)}
			}},
		{name: "inline symlink/size 0", structure: "symlink", reason: "bad length 0",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, "links/short")
				o.put64(im.inoOff(t, n)+56, 0)
				resealInode(im, o, t, n)
				return []string{inoWhere(n)}
			}},
		{name: "inline symlink/size 1100", structure: "inode", reason: "local fork of 1100 bytes",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, "links/short")
				o.put64(im.inoOff(t, n)+56, 1100)
				resealInode(im, o, t, n)
				return []string{inoWhere(n)}
			}},
	}
}

// remoteValueBlock returns the first block of the remote value of ino's
// attribute user.remote-10000.
func remoteValueBlock(t *testing.T, im *image, n format.Ino) (format.Ino, int64) {
	t.Helper()
	ext := im.extents(t, n, xfs.AttrFork)
	leaf := im.b[im.mapOff(t, ext, 0, 1):][:im.geo.BlockSize]
	if blk, ok := remoteAttrBlock(t, leaf, "remote-10000"); ok {
		return n, im.mapOff(t, ext, format.FileOff(blk), 1)
	}
	t.Fatalf("inode %d has no remote attribute user.remote-10000", n)
	return 0, 0
}

// TestCorruptGolden runs the corruption table on the default golden
// image; it needs no external tools.
func TestCorruptGolden(t *testing.T) {
	img, snap := oracle.LoadGolden(t, "default")
	im := loadImage(t, img)
	t.Run("pristine", func(t *testing.T) {
		requireSame(t, snap, engineSnapshot(t, openRO(t, img)))
	})
	runCorruptions(t, func(t *testing.T) string {
		img, _ := oracle.LoadGolden(t, "default")
		return img
	}, im, goldenRows(snap))
}

// TestCorruptTruncated cuts the golden image to half its size.
func TestCorruptTruncated(t *testing.T) {
	img, _ := oracle.LoadGolden(t, "default")
	st, err := os.Stat(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err == nil {
		v.Close()
		t.Fatal("Open accepted a truncated image")
	}
	t.Logf("got: %v", err)
	if !errors.Is(err, xfs.ErrUnsupported) && !errors.Is(err, xfs.ErrCorrupt) {
		t.Errorf("want ErrUnsupported or ErrCorrupt")
	}
	if !strings.Contains(err.Error(), "bytes") {
		t.Errorf("message does not give the sizes")
	}
}

// The node-form directory and the two-level bmap btree need more content
// than the golden images hold, so the kernel builds one more fixture:
// 1 KiB blocks (4 KiB directory blocks), a 1000-entry directory in node
// form and a file whose data fork btree has a level of node blocks.
var nodeFixture = oracle.FixtureSpec{
	Name:             "corrupt-node",
	Seed:             7,
	ImageSize:        64 << 20,
	DirSizes:         []int{1000},
	MaxFileSize:      16,
	BtreeExtents:     1500,
	RandomFileSize:   4096,
	LeafXattrs:       8,
	NodeXattrs:       8,
	RemoteXattrSizes: []int{5000},
}

func nodeRows(snap oracle.Snapshot) []corruption {
	dir := oracle.FixtureDir(1000)
	ino := func(t testing.TB, p string) format.Ino { return lookupSnap(t, snap, p) }
	// dirNode returns the node block of dirs/n1000 and its entries.
	dirNode := func(t *testing.T, im *image) (format.Ino, []format.Extent, int64, int, []daNodeEntry) {
		n := ino(t, dir)
		ext := im.extents(t, n, xfs.DataFork)
		off, size, ents := im.daNode(t, ext, im.leafDa(), im.geo.DirBlockFsbs())
		if len(ents) < 2 {
			t.Fatalf("%s: node with %d entries", dir, len(ents))
		}
		return n, ext, off, size, ents
	}
	// lookupPast looks a name up whose hash is above every hash of the
	// directory, so the search ends in the last leaf and must follow its
	// forward pointer if there is one.
	lookupPast := func(t *testing.T, v *xfs.Volume) error {
		n := ino(t, dir)
		ents, err := v.Names().ReadDir(n)
		if err != nil {
			return err
		}
		var top uint32
		for _, e := range ents {
			top = max(top, format.DaHashName([]byte(e.Name)))
		}
		for i := 0; ; i++ {
			name := fmt.Sprintf("absent-%d", i)
			if format.DaHashName([]byte(name)) > top {
				_, err := v.Names().Lookup(n, name)
				if errors.Is(err, xfs.ErrNotFound) {
					return fmt.Errorf("lookup %q: %w (the sibling chain was not checked)", name, err)
				}
				return err
			}
		}
	}
	leafChainRow := func(name string, forw func(ents []daNodeEntry) uint32, reason string) corruption {
		return corruption{name: "node dir/" + name, structure: "dir3 leaf", reason: reason, op: lookupPast,
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n, ext, _, size, ents := dirNode(t, im)
				last := ents[len(ents)-1].Before
				off := im.mapOff(t, ext, format.FileOff(last), im.geo.DirBlockFsbs())
				o.put32(off, forw(ents))
				o.reseal(off, size, format.DaBlkinfoCRCOff)
				return []string{inoWhere(n)}
			}}
	}
	bmbtNodeRow := func(name string, ptr func(nodes, leaves []format.FsBlock) (at int, to format.FsBlock), structure, reason string) corruption {
		return corruption{name: "bmbt/" + name, structure: structure, reason: reason,
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n := ino(t, oracle.FixtureBtreeFile)
				levels := im.bmbtLevels(t, n, xfs.DataFork)
				if len(levels) != 2 {
					t.Fatalf("%s: want a level of nodes above the leaves, have %d levels", oracle.FixtureBtreeFile, len(levels))
				}
				node := levels[0][0]
				at, to := ptr(levels[0], levels[1])
				off := im.fsbOff(node)
				o.write(off+int64(ptrOffset(im, at)), binary.BigEndian.AppendUint64(nil, uint64(to)))
				o.reseal(off, im.geo.BlockSize, format.LongBlockCRCOff)
				return []string{inoWhere(n), fmt.Sprintf("fsb %d", to)}
			}}
	}
	return []corruption{
		{name: "node dir/da node hash order broken", structure: "da node", reason: "hash order",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n, _, off, size, ents := dirNode(t, im)
				o.put32(off+format.Da3NodeHdrSize+8, ents[0].HashVal-1)
				o.reseal(off, size, format.DaBlkinfoCRCOff)
				return []string{inoWhere(n)}
			}},
		{name: "node dir/da node child is the node", structure: "dir3 leaf", reason: "level",
			corrupt: func(t *testing.T, im *image, o *overlay) []string {
				n, _, off, size, _ := dirNode(t, im)
				o.put32(off+format.Da3NodeHdrSize+4, uint32(im.leafDa()))
				o.reseal(off, size, format.DaBlkinfoCRCOff)
				return []string{inoWhere(n)}
			}},
		leafChainRow("last leaf forward pointer to itself", func(ents []daNodeEntry) uint32 {
			return ents[len(ents)-1].Before
		}, "loop"),
		leafChainRow("last leaf forward pointer to its left neighbour", func(ents []daNodeEntry) uint32 {
			return ents[len(ents)-2].Before
		}, "back pointer"),
		// The first pointer of the first node names the node itself, its
		// own ancestor: the walk meets it again one level down.
		bmbtNodeRow("node pointer at the node itself", func(nodes, leaves []format.FsBlock) (int, format.FsBlock) {
			return 0, nodes[0]
		}, "bmbt", "reached twice"),
		// The second pointer repeats the first: the first leaf's right
		// sibling no longer matches.
		bmbtNodeRow("node pointer repeating its left neighbour", func(nodes, leaves []format.FsBlock) (int, format.FsBlock) {
			return 1, leaves[0]
		}, "bmbt block", "siblings"),
	}
}

// ptrOffset is the byte offset of pointer i in a bmbt node block.
func ptrOffset(im *image, i int) int {
	maxr := format.BmbtShape.MaxRecs(im.geo.BlockSize, false)
	return format.LongBlockHdrSize + maxr*format.BmbtShape.KeyLen + i*format.BmbtShape.PtrLen
}

// TestCorruptNodeForms runs the rows that need a node-form directory and
// a two-level bmap btree on a fixture the kernel builds.
func TestCorruptNodeForms(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolDB, oracle.ToolMount)
	dir := t.TempDir()
	img, snap := oracle.BuildFixture(t, dir, oracle.Variant{Name: "b1k", MkfsOpts: []string{"-b", "size=1024"}}, nodeFixture)
	if f := oracle.DirFormat(t, img, uint64(lookupSnap(t, snap, oracle.FixtureDir(1000)))); f != "node" {
		t.Fatalf("%s is in %s form, want node", oracle.FixtureDir(1000), f)
	}
	im := loadImage(t, img)
	t.Run("pristine", func(t *testing.T) {
		requireSame(t, snap, engineSnapshot(t, openRO(t, img)))
	})
	n := 0
	runCorruptions(t, func(t *testing.T) string {
		n++
		return writeSparse(t, fmt.Sprintf("%s/copy-%d.img", t.TempDir(), n), im.b)
	}, im, nodeRows(snap))
}

// writeSparse writes b to a new file, leaving zero pages as holes.
func writeSparse(t testing.TB, name string, b []byte) string {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zero := make([]byte, overlayPage)
	for off := 0; off < len(b); off += overlayPage {
		p := b[off:min(off+overlayPage, len(b))]
		if !bytes.Equal(p, zero[:len(p)]) {
			if _, err := f.WriteAt(p, int64(off)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestCorruptFarExtent gives files/small the largest size and its one
// extent a file offset beyond any byte offset (possible on disk: the
// kernel accepts start offsets up to 2^54-1 blocks). Reads must return
// zeros at once, neither looping nor panicking.
func TestCorruptFarExtent(t *testing.T) {
	img, snap := oracle.LoadGolden(t, "default")
	im := loadImage(t, img)
	n := lookupSnap(t, snap, "files/small")
	for _, start := range []format.FileOff{1 << 51, 1 << 53, 1<<54 - 2} {
		t.Run(fmt.Sprint(start), func(t *testing.T) {
			o := newOverlay(im.b)
			off := im.inoOff(t, n)
			o.put64(off+56, math.MaxInt64)
			fork := off + format.InodeCoreSize
			e := format.DecodeExtent(o.read(fork, 16))
			e.StartOff = start
			b := make([]byte, 16)
			e.Encode(b)
			o.write(fork, b)
			resealInode(im, o, t, n)
			img, _ := oracle.LoadGolden(t, "default")
			o.writeTo(t, img)
			err := openAndRun(t, img, func(t *testing.T, v *xfs.Volume) error {
				buf := make([]byte, 1<<20)
				for _, at := range []int64{0, 1 << 40, math.MaxInt64 - 1<<20} {
					if _, err := v.Files().ReadAt(n, buf, at); err != nil {
						return err
					}
					if !bytes.Equal(buf, make([]byte, len(buf))) {
						return fmt.Errorf("read at %d: not zeros", at)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCorruptHugeLog describes a log of 2^25 blocks of 64 KiB inside an
// 8 TiB filesystem (on a device that reads as zeros past the golden
// image): its size in basic blocks does not fit 32 bits. The kernel
// refuses logs over 2 GiB; Open must too, with a typed error.
func TestCorruptHugeLog(t *testing.T) {
	img, _ := oracle.LoadGolden(t, "default")
	im := loadImage(t, img)
	o := newOverlay(im.b)
	o.size = 1 << 43
	o.put32(4, 65536)  // blocksize
	o.put64(8, 1<<27)  // dblocks
	o.put64(48, 8)     // logstart
	o.put32(84, 1<<27) // agblocks
	o.put32(88, 1)     // agcount
	o.put32(96, 1<<25) // logblocks
	o.put16(104, 2048) // inodesize
	o.put16(106, 32)   // inopblock
	o.put8(120, 16)    // blocklog
	o.put8(122, 11)    // inodelog
	o.put8(123, 5)     // inopblog
	o.put8(124, 27)    // agblklog
	o.reseal(0, 512, format.SbCRCOff)
	v, err := xfs.OpenDevice(o, xfs.Options{ReadOnly: true})
	if err == nil {
		v.Close()
		t.Fatal("Open accepted a 2 TiB log")
	}
	checkCorrupt(t, err, corruption{structure: "superblock", reason: "log"}, []string{"daddr 0"})
}
