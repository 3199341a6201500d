package main

import (
	"fmt"
	"strconv"
)

const dfUsage = `Usage: xfs3 vol df [-h] VOLUME

Show the space and inodes of VOLUME as its AG headers count them (every
AGF and AGI is read and verified):

  block size: 4096
                Total         Used         Free  Use%
  blocks       114688          783       113905    1%
  inodes          192           11          181    6%

blocks  Total is the data blocks (sb_dblocks) minus the internal log.
        Free is the free space: free extents plus the blocks held by the
        AG free lists and the free-space btrees, the number xfs_db calls
        fdblocks. Used is Total minus Free: file and directory data, inodes,
        extended attributes and all other metadata (AG headers, btrees).
        The kernel's df(1) shows slightly less free space, because it
        keeps a reserve it never hands out.
inodes  Total is the inodes in the inode chunks allocated so far (icount),
        Free those of them not in use (ifree), Used the rest. XFS allocates
        further chunks on demand while there is free space.
Use%    Used / Total, rounded up, as df(1) does.

On a reflink volume a last line tells what shared extents save (copies
share their source's blocks; see the refcount btrees):

  shared: 2560 blocks mapped by more than one file; sharing saves 25600

  the first number is the blocks two or more files map, the second the
  blocks the volume would need on top of Used if every file had its own
  copy of them.

Flags:
  -h      human-readable: the blocks row becomes a bytes row with sizes in
          powers of 1024 (K, M, G, T, P, E), rounded up like df -h
  --help  show this help
`

func volDf(args []string, e *env) error {
	fs := newFlags("vol df")
	human := fs.Bool("h", false, "human-readable sizes")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want VOLUME, got %s", nargs(len(pos)))
	}
	v, err := openVolume(pos[0])
	if err != nil {
		return err
	}
	defer v.Close()
	s, err := v.Space().Statfs()
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	total := s.Blocks - s.LogBlocks
	used := s.UsedBlocks()
	w := e.stdout
	fmt.Fprintf(w, "block size: %d\n", s.BlockSize)
	fmt.Fprintf(w, "%-6s %12s %12s %12s %5s\n", "", "Total", "Used", "Free", "Use%")
	if *human {
		bs := uint64(s.BlockSize)
		fmt.Fprintf(w, "%-6s %12s %12s %12s %5s\n", "bytes", humanSize(total*bs), humanSize(used*bs), humanSize(s.FreeBlocks*bs), percent(used, total))
	} else {
		fmt.Fprintf(w, "%-6s %12d %12d %12d %5s\n", "blocks", total, used, s.FreeBlocks, percent(used, total))
	}
	iused := s.Inodes - s.FreeInodes
	fmt.Fprintf(w, "%-6s %12d %12d %12d %5s\n", "inodes", s.Inodes, iused, s.FreeInodes, percent(iused, s.Inodes))
	if !v.Geometry().Reflink {
		return nil
	}
	sh, err := v.Space().Shared()
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	if *human {
		bs := uint64(s.BlockSize)
		fmt.Fprintf(w, "shared: %s mapped by more than one file; sharing saves %s\n", humanSize(sh.SharedBlocks*bs), humanSize(sh.SavedBlocks*bs))
	} else {
		fmt.Fprintf(w, "shared: %d blocks mapped by more than one file; sharing saves %d\n", sh.SharedBlocks, sh.SavedBlocks)
	}
	return nil
}

// percent is used/total as a whole percentage rounded up, "-" for total 0.
func percent(used, total uint64) string {
	if total == 0 {
		return "-"
	}
	return strconv.FormatUint((used*100+total-1)/total, 10) + "%"
}

// humanSize renders n bytes in powers of 1024, rounding up like df -h: one
// decimal below 10 of a unit ("4.1M"), none above ("511M"); plain bytes get
// a "B" suffix.
func humanSize(n uint64) string {
	if n < 1024 {
		return strconv.FormatUint(n, 10) + "B"
	}
	const units = "KMGTPE"
	i, div := 0, uint64(1024)
	for i < len(units)-1 && n >= div*1024 {
		div *= 1024
		i++
	}
	if tenths := ceilDivMul(n, 10, div); tenths < 100 {
		return fmt.Sprintf("%d.%d%c", tenths/10, tenths%10, units[i])
	}
	whole := ceilDiv(n, div)
	if whole >= 1024 && i < len(units)-1 {
		return fmt.Sprintf("1.0%c", units[i+1])
	}
	return fmt.Sprintf("%d%c", whole, units[i])
}

func ceilDiv(a, b uint64) uint64 { return a/b + boolU(a%b != 0) }

// ceilDivMul is ceil(a*m/b) without overflowing a*m.
func ceilDivMul(a, m, b uint64) uint64 {
	q, r := a/b, a%b
	// a*m/b = q*m + r*m/b; r < b <= 2^60, so r*m fits for m <= 10
	return q*m + ceilDiv(r*m, b)
}

func boolU(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
