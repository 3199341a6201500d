package dir_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// geoCase is one filesystem geometry the tests run on.
type geoCase struct {
	name      string
	blockLog  uint // filesystem block size
	dirLog    uint // log2 of filesystem blocks per directory block
	inodeSize int
	space     int // inline space of the data fork
}

var geoCases = []geoCase{
	{"4k", 12, 0, 512, 336},
	{"4k-attrfork", 12, 0, 512, 192}, // the kernel gives new inodes an attr fork
	{"b1k", 10, 2, 512, 336},         // mkfs -b size=1024: 4 KiB directory blocks
	{"d1k", 10, 0, 512, 336},         // 1 KiB directory blocks: legal, older mkfs made them
	{"n16k", 12, 2, 512, 336},
	{"n64k", 12, 4, 512, 336},
	{"i2k", 12, 0, 2048, 2048 - format.InodeCoreSize},
}

func geo(name string) geoCase {
	for _, gc := range geoCases {
		if gc.name == name {
			return gc
		}
	}
	panic("no geometry " + name)
}

// testGeometry builds a geometry large enough for 8-byte inode numbers:
// 64 Ki AGs of 64 Ki blocks.
func testGeometry(gc geoCase) format.Geometry {
	bs := 1 << gc.blockLog
	inoLog := uint(0)
	for 1<<inoLog < gc.inodeSize {
		inoLog++
	}
	g := format.Geometry{
		BlockSize: bs, BlockLog: gc.blockLog, SectSize: 512,
		InodeSize: gc.inodeSize, InodeLog: inoLog, InoPBlock: bs / gc.inodeSize, InoPBLog: gc.blockLog - inoLog,
		AgBlocks: 1 << 16, AgBlkLog: 16, AgCount: 1 << 16, DBlocks: 1 << 32,
		DirBlkSize: bs << gc.dirLog, DirBlkLog: gc.dirLog, FType: true,
	}
	copy(g.UUID[:], "xfs3-dir-test-ok")
	return g
}

const testOwner = format.Ino(1 << 10) // AG 0, block 128, slot 0

func newDir(t testing.TB, gc geoCase, parent format.Ino) *fork.Mem {
	t.Helper()
	m := fork.NewMem(testGeometry(gc), testOwner, gc.space)
	m.Begin()
	if err := dir.Init(m, parent); err != nil {
		t.Fatalf("Init: %v", err)
	}
	m.Commit()
	return m
}

// inoGen makes valid inode numbers: mostly small, some needing 8 bytes.
type inoGen struct {
	g   *format.Geometry
	rng *rand.Rand
}

func (ig inoGen) small() format.Ino {
	return ig.g.AgInoToIno(format.AgNumber(ig.rng.Intn(4)), format.AgIno(uint32(1+ig.rng.Intn(1<<15))<<ig.g.InoPBLog|uint32(ig.rng.Intn(ig.g.InoPBlock))))
}

func (ig inoGen) big() format.Ino {
	for {
		ag := format.AgNumber(1<<15 + ig.rng.Intn(1<<15))
		ino := ig.g.AgInoToIno(ag, format.AgIno(uint32(1+ig.rng.Intn(1<<15))<<ig.g.InoPBLog))
		if ino > 1<<32-1 {
			return ino
		}
	}
}

func (ig inoGen) next(bigPct int) format.Ino {
	if ig.rng.Intn(100) < bigPct {
		return ig.big()
	}
	for {
		if ino := ig.small(); ino != testOwner {
			return ino
		}
	}
}

// listAll returns the directory's entries as a map.
func listAll(t testing.TB, r fork.Reader) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	var last uint64
	first := true
	err := dir.ListFrom(r, 0, func(e dir.Entry) error {
		if !first && e.Off <= last {
			return fmt.Errorf("offsets not increasing: %d after %d", e.Off, last)
		}
		first, last = false, e.Off
		if _, dup := out[string(e.Name)]; dup {
			return fmt.Errorf("name %q listed twice", e.Name)
		}
		out[string(e.Name)] = entry{e.Ino, e.FType}
		return nil
	})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return out
}

type entry struct {
	ino   format.Ino
	ftype uint8
}
