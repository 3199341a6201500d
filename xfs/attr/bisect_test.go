package attr

import (
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

var (
	bisectScript = flag.String("attr.bisect", "", "kernel-layout script whose first differing operation TestKernelBisect looks for")
	bisectBS     = flag.Int("attr.bisect.bs", 4096, "block size for -attr.bisect")
	bisectFrom   = flag.Int("attr.bisect.from", 0, "first prefix length for -attr.bisect")
	bisectStep   = flag.Int("attr.bisect.step", 1, "prefix length step for -attr.bisect")
)

// TestKernelBisect is a debugging tool for TestKernelLayout failures: it
// runs growing prefixes of one script on the kernel and on this package
// and names the first operation after which the forks differ, e.g.
//
//	go test ./xfs/attr -run TestKernelBisect -attr.bisect=random-2 -attr.bisect.step=20
func TestKernelBisect(t *testing.T) {
	if *bisectScript == "" {
		t.Skip("set -attr.bisect=SCRIPT")
	}
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolMount)
	var sc script
	for _, s := range layoutScripts(*bisectBS, true) {
		if s.name == *bisectScript {
			sc = s
		}
	}
	if sc.name == "" {
		t.Fatalf("no script %q", *bisectScript)
	}
	var opts []string
	if *bisectBS != 4096 {
		opts = []string{"-b", fmt.Sprintf("size=%d", *bisectBS)}
	}
	img := filepath.Join(t.TempDir(), "bisect.img")
	oracle.Mkfs(t, img, 2<<30, opts...)
	mnt := oracle.Mount(t, img, false)
	var ks []int
	var inos []uint64
	for k := *bisectFrom; k <= len(sc.ops); k += max(1, *bisectStep) {
		p := script{name: fmt.Sprint(k), setup: sc.setup, ops: sc.ops[:k]}
		ks = append(ks, k)
		inos = append(inos, runKernelScript(t, filepath.Join(mnt, p.name), p))
	}
	oracle.Unmount(t, mnt)
	im := openImage(t, img)
	for i, k := range ks {
		ino := format.Ino(inos[i])
		kf, err := im.attrFork(ino)
		if err != nil {
			t.Fatal(err)
		}
		dataFmt, dataBytes, err := dataForkOf(im, ino)
		if err != nil {
			t.Fatal(err)
		}
		ours := replayScript(t, im.g, ino, 24, dataFmt, dataBytes, script{name: fmt.Sprint(k), ops: sc.ops[:k]})
		compareLayout(t, fmt.Sprint(k), kf, ours)
		if t.Failed() {
			if k > 0 {
				op := sc.ops[k-1]
				t.Logf("first difference after operation %d: remove=%v ns=%#x name=%q value of %d bytes",
					k, op.remove, op.ns, op.name, len(op.value))
			}
			return
		}
	}
	t.Logf("no difference in %d prefixes", len(ks))
}
