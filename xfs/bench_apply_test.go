package xfs_test

import (
	"fmt"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// BenchmarkOverwrite times the namespace change that puts a staged file
// in place of an existing one, the last step of an S3 overwrite: "replace"
// renames it over the old file, which is released (an unversioned
// bucket); "keep" moves the old file into a directory of the key's
// versions and the new one into its name in one Apply (a versioned
// bucket). 1,000 keys are overwritten in turn; the staged files and the
// keys' version directories are made before the timer starts. Reports
// CPU (the released files' inactivation included) and log bytes per
// overwrite.
func BenchmarkOverwrite(b *testing.B) {
	for _, keep := range []bool{false, true} {
		name := "replace"
		if keep {
			name = "keep"
		}
		b.Run(name, func(b *testing.B) { benchOverwrite(b, keep) })
	}
}

func benchOverwrite(b *testing.B, keep bool) {
	const keys = 1000
	v, collector := startBench(b)
	var err error
	mkdir := func(name string) format.Ino {
		d, err := v.Names().Mkdir(v.Root(), name, xfs.Attrs{Mode: 0o755})
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	cur, versions, tmp := mkdir("cur"), mkdir("versions"), mkdir("tmp")
	keyVersions := make([]format.Ino, keys)
	for k := range keys {
		if _, err := v.Names().Create(cur, fmt.Sprintf("key-%04d", k), xfs.Attrs{Mode: 0o644}); err != nil {
			b.Fatal(err)
		}
		if keep {
			if keyVersions[k], err = v.Names().Mkdir(versions, fmt.Sprintf("key-%04d", k), xfs.Attrs{Mode: 0o755}); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range b.N {
		if _, err := v.Names().Create(tmp, fmt.Sprintf("staged-%08d", i), xfs.Attrs{Mode: 0o644}); err != nil {
			b.Fatal(err)
		}
	}
	if err := v.Sync(); err != nil {
		b.Fatal(err)
	}
	etag := []xfs.Xattr{{Namespace: "user", Name: "xfs3.etag", Value: []byte("0123456789abcdef0123456789abcdef")}}
	b.ReportAllocs()
	b.ResetTimer()
	start, logBytes := processCPU(b), v.LogStats().Bytes
	for i := range b.N {
		staged, key := fmt.Sprintf("staged-%08d", i), fmt.Sprintf("key-%04d", i%keys)
		if keep {
			err = v.Names().Apply([]xfs.NameOp{
				{Dir: cur, Name: key, ToDir: keyVersions[i%keys], ToName: fmt.Sprintf("v-%08d", i)},
				{Dir: tmp, Name: staged, ToDir: cur, ToName: key, Attrs: etag},
			})
		} else {
			err = v.Names().RenameSettingXattrs(tmp, staged, cur, key, etag)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	endBench(b, v, collector, start, logBytes)
}
