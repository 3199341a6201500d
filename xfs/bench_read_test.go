package xfs_test

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// Metadata read benchmarks: name lookups, a listing of a 100,000-entry
// directory and xattr listings, each on a read-only and on a writable
// volume (whose reads go through the metadata cache). Run them with
//
//	go test -run '^$' -bench 'Lookup|ReadDir|Xattr' -benchtime 2s ./xfs/
//
// The image is made once per process by the engine itself; no root needed.

const readBenchEntries = 100000

// readBenchXattrs are the attribute files: short form, leaf form, node
// form, and node form with remote values.
var readBenchXattrs = []struct {
	name  string
	count int
	value int
}{
	{"short", 4, 16},
	{"leaf", 40, 32},
	{"node", 2000, 32},
	{"remote", 200, 6000},
}

// readBenchImage makes the image in the benchmark's temporary directory
// (a top-level benchmark with sub-benchmarks runs once, so once per run).
func readBenchImage(b *testing.B) string {
	img := filepath.Join(b.TempDir(), "read.img")
	start := time.Now()
	if err := makeReadBenchImage(img); err != nil {
		b.Fatal(err)
	}
	b.Logf("image made in %v", time.Since(start).Round(time.Millisecond))
	return img
}

func makeReadBenchImage(img string) error {
	if _, err := mkfs.Format(img, mkfs.Options{Size: 2 << 30}); err != nil {
		return err
	}
	// Lazy commits: the image is made in seconds instead of minutes.
	v, err := xfs.Open(img, xfs.Options{LazyCommits: true})
	if err != nil {
		return err
	}
	big, err := v.Names().Mkdir(v.Root(), "big", xfs.Attrs{Mode: 0o755})
	if err != nil {
		return err
	}
	for i := 0; i < readBenchEntries; i++ {
		if _, err := v.Names().Create(big, readBenchName(i), xfs.Attrs{Mode: 0o644}); err != nil {
			return err
		}
	}
	small, err := v.Names().Mkdir(v.Root(), "small", xfs.Attrs{Mode: 0o755})
	if err != nil {
		return err
	}
	for i := 0; i < 50; i++ {
		if _, err := v.Names().Create(small, readBenchName(i), xfs.Attrs{Mode: 0o644}); err != nil {
			return err
		}
	}
	for _, x := range readBenchXattrs {
		ino, err := v.Names().Create(v.Root(), "xattr-"+x.name, xfs.Attrs{Mode: 0o644})
		if err != nil {
			return err
		}
		val := make([]byte, x.value)
		for i := 0; i < x.count; i++ {
			if err := v.Xattrs().Set(ino, fmt.Sprintf("user.attribute-%05d", i), val, 0); err != nil {
				return err
			}
		}
	}
	return v.Close()
}

func readBenchName(i int) string { return fmt.Sprintf("object-%07d", i) }

// readBenchVolumes runs fn on the image opened read-only and writable.
func readBenchVolumes(b *testing.B, fn func(b *testing.B, v *xfs.Volume)) {
	img := readBenchImage(b)
	for _, ro := range []bool{true, false} {
		name := "rw"
		if ro {
			name = "ro"
		}
		b.Run(name, func(b *testing.B) {
			v, err := xfs.Open(img, xfs.Options{ReadOnly: ro})
			if err != nil {
				b.Fatal(err)
			}
			defer v.Close()
			fn(b, v)
		})
	}
}

// BenchmarkLookup looks up random existing names in a 50-entry and a
// 100,000-entry directory, and a missing name in the large one.
func BenchmarkLookup(b *testing.B) {
	readBenchVolumes(b, func(b *testing.B, v *xfs.Volume) {
		for _, c := range []struct {
			dir     string
			entries int
			missing bool
		}{{"small", 50, false}, {"big", readBenchEntries, false}, {"big", readBenchEntries, true}} {
			name := fmt.Sprintf("%d", c.entries)
			if c.missing {
				name += "-missing"
			}
			b.Run(name, func(b *testing.B) {
				dir, err := v.Names().Lookup(v.Root(), c.dir)
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewSource(1))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					n := rng.Intn(c.entries)
					if c.missing {
						n += readBenchEntries
					}
					_, err := v.Names().Lookup(dir, readBenchName(n))
					if c.missing != (err != nil) {
						b.Fatal(err)
					}
				}
			})
		}
	})
}

// BenchmarkReadDir100k lists the 100,000-entry directory.
func BenchmarkReadDir100k(b *testing.B) {
	readBenchVolumes(b, func(b *testing.B, v *xfs.Volume) {
		dir, err := v.Names().Lookup(v.Root(), "big")
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			ents, err := v.Names().ReadDir(dir)
			if err != nil {
				b.Fatal(err)
			}
			if len(ents) != readBenchEntries {
				b.Fatalf("listed %d entries", len(ents))
			}
		}
	})
}

// BenchmarkXattr lists every attribute (with values) of a file in each
// attribute form, and gets one attribute by name.
func BenchmarkXattr(b *testing.B) {
	readBenchVolumes(b, func(b *testing.B, v *xfs.Volume) {
		for _, x := range readBenchXattrs {
			ino, err := v.Names().Lookup(v.Root(), "xattr-"+x.name)
			if err != nil {
				b.Fatal(err)
			}
			b.Run("list-"+x.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					list, err := v.Xattrs().List(ino)
					if err != nil {
						b.Fatal(err)
					}
					if len(list) != x.count {
						b.Fatalf("listed %d attributes", len(list))
					}
				}
			})
			b.Run("get-"+x.name, func(b *testing.B) {
				rng := rand.New(rand.NewSource(1))
				for i := 0; i < b.N; i++ {
					val, err := v.Xattrs().Get(ino, fmt.Sprintf("user.attribute-%05d", rng.Intn(x.count)))
					if err != nil {
						b.Fatal(err)
					}
					if len(val) != x.value {
						b.Fatalf("value of %d bytes", len(val))
					}
				}
			})
		}
	})
}
