package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"

	"github.com/xfs3/xfs3/config"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

const mkfsUsage = `Usage: xfs3 mkfs [flags] PATH

Create an XFS v5 filesystem in the volume file or block device PATH, with
the geometry and features mkfs.xfs would choose, reflink included. A
missing PATH is created as a sparse file of --size bytes; an existing file
keeps its size unless --size is larger. Whatever PATH held before is lost.

Flags:
  --size SIZE            filesystem size: bytes, or a number with a binary
                         suffix K, M, G, T or P (also KiB, MiB, ...)
  --block-size N         block size, 1K to 64K (default 4096)
  --inode-size N         inode size, 512 to 2048 (default 512)
  --agcount N            number of allocation groups (default: from the size)
  --dir-block-size N     directory block size (default: the block size, at
                         least 4096)
  --label TEXT           filesystem label, at most 12 bytes
  --reflink=false        no reflink (shared extents): what
                         'mkfs.xfs -m reflink=0' makes (default true)
`

// sizeFlag is a byte count that accepts the suffixes of config.ParseSize.
type sizeFlag int64

func (s *sizeFlag) String() string { return strconv.FormatInt(int64(*s), 10) }

func (s *sizeFlag) Set(v string) error {
	n, err := config.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// runMkfs implements "xfs3 mkfs".
func runMkfs(args []string, stdout, stderr io.Writer) int {
	out := bufio.NewWriter(stdout)
	e := &env{stdout: out, stderr: stderr}
	status := finish(mkfsCommand(args, e), "mkfs", mkfsUsage, e)
	if err := out.Flush(); err != nil && status == exitOK {
		fmt.Fprintf(stderr, "xfs3: mkfs: write output: %v\n", err)
		status = exitError
	}
	return status
}

func mkfsCommand(args []string, e *env) error {
	flags := newFlags("mkfs")
	var size, blockSize, inodeSize, dirBlockSize sizeFlag
	flags.Var(&size, "size", "")
	flags.Var(&blockSize, "block-size", "")
	flags.Var(&inodeSize, "inode-size", "")
	flags.Var(&dirBlockSize, "dir-block-size", "")
	agcount := flags.Int("agcount", 0, "")
	label := flags.String("label", "", "")
	reflink := flags.Bool("reflink", true, "")
	pos, err := parseFlags(flags, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] == "" {
		return usagef("want exactly one PATH, got %d arguments", len(pos))
	}
	path := pos[0]
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && size == 0 {
		return usagef("%s does not exist; give --size to create it", path)
	}
	for _, v := range []sizeFlag{blockSize, inodeSize, dirBlockSize} {
		if v > math.MaxInt32 {
			return fmt.Errorf("size %d is far too large for a block, inode or directory block", v)
		}
	}
	res, err := mkfs.Format(path, mkfs.Options{
		Size: int64(size), BlockSize: int(blockSize), InodeSize: int(inodeSize), AgCount: *agcount,
		DirBlockSize: int(dirBlockSize), Label: *label, NoReflink: !*reflink,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", path, res)
	return nil
}
