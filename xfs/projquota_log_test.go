package xfs_test

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/quota"
)

// TestDquotItemsReplay: project quota changes that reach only the log
// (dquot items, never written into their blocks: the write-back is off
// from the start of a seeded workload of creates, writes, deletes and
// limit changes) are replayed exactly by our recovery and by the
// quota-enabled kernel's: both end with the usage and limits the engine
// had, and xfs_repair -n recounts every project and agrees.
func TestDquotItemsReplay(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolDB)
	for _, seed := range []int64{1, 2} {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			img, want, bs := dquotLogOnlyImage(t, seed)
			kernelImg := img + ".kernel"
			oracle.CopySparse(t, img, kernelImg)

			v, err := xfs.Open(img, xfs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for id, w := range want {
				q, err := v.Quotas().Get(id)
				if err != nil {
					t.Fatal(err)
				}
				if q.Usage.Blocks != w.Usage.Blocks || q.Usage.Inodes != w.Usage.Inodes || q.Limits != w.Limits {
					t.Errorf("project %d after our recovery: %+v %+v, want %+v %+v", id, q.Limits, q.Usage, w.Limits, w.Usage)
				}
			}
			if err := v.Close(); err != nil {
				t.Fatal(err)
			}
			oracle.Repair(t, img)
			for id, w := range want {
				wantDquot(t, img, id, w.Usage.Blocks, w.Usage.Inodes, w.Limits.BlkHard)
			}

			if !oracle.Optional(t, "the kernel does not replay the dquot items", oracle.ToolUML) {
				return
			}
			rows := kernelQuotaReport(t, kernelImg, "")
			unit := uint64(bs / 1024) // the report is in KiB
			for id, w := range want {
				got := rows[id]
				if got.BlocksKiB != uint64(w.Usage.Blocks)*unit || got.Inodes != uint64(w.Usage.Inodes) ||
					got.BlockHardKiB != w.Limits.BlkHard*unit || got.InodeHard != w.Limits.InoHard {
					t.Errorf("project %d: the kernel's replay gives %+v, want %+v %+v", id, got, w.Limits, w.Usage)
				}
			}
			oracle.Repair(t, kernelImg)
		})
	}
}

// dquotLogOnlyImage runs a seeded quota workload on a fresh volume whose
// commits reach only the log, abandons it without a write-back or an
// unmount, and returns the image with what the engine reported for each
// project at the end.
func dquotLogOnlyImage(t *testing.T, seed int64) (img string, want map[uint32]xfs.ProjectQuota, blockSize int) {
	t.Helper()
	img = filepath.Join(t.TempDir(), "dq.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	xfs.SkipWriteback(v)
	rng := rand.New(rand.NewSource(seed))
	bs := v.Geometry().BlockSize
	// Projects in different slots of the first quota block and one in
	// another block.
	ids := []uint32{1, 3, 29, 31}
	dirs := map[uint32]format.Ino{}
	for _, id := range ids {
		d, err := v.Names().Mkdir(v.Root(), fmt.Sprintf("p%d", id), xfs.Attrs{Mode: 0o755, ProjID: id})
		if err != nil {
			t.Fatal(err)
		}
		dirs[id] = d
		if err := v.Quotas().SetLimits(id, quota.Limits{BlkHard: uint64(40 + rng.Intn(80)), InoHard: uint64(8 + rng.Intn(8))}); err != nil {
			t.Fatal(err)
		}
	}
	files := map[uint32][]string{}
	refused := 0
	for op := 0; op < 120; op++ {
		id := ids[rng.Intn(len(ids))]
		switch r := rng.Intn(10); {
		case r < 6:
			name := fmt.Sprintf("f%d", op)
			ino, err := v.Names().Create(dirs[id], name, xfs.Attrs{Mode: 0o644})
			if errors.Is(err, xfs.ErrQuota) {
				refused++
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			files[id] = append(files[id], name)
			if _, err := v.Files().WriteAt(ino, make([]byte, (1+rng.Intn(12))*bs), 0); errors.Is(err, xfs.ErrQuota) {
				refused++
			} else if err != nil {
				t.Fatal(err)
			}
		case r < 9 && len(files[id]) > 0:
			i := rng.Intn(len(files[id]))
			if err := v.Names().Unlink(dirs[id], files[id][i]); err != nil {
				t.Fatal(err)
			}
			files[id] = append(files[id][:i], files[id][i+1:]...)
		default:
			if err := v.Quotas().SetLimits(id, quota.Limits{BlkHard: uint64(40 + rng.Intn(80)), InoHard: uint64(8 + rng.Intn(8))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if refused == 0 {
		t.Errorf("seed %d: no write was refused: the limits are never reached", seed)
	}
	want = map[uint32]xfs.ProjectQuota{}
	for _, id := range ids {
		q, err := v.Quotas().Get(id)
		if err != nil {
			t.Fatal(err)
		}
		want[id] = q
	}
	// Inactivation that Quota flushed is durable too.
	if err := v.Force(); err != nil {
		t.Fatal(err)
	}
	if err := xfs.Abandon(v); err != nil {
		t.Fatal(err)
	}
	return img, want, bs
}
