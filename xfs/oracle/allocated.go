package oracle

import (
	"errors"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// LogRange returns where the internal log of the filesystem in img lies,
// in bytes of the image, as xfs_db reads the primary superblock.
func LogRange(t testing.TB, img string) (off, n int64) {
	t.Helper()
	sb := DBSuperblock(t, img)
	field := func(name string) int64 {
		v, err := strconv.ParseInt(sb[name], 10, 64)
		if err != nil {
			t.Fatalf("xfs_db superblock field %s = %q: %v", name, sb[name], err)
		}
		return v
	}
	bsize, agblocks, agblklog := field("blocksize"), field("agblocks"), field("agblklog")
	start := field("logstart") // a filesystem block: AG number << agblklog | AG block
	ag, agbno := start>>agblklog, start&(1<<agblklog-1)
	return (ag*agblocks + agbno) * bsize, field("logblocks") * bsize
}

// AllocatedOutside returns the bytes the host file system has allocated
// to the file at path, less the data it holds in [skipOff, skipOff+skipLen).
// Trim tests measure a volume file this way with the internal log skipped:
// the log is written round and round and fills the sparse file as it
// advances, growth that no trim can or should give back.
func AllocatedOutside(t testing.TB, path string, skipOff, skipLen int64) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	end := skipOff + skipLen
	var inSkip int64
	for off := skipOff; off < end; {
		data, err := f.Seek(off, seekData)
		if errors.Is(err, syscall.ENXIO) || err == nil && data >= end {
			break // only a hole is left
		}
		if err != nil {
			t.Fatalf("%s: SEEK_DATA: %v", path, err)
		}
		hole, err := f.Seek(data, seekHole)
		if err != nil {
			t.Fatalf("%s: SEEK_HOLE: %v", path, err)
		}
		inSkip += min(hole, end) - data
		off = hole
	}
	return st.Blocks*512 - inSkip
}
