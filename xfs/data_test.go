package xfs_test

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestFileWritesAgainstKernel has the kernel create empty files, then
// writes (some of whole blocks), truncates and punches them through the
// engine following a byte-level model (interleaved so one file fragments into a B+tree and
// back), and requires xfs_repair to be clean and the kernel to read
// exactly the model.
func TestFileWritesAgainstKernel(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolMount)
	for _, variant := range []oracle.Variant{{Name: "default"}, {Name: "b1k", MkfsOpts: []string{"-b", "size=1024"}}} {
		t.Run(variant.Name, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "w.img")
			oracle.Mkfs(t, img, 512<<20, variant.MkfsOpts...)
			mnt := oracle.Mount(t, img, false)
			names := []string{"a", "b", "c"}
			for _, n := range names {
				if err := os.WriteFile(filepath.Join(mnt, n), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			oracle.Unmount(t, mnt)

			v, err := xfs.Open(img, xfs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			model := map[string][]byte{}
			inos := map[string]format.Ino{}
			for _, n := range names {
				if inos[n], err = v.Names().LookupPath(n, false); err != nil {
					t.Fatal(err)
				}
				model[n] = nil
			}
			rng := rand.New(rand.NewSource(11))
			bs := v.Geometry().BlockSize
			sawBtree, sawBack := false, false
			for op := 0; op < 6000; op++ {
				n := names[rng.Intn(len(names))]
				ino := inos[n]
				m := model[n]
				switch k := rng.Intn(20); {
				case k < 14: // small interleaved writes fragment the files
					off := int64(rng.Intn(600)) * int64(bs)
					if rng.Intn(3) == 0 {
						off += int64(rng.Intn(bs))
					}
					p := make([]byte, 1+rng.Intn(3*bs))
					if rng.Intn(4) == 0 {
						// Whole blocks, which are written from p itself.
						off &^= int64(bs - 1)
						p = make([]byte, (1+rng.Intn(3))*bs)
					}
					rng.Read(p)
					if _, err := v.Files().WriteAt(ino, p, off); err != nil {
						t.Fatalf("op %d write %s %d+%d: %v", op, n, off, len(p), err)
					}
					if end := off + int64(len(p)); end > int64(len(m)) {
						m = append(m, make([]byte, end-int64(len(m)))...)
					}
					copy(m[off:], p)
				case k < 17:
					if len(m) == 0 {
						continue
					}
					off := rng.Int63n(int64(len(m)))
					l := 1 + rng.Int63n(int64(8*bs))
					if err := v.Files().PunchHole(ino, off, l); err != nil {
						t.Fatalf("op %d punch %s %d+%d: %v", op, n, off, l, err)
					}
					for i := off; i < off+l && i < int64(len(m)); i++ {
						m[i] = 0
					}
				default:
					size := rng.Int63n(int64(len(m)) + 1)
					if rng.Intn(4) == 0 {
						size = int64(len(m)) + rng.Int63n(int64(4*bs))
					}
					if err := v.Files().Truncate(ino, size); err != nil {
						t.Fatalf("op %d truncate %s %d: %v", op, n, size, err)
					}
					if size < int64(len(m)) {
						m = m[:size]
					} else {
						m = append(m, make([]byte, size-int64(len(m)))...)
					}
				}
				model[n] = m
				if st, err := v.Stat(ino); err == nil {
					if st.DataFormat == "btree" {
						sawBtree = true
					} else if sawBtree {
						sawBack = true
					}
				}
				if op%500 == 0 {
					checkFileModel(t, v, inos, model)
				}
			}
			if !sawBtree || !sawBack {
				t.Errorf("the workload never converted a data fork to a btree and back (btree %v, back %v)", sawBtree, sawBack)
			}
			checkFileModel(t, v, inos, model)
			st, _ := v.Stat(inos["a"])
			t.Logf("file a: %d extents, data fork %s", st.Extents, st.DataFormat)
			if err := v.Close(); err != nil {
				t.Fatal(err)
			}
			oracle.Repair(t, img)
			ro := oracle.Mount(t, img, true)
			for _, n := range names {
				got, err := os.ReadFile(filepath.Join(ro, n))
				if err != nil || !bytes.Equal(got, model[n]) {
					t.Errorf("kernel reads %s: %d bytes (model %d), err %v", n, len(got), len(model[n]), err)
				}
			}
		})
	}
}

func checkFileModel(t *testing.T, v *xfs.Volume, inos map[string]format.Ino, model map[string][]byte) {
	t.Helper()
	for n, ino := range inos {
		m := model[n]
		got := make([]byte, len(m))
		if len(m) > 0 {
			if k, err := v.Files().ReadAt(ino, got, 0); k != len(m) && err != nil {
				t.Fatalf("read %s: %d, %v", n, k, err)
			}
		}
		if !bytes.Equal(got, m) {
			for i := range got {
				if got[i] != m[i] {
					t.Fatalf("%s differs from the model at byte %d of %d", n, i, len(m))
				}
			}
		}
		st, err := v.Stat(ino)
		if err != nil || st.Size != int64(len(m)) {
			t.Fatalf("%s size %d, model %d (%v)", n, st.Size, len(m), err)
		}
	}
}
