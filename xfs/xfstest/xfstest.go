// Package xfstest makes volume contents that tests and benchmarks of the
// packages above the engine need and cannot get through their own APIs.
// Only tests import it.
package xfstest

import (
	"bytes"
	"fmt"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// FragmentedFile creates name in directory dir as a regular file of
// extents one-block extents: its blocks are written one at a time, each
// followed by a block of a filler file that is then removed, so no two
// of them are adjacent on disk.
func FragmentedFile(v *xfs.Volume, dir format.Ino, name string, extents int) (format.Ino, error) {
	filler := name + ".filler"
	ino, err := v.Create(dir, name, xfs.Attrs{Mode: 0o644})
	if err != nil {
		return 0, err
	}
	fino, err := v.Create(dir, filler, xfs.Attrs{Mode: 0o644})
	if err != nil {
		return 0, err
	}
	block := bytes.Repeat([]byte{'f'}, int(v.Geometry().BlockSize))
	for i := range extents {
		off := int64(i) * int64(len(block))
		for _, f := range []format.Ino{ino, fino} {
			if _, err := v.WriteAt(f, block, off); err != nil {
				return 0, err
			}
		}
	}
	if err := v.Unlink(dir, filler); err != nil {
		return 0, err
	}
	st, err := v.Stat(ino)
	if err != nil {
		return 0, err
	}
	if int(st.Extents) < extents {
		return 0, fmt.Errorf("%s has %d extents, want %d", name, st.Extents, extents)
	}
	return ino, nil
}
