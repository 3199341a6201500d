package mkfs

import (
	"errors"
	"testing"
)

// planTable holds what mkfs.xfs 6.1 -m reflink=0 chooses for a spread of
// sizes and options. Rows with wantErr are configurations mkfs.xfs
// refuses. Every row was produced by a dry run:
//
//	TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs.xfs -N -f -m reflink=0 \
//	    -b size=BS -i size=IS -d file=1,name=SCRATCH,size=SIZE[,agcount=N]
//
// reading agcount and agsize from the "meta-data" line, blocks and imaxpct
// from "data" and blocks from "log". (The environment variables let
// mkfs.xfs format filesystems under 300 MB, as xfs3 does.) The 4 TiB row
// uses 4 TiB + 1 KiB because -d size must be a multiple of 1 KiB.
var planTable = []planRow{
	{67108864, 1024, 512, 0, 4, 16384, 65536, 2577, 25, false},
	{67108864, 1024, 1024, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 1024
	{67108864, 1024, 2048, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 2048
	{67108864, 4096, 512, 0, 4, 4096, 16384, 857, 25, false},
	{67108864, 4096, 1024, 0, 4, 4096, 16384, 860, 25, false},
	{67108864, 4096, 2048, 0, 4, 4096, 16384, 868, 25, false},
	{67108864, 65536, 512, 0, 0, 0, 0, 0, 0, true},  // mkfs: max log size 246 smaller than min log size 512, filesystem is too small
	{67108864, 65536, 1024, 0, 0, 0, 0, 0, 0, true}, // mkfs: max log size 246 smaller than min log size 512, filesystem is too small
	{67108864, 65536, 2048, 0, 0, 0, 0, 0, 0, true}, // mkfs: max log size 246 smaller than min log size 512, filesystem is too small
	{104857600, 1024, 512, 0, 4, 25600, 102400, 2577, 25, false},
	{104857600, 1024, 1024, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 1024
	{104857600, 1024, 2048, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 2048
	{104857600, 4096, 512, 0, 4, 6400, 25600, 857, 25, false},
	{104857600, 4096, 1024, 0, 4, 6400, 25600, 860, 25, false},
	{104857600, 4096, 2048, 0, 4, 6400, 25600, 868, 25, false},
	{104857600, 65536, 512, 0, 0, 0, 0, 0, 0, true},  // mkfs: max log size 390 smaller than min log size 512, filesystem is too small
	{104857600, 65536, 1024, 0, 0, 0, 0, 0, 0, true}, // mkfs: max log size 390 smaller than min log size 512, filesystem is too small
	{104857600, 65536, 2048, 0, 0, 0, 0, 0, 0, true}, // mkfs: max log size 390 smaller than min log size 512, filesystem is too small
	{314572800, 1024, 512, 0, 4, 76800, 307200, 65536, 25, false},
	{314572800, 1024, 1024, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 1024
	{314572800, 1024, 2048, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 2048
	{314572800, 4096, 512, 0, 4, 19200, 76800, 16384, 25, false},
	{314572800, 4096, 1024, 0, 4, 19200, 76800, 16384, 25, false},
	{314572800, 4096, 2048, 0, 4, 19200, 76800, 16384, 25, false},
	{314572800, 65536, 512, 0, 4, 1200, 4800, 1024, 25, false},
	{314572800, 65536, 1024, 0, 4, 1200, 4800, 1024, 25, false},
	{314572800, 65536, 2048, 0, 4, 1200, 4800, 1024, 25, false},
	{1073741824, 1024, 512, 0, 4, 262144, 1048576, 65536, 25, false},
	{1073741824, 1024, 1024, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 1024
	{1073741824, 1024, 2048, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 2048
	{1073741824, 4096, 512, 0, 4, 65536, 262144, 16384, 25, false},
	{1073741824, 4096, 1024, 0, 4, 65536, 262144, 16384, 25, false},
	{1073741824, 4096, 2048, 0, 4, 65536, 262144, 16384, 25, false},
	{1073741824, 65536, 512, 0, 4, 4096, 16384, 1024, 25, false},
	{1073741824, 65536, 1024, 0, 4, 4096, 16384, 1024, 25, false},
	{1073741824, 65536, 2048, 0, 4, 4096, 16384, 1024, 25, false},
	{4294967296, 1024, 512, 0, 4, 1048576, 4194304, 65536, 25, false},
	{4294967296, 1024, 1024, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 1024
	{4294967296, 1024, 2048, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 2048
	{4294967296, 4096, 512, 0, 4, 262144, 1048576, 16384, 25, false},
	{4294967296, 4096, 1024, 0, 4, 262144, 1048576, 16384, 25, false},
	{4294967296, 4096, 2048, 0, 4, 262144, 1048576, 16384, 25, false},
	{4294967296, 65536, 512, 0, 4, 16384, 65536, 1024, 25, false},
	{4294967296, 65536, 1024, 0, 4, 16384, 65536, 1024, 25, false},
	{4294967296, 65536, 2048, 0, 4, 16384, 65536, 1024, 25, false},
	{17179869184, 1024, 512, 0, 4, 4194304, 16777216, 65536, 25, false},
	{17179869184, 1024, 1024, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 1024
	{17179869184, 1024, 2048, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 2048
	{17179869184, 4096, 512, 0, 4, 1048576, 4194304, 16384, 25, false},
	{17179869184, 4096, 1024, 0, 4, 1048576, 4194304, 16384, 25, false},
	{17179869184, 4096, 2048, 0, 4, 1048576, 4194304, 16384, 25, false},
	{17179869184, 65536, 512, 0, 4, 65536, 262144, 1024, 25, false},
	{17179869184, 65536, 1024, 0, 4, 65536, 262144, 1024, 25, false},
	{17179869184, 65536, 2048, 0, 4, 65536, 262144, 1024, 25, false},
	{1099511627776, 1024, 512, 0, 4, 268435456, 1073741824, 524288, 5, false},
	{1099511627776, 1024, 1024, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 1024
	{1099511627776, 1024, 2048, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 2048
	{1099511627776, 4096, 512, 0, 4, 67108864, 268435456, 131072, 5, false},
	{1099511627776, 4096, 1024, 0, 4, 67108864, 268435456, 131072, 5, false},
	{1099511627776, 4096, 2048, 0, 4, 67108864, 268435456, 131072, 5, false},
	{1099511627776, 65536, 512, 0, 4, 4194304, 16777216, 8192, 5, false},
	{1099511627776, 65536, 1024, 0, 4, 4194304, 16777216, 8192, 5, false},
	{1099511627776, 65536, 2048, 0, 4, 4194304, 16777216, 8192, 5, false},
	{4398046512128, 1024, 512, 0, 4, 1073741823, 4294967292, 1048576, 5, false},
	{4398046512128, 1024, 1024, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 1024
	{4398046512128, 1024, 2048, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 2048
	{4398046512128, 4096, 512, 0, 4, 268435455, 1073741820, 521728, 5, false},
	{4398046512128, 4096, 1024, 0, 4, 268435455, 1073741820, 521728, 5, false},
	{4398046512128, 4096, 2048, 0, 4, 268435455, 1073741820, 521728, 5, false},
	{4398046512128, 65536, 512, 0, 4, 16777215, 67108860, 32608, 5, false},
	{4398046512128, 65536, 1024, 0, 4, 16777215, 67108860, 32608, 5, false},
	{4398046512128, 65536, 2048, 0, 4, 16777215, 67108860, 32608, 5, false},
	{17592186044416, 1024, 512, 0, 16, 1073741823, 17179869168, 1048576, 5, false},
	{17592186044416, 1024, 1024, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 1024
	{17592186044416, 1024, 2048, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 2048
	{17592186044416, 4096, 512, 0, 16, 268435455, 4294967280, 521728, 5, false},
	{17592186044416, 4096, 1024, 0, 16, 268435455, 4294967280, 521728, 5, false},
	{17592186044416, 4096, 2048, 0, 16, 268435455, 4294967280, 521728, 5, false},
	{17592186044416, 65536, 512, 0, 16, 16777215, 268435440, 32608, 5, false},
	{17592186044416, 65536, 1024, 0, 16, 16777215, 268435440, 32608, 5, false},
	{17592186044416, 65536, 2048, 0, 16, 16777215, 268435440, 32608, 5, false},
	{70368744177664, 1024, 512, 0, 64, 1073741823, 68719476672, 1048576, 1, false},
	{70368744177664, 1024, 1024, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 1024
	{70368744177664, 1024, 2048, 0, 0, 0, 0, 0, 0, true}, // mkfs: illegal inode size 2048
	{70368744177664, 4096, 512, 0, 64, 268435455, 17179869120, 521728, 1, false},
	{70368744177664, 4096, 1024, 0, 64, 268435455, 17179869120, 521728, 1, false},
	{70368744177664, 4096, 2048, 0, 64, 268435455, 17179869120, 521728, 1, false},
	{70368744177664, 65536, 512, 0, 64, 16777215, 1073741760, 32608, 1, false},
	{70368744177664, 65536, 1024, 0, 64, 16777215, 1073741760, 32608, 1, false},
	{70368744177664, 65536, 2048, 0, 64, 16777215, 1073741760, 32608, 1, false},
	{1073741824, 4096, 512, 2, 2, 131072, 262144, 16384, 25, false},
	{1073741824, 4096, 512, 7, 7, 37450, 262144, 16384, 25, false},
	{4294967296, 1024, 512, 32, 32, 131072, 4194304, 65536, 25, false},
	{17179869184, 4096, 1024, 3, 3, 1398102, 4194304, 16384, 25, false},
	{1099511627776, 4096, 512, 16, 16, 16777216, 268435456, 131072, 5, false},
	{67108864, 4096, 512, 5, 0, 0, 0, 0, 0, true},   // mkfs: agsize (3277 blocks) too small, need at least 4096 blocks
	{104857600, 4096, 512, 64, 0, 0, 0, 0, 0, true}, // mkfs: agsize (400 blocks) too small, need at least 4096 blocks
	{70368744177664, 4096, 512, 100, 100, 171798692, 17179869184, 521728, 1, false},
}

type planRow struct {
	size                      int64
	bs, is, agcount           int
	wantAgcount, wantAgblocks uint32
	wantDblocks               uint64
	wantLogBlocks             uint32
	wantIMaxPct               int
	wantErr                   bool
}

// reflinkPlanTable holds what mkfs.xfs 6.1 chooses with its default
// reflink=1 (the same dry run without "-m reflink=0") where that differs:
// small filesystems, whose log is the minimum size, get a larger log since
// the reservations include refcount btree updates, and an AG holds one
// block less for the log (the refcount root).
var reflinkPlanTable = []planRow{
	{67108864, 1024, 512, 0, 4, 16384, 65536, 3527, 25, false},
	{67108864, 4096, 512, 0, 4, 4096, 16384, 1368, 25, false},
	{67108864, 4096, 1024, 0, 4, 4096, 16384, 1368, 25, false},
	{67108864, 4096, 2048, 0, 4, 4096, 16384, 1368, 25, false},
	{67108864, 65536, 512, 0, 0, 0, 0, 0, 0, true}, // mkfs: max log size 245 smaller than min log size 512, filesystem is too small
	{104857600, 1024, 512, 0, 4, 25600, 102400, 3527, 25, false},
	{104857600, 4096, 512, 0, 4, 6400, 25600, 1368, 25, false},
	{104857600, 4096, 2048, 0, 4, 6400, 25600, 1368, 25, false},
	{314572800, 4096, 512, 0, 4, 19200, 76800, 16384, 25, false},
	{314572800, 65536, 512, 0, 4, 1200, 4800, 1024, 25, false},
	{1073741824, 1024, 512, 0, 4, 262144, 1048576, 65536, 25, false},
	{1073741824, 4096, 512, 0, 4, 65536, 262144, 16384, 25, false},
	{1073741824, 65536, 2048, 0, 4, 4096, 16384, 1024, 25, false},
}

func TestPlanMatchesMkfsTable(t *testing.T) {
	checkPlanTable(t, planTable, true)
}

func TestPlanMatchesMkfsTableReflink(t *testing.T) {
	checkPlanTable(t, reflinkPlanTable, false)
}

func checkPlanTable(t *testing.T, table []planRow, noReflink bool) {
	t.Helper()
	for _, c := range table {
		g, err := plan(Options{Size: c.size, BlockSize: c.bs, InodeSize: c.is, AgCount: c.agcount, NoReflink: noReflink}, 0)
		if c.wantErr {
			if err == nil {
				t.Errorf("size %d bs %d is %d agcount %d: mkfs.xfs refuses, we chose %d×%d", c.size, c.bs, c.is, c.agcount, g.agcount, g.agblocks)
			} else if !errors.Is(err, ErrInvalid) {
				t.Errorf("size %d bs %d is %d agcount %d: error %v is not ErrInvalid", c.size, c.bs, c.is, c.agcount, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("size %d bs %d is %d agcount %d: %v", c.size, c.bs, c.is, c.agcount, err)
			continue
		}
		got := [5]uint64{uint64(g.agcount), uint64(g.agblocks), g.dblocks, uint64(g.logBlocks), uint64(g.imaxpct)}
		want := [5]uint64{uint64(c.wantAgcount), uint64(c.wantAgblocks), c.wantDblocks, uint64(c.wantLogBlocks), uint64(c.wantIMaxPct)}
		if got != want {
			t.Errorf("size %d bs %d is %d agcount %d: got agcount,agblocks,dblocks,logblocks,imaxpct %v, mkfs.xfs chose %v",
				c.size, c.bs, c.is, c.agcount, got, want)
		}
		// The log always sits right after the btree roots of the middle AG.
		wantStart := uint64(g.agcount/2)<<g.agblklog | uint64(g.prealloc)
		if uint64(g.logStart) != wantStart {
			t.Errorf("size %d bs %d: log start %d, want %d", c.size, c.bs, g.logStart, wantStart)
		}
	}
}
