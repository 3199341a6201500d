package xfs_test

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/quota"
)

// TestQuotaEvictionStress: writers create and delete files in many
// projects at once through a dquot cache bounded to 3, so dquots are
// evicted and read back from the quota file all the time, while an
// administrator reads every project's usage. No hard limit is passed,
// the usage in memory equals the records after a reopen, and xfs_repair
// finds every count right.
func TestQuotaEvictionStress(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	img := filepath.Join(t.TempDir(), "evict.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{DquotCache: 3})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(11))
	const projects = 12
	buckets := make([]format.Ino, projects)
	ids := make([]uint32, projects)
	for i := range buckets {
		ids[i] = uint32(1 + i*7) // spread over three quota file blocks
		d, err := v.Names().Mkdir(v.Root(), fmt.Sprintf("b%d", i), xfs.Attrs{Mode: 0o755})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Quotas().SetProject(d, ids[i]); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 { // small limits, so that some writes fail on them
			if err := v.Quotas().SetLimits(ids[i], quota.Limits{BlkHard: uint64(40 + rng.Intn(40)), InoHard: 30}); err != nil {
				t.Fatal(err)
			}
		}
		buckets[i] = d
	}
	bs := v.Geometry().BlockSize
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var adminErr error
	wg.Add(1)
	go func() { // the administrator
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := v.Quotas().List(); err != nil {
				adminErr = err
				return
			}
		}
	}()
	var writers sync.WaitGroup
	for w := 0; w < 8; w++ {
		writers.Add(1)
		go func(seed int64) {
			defer writers.Done()
			r := rand.New(rand.NewSource(seed))
			var mine []struct {
				b    int
				name string
			}
			for op := 0; op < 120; op++ {
				if len(mine) > 0 && r.Intn(3) == 0 {
					k := r.Intn(len(mine))
					f := mine[k]
					mine = append(mine[:k], mine[k+1:]...)
					if err := v.Names().Unlink(buckets[f.b], f.name); err != nil {
						t.Errorf("unlink: %v", err)
						return
					}
					continue
				}
				b := r.Intn(projects)
				name := fmt.Sprintf("w%d-%d", seed, op)
				ino, err := v.Names().Create(buckets[b], name, xfs.Attrs{Mode: 0o644})
				if errors.Is(err, xfs.ErrQuota) {
					continue
				}
				if err != nil {
					t.Errorf("create: %v", err)
					return
				}
				mine = append(mine, struct {
					b    int
					name string
				}{b, name})
				if _, err := v.Files().WriteAt(ino, make([]byte, (1+r.Intn(8))*bs), 0); err != nil && !errors.Is(err, xfs.ErrQuota) {
					t.Errorf("write: %v", err)
					return
				}
			}
		}(int64(w))
	}
	writers.Wait()
	close(stop)
	wg.Wait()
	if adminErr != nil {
		t.Fatal(adminErr)
	}
	if _, evicted := xfs.DquotCache(v); evicted == 0 {
		t.Fatal("no dquot was evicted: the test did not exercise eviction")
	}
	before, err := v.Quotas().List()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range before {
		if q.Effective.BlkHard != 0 && q.Usage.Blocks > int64(q.Effective.BlkHard) {
			t.Errorf("project %d: %d blocks, past its hard limit %d", q.ID, q.Usage.Blocks, q.Effective.BlkHard)
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	v, err = xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	after, err := v.Quotas().List()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("usage in memory before close:\n%+v\nrecords after reopen:\n%+v", before, after)
	}
}
