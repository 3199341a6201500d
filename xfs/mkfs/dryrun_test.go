package mkfs

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
)

var (
	dryMeta = regexp.MustCompile(`agcount=(\d+), agsize=(\d+)`)
	dryData = regexp.MustCompile(`(?m)^data\s.*blocks=(\d+), imaxpct=(\d+)`)
	dryLog  = regexp.MustCompile(`(?m)^log\s.*blocks=(\d+),`)
)

// mkfsDryRun runs mkfs.xfs -N and returns agcount, agsize, dblocks,
// logblocks and imaxpct, or ok=false when mkfs.xfs refuses the options.
func mkfsDryRun(t *testing.T, scratch string, c dryCase) (got [5]uint64, ok bool) {
	t.Helper()
	d := fmt.Sprintf("file=1,name=%s,size=%d", scratch, c.size)
	if c.agcount != 0 {
		d += fmt.Sprintf(",agcount=%d", c.agcount)
	}
	reflink := "reflink=1"
	if c.noReflink {
		reflink = "reflink=0"
	}
	args := []string{"-N", "-f", "-m", reflink, "-b", fmt.Sprint("size=", c.bs), "-i", fmt.Sprint("size=", c.is),
		"-s", fmt.Sprint("size=", c.ss), "-d", d}
	if c.dbs != 0 {
		args = append(args, "-n", fmt.Sprint("size=", c.dbs))
	}
	path, err := exec.LookPath("mkfs.xfs")
	if err != nil {
		path = "/usr/sbin/mkfs.xfs"
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "TEST_DIR=1", "TEST_DEV=1", "QA_CHECK_FS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return got, false
	}
	m, dd, l := dryMeta.FindSubmatch(out), dryData.FindSubmatch(out), dryLog.FindSubmatch(out)
	if m == nil || dd == nil || l == nil {
		t.Fatalf("cannot parse mkfs.xfs -N output:\n%s", out)
	}
	for i, b := range [][]byte{m[1], m[2], dd[1], l[1], dd[2]} {
		got[i], _ = strconv.ParseUint(string(b), 10, 64)
	}
	return got, true
}

type dryCase struct {
	size                     int64
	bs, is, ss, agcount, dbs int
	noReflink                bool
}

// TestPlanMatchesMkfsDryRun compares the geometry plan chooses with what
// mkfs.xfs -N prints for random sizes (64 MiB to 64 TiB) and options, with
// and without reflink, and checks that both refuse the same configurations.
func TestPlanMatchesMkfsDryRun(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs)
	scratch := filepath.Join(t.TempDir(), "dry.img")
	r := rand.New(rand.NewSource(20261130))
	blockSizes := []int{1024, 2048, 4096, 8192, 16384, 32768, 65536}
	inodeSizes := []int{512, 1024, 2048}
	for n := 0; n < 500; n++ {
		c := dryCase{bs: blockSizes[r.Intn(len(blockSizes))], is: inodeSizes[r.Intn(len(inodeSizes))], ss: 512,
			noReflink: n%2 == 1}
		if c.is > c.bs/2 {
			c.is = 512
		}
		if r.Intn(4) == 0 {
			c.ss = min(4096, c.bs)
		}
		if r.Intn(5) == 0 {
			c.dbs = c.bs << r.Intn(int(log2(65536/c.bs))+1)
		}
		if r.Intn(3) == 0 {
			c.agcount = 2 + r.Intn(100)
		}
		// Log-uniform sizes, rounded to the 1 KiB mkfs.xfs -d size needs.
		c.size = int64(math.Pow(2, 26+r.Float64()*20)) &^ 1023
		want, ok := mkfsDryRun(t, scratch, c)
		g, err := plan(Options{Size: c.size, BlockSize: c.bs, InodeSize: c.is, SectorSize: c.ss,
			AgCount: c.agcount, DirBlockSize: c.dbs, NoReflink: c.noReflink}, 0)
		switch {
		case !ok && err == nil:
			t.Errorf("%+v: mkfs.xfs refuses, we chose %d AGs of %d blocks", c, g.agcount, g.agblocks)
		case ok && err != nil:
			t.Errorf("%+v: mkfs.xfs accepts, we fail: %v", c, err)
		case ok:
			got := [5]uint64{uint64(g.agcount), uint64(g.agblocks), g.dblocks, uint64(g.logBlocks), uint64(g.imaxpct)}
			if got != want {
				t.Errorf("%+v: agcount,agsize,dblocks,logblocks,imaxpct = %v, mkfs.xfs -N says %v", c, got, want)
			}
		}
	}
}
