package xfs_test

import (
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// Benchmarks that put the engine beside the raw volume file and the
// kernel, measured in the same run. Run them with
//
//	go test -run '^$' -bench . -benchtime 3x ./xfs/
//
// They need root, mkfs.xfs and loop mounts to build their images.

const seqFileSize = 1 << 30

// BenchmarkSequentialRead reads a 1 GiB file through the engine and, in
// the same iteration, the same extents straight from the volume file with
// the same buffer size. "ratio" is engine throughput over raw throughput.
func BenchmarkSequentialRead(b *testing.B) {
	oracle.Require(b, oracle.ToolMkfs, oracle.ToolMount)
	img := filepath.Join(b.TempDir(), "seq.img")
	oracle.Mkfs(b, img, 2<<30)
	mnt := oracle.Mount(b, img, false)
	writeRandomFile(b, filepath.Join(mnt, "big"), seqFileSize)
	oracle.Unmount(b, mnt)

	v := openRO(b, img)
	ino, err := v.Names().LookupPath("big", false)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := os.Open(img)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	ranges := extentRanges(b, img, v, ino)
	for _, cold := range []bool{false, true} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			benchSequential(b, v, ino, raw, ranges, cold)
		})
	}
}

// dropCaches empties the host page cache so reads go to the disk.
func dropCaches(b *testing.B) {
	exec.Command("sync").Run()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
		b.Skipf("cannot drop the page cache: %v", err)
	}
}

func benchSequential(b *testing.B, v *xfs.Volume, ino format.Ino, raw *os.File, ranges [][2]int64, cold bool) {
	buf := make([]byte, 4<<20)
	var engine, direct time.Duration
	b.SetBytes(seqFileSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if cold {
			dropCaches(b)
		}
		start := time.Now()
		for off := int64(0); ; off += int64(len(buf)) {
			n, err := v.Files().ReadAt(ino, buf, off)
			if err == io.EOF || n < len(buf) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		engine += time.Since(start)
		if cold {
			dropCaches(b)
		}
		start = time.Now()
		for _, r := range ranges {
			for off := r[0]; off < r[1]; off += int64(len(buf)) {
				n := min(int64(len(buf)), r[1]-off)
				if _, err := raw.ReadAt(buf[:n], off); err != nil {
					b.Fatal(err)
				}
			}
		}
		direct += time.Since(start)
	}
	mb := float64(seqFileSize) * float64(b.N) / (1 << 20)
	b.ReportMetric(mb/engine.Seconds(), "engine-MB/s")
	b.ReportMetric(mb/direct.Seconds(), "raw-MB/s")
	b.ReportMetric(direct.Seconds()/engine.Seconds(), "ratio")
}

// extentRanges returns the byte ranges of the volume file holding ino's data.
func extentRanges(b *testing.B, img string, v *xfs.Volume, ino format.Ino) [][2]int64 {
	out := oracle.DB(b, img, fmt.Sprintf("inode %d", ino), "bmap")
	g := v.Geometry()
	var ranges [][2]int64
	var foff, fsb, count int64
	for _, line := range splitLines(out) {
		// "data offset 0 startblock 24 (0/24) count 262120 flag 0"
		var ag, agb, flag int64
		if _, err := fmt.Sscanf(line, "data offset %d startblock %d (%d/%d) count %d flag %d", &foff, &fsb, &ag, &agb, &count, &flag); err != nil {
			continue
		}
		start := format.DaddrToByte(g.AgbToDaddr(format.AgNumber(ag), format.AgBlock(agb)))
		ranges = append(ranges, [2]int64{start, start + count<<g.BlockLog})
	}
	if len(ranges) == 0 {
		b.Fatalf("no extents in xfs_db bmap output:\n%s", out)
	}
	return ranges
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}

func writeRandomFile(b *testing.B, path string, size int64) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	chunk := make([]byte, 4<<20)
	for done := int64(0); done < size; done += int64(len(chunk)) {
		rng.Read(chunk)
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWalk100k lists a tree of 100,000 entries (100 directories of
// 1,000 files) by name, recursively: through the engine's ReadDir, through
// the kernel's find on a read-only loop mount of the same image, and with
// the xfs3 vol ls -R command (a whole process: open, walk, sort, print).
// All run warm (the image is in the host page cache; the kernel's dentry
// cache is dropped before each find by remounting). "ratio" is find time
// over engine time.
func BenchmarkWalk100k(b *testing.B) {
	oracle.Require(b, oracle.ToolMkfs, oracle.ToolMount)
	img := filepath.Join(b.TempDir(), "walk.img")
	oracle.Mkfs(b, img, 1<<30)
	mnt := oracle.Mount(b, img, false)
	for d := 0; d < 100; d++ {
		dir := filepath.Join(mnt, fmt.Sprintf("dir%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 1000; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("object-%06d", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	oracle.Unmount(b, mnt)
	bin := filepath.Join(b.TempDir(), "xfs3")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/xfs3").CombinedOutput(); err != nil {
		b.Fatalf("build xfs3: %v\n%s", err, out)
	}

	var engine, kernel, volls time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		var walk func(ino format.Ino)
		walk = func(ino format.Ino) {
			ents, err := v.Names().ReadDir(ino)
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range ents {
				n++
				if e.Type == format.FTDir {
					walk(e.Ino)
				}
			}
		}
		walk(v.Root())
		v.Close()
		engine += time.Since(start)
		if n != 100100 {
			b.Fatalf("engine listed %d entries", n)
		}

		ro := oracle.Mount(b, img, true)
		start = time.Now()
		out, err := exec.Command("find", ro).Output()
		kernel += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		oracle.Unmount(b, ro)
		if lines := len(splitLines(string(out))); lines != 100101 {
			b.Fatalf("find listed %d lines", lines)
		}

		start = time.Now()
		out, err = exec.Command(bin, "vol", "ls", "-R", img).Output()
		volls += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if lines := len(splitLines(string(out))); lines != 100100 {
			b.Fatalf("vol ls -R listed %d lines", lines)
		}
	}
	b.ReportMetric(float64(volls.Milliseconds())/float64(b.N), "volls-ms")
	b.ReportMetric(float64(engine.Milliseconds())/float64(b.N), "engine-ms")
	b.ReportMetric(float64(kernel.Milliseconds())/float64(b.N), "find-ms")
	b.ReportMetric(kernel.Seconds()/engine.Seconds(), "ratio")
}
