package xfs_test

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// Write-path benchmarks, each beside the kernel (on a loop mount of the
// same kind of image, made by our mkfs) and, for data, the raw volume
// file, measured in the same run:
//
//	go test -run '^$' -bench 'Create|SequentialWrite' -benchtime 1x ./xfs/
//
// Every timing ends with the data durable: Close for the engine, syncfs
// for the kernel, fsync for the raw file.

const (
	benchDirs  = 100
	benchFiles = 1000
)

func newBenchImage(b *testing.B, size int64) string {
	img := filepath.Join(b.TempDir(), fmt.Sprintf("bench-%d.img", time.Now().UnixNano()))
	if _, err := mkfs.Format(img, mkfs.Options{Size: size}); err != nil {
		b.Fatal(err)
	}
	return img
}

// syncfs flushes the kernel's view of a mount (sync(2): the benchmark
// machine has nothing else worth flushing).
func syncfs(_ *testing.B, _ string) { syscall.Sync() }

// processCPU is the CPU time (user and system) this process has used so
// far. The engine's CPU per operation, unlike its wall time, hardly moves
// with the load of a shared machine; the kernel's cannot be measured this
// way, since its log and inode work runs in kernel threads.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCreateDelete100k creates 100,000 empty files in 100
// directories, then deletes them, through the engine and through the
// kernel. Both sides do the same work: changes go to the log as it
// fills, and each phase ends durable (the engine's Sync, the kernel's
// sync), as rm does; the engine does not force the log for every call
// (LazyCommits), which the kernel never does either.
//
// The engine runs as xfs3 serve does, with per-CPU inode gc: like the
// kernel's inodegc, an unlink returns once the inode is on the unlinked
// list, and background workers free it (a producer more than a backlog
// ahead of its worker waits). It deletes the files twice over, on two
// volumes: by one Unlink per file ("delete-ratio" compares that loop,
// ended by a sync, with the kernel's unlink loop), and by UnlinkFiles
// with each directory's names in calls of 1,000, as S3's DeleteObjects
// sends them ("bulk-delete-ratio"; the kernel has no such call, so its
// side is the same unlink loop). "space-back-ratio" compares the times
// until every inode and block is free too: the engine's Close drains its
// gc queues, the kernel's unmount its inodegc. The engine's CPU time per
// operation (garbage collection and inode gc included) is reported too.
func BenchmarkCreateDelete100k(b *testing.B) {
	oracle.Require(b, oracle.ToolMount)
	var one, bulk engineCreateDelete
	var kCreate, kDelete, kBack time.Duration
	for i := 0; i < b.N; i++ {
		one.run(b, false)
		bulk.run(b, true)

		kimg := newBenchImage(b, 4<<30)
		mnt := oracle.Mount(b, kimg, false)
		start := time.Now()
		for d := 0; d < benchDirs; d++ {
			dir := filepath.Join(mnt, fmt.Sprintf("d%03d", d))
			if err := os.Mkdir(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			for f := 0; f < benchFiles; f++ {
				fd, err := syscall.Open(filepath.Join(dir, fmt.Sprintf("object-%06d", f)), syscall.O_CREAT|syscall.O_WRONLY, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				syscall.Close(fd)
			}
		}
		syncfs(b, mnt)
		kCreate += time.Since(start)
		start = time.Now()
		for d := 0; d < benchDirs; d++ {
			dir := filepath.Join(mnt, fmt.Sprintf("d%03d", d))
			for f := 0; f < benchFiles; f++ {
				if err := syscall.Unlink(filepath.Join(dir, fmt.Sprintf("object-%06d", f))); err != nil {
					b.Fatal(err)
				}
			}
		}
		syncfs(b, mnt)
		kDelete += time.Since(start)
		oracle.Unmount(b, mnt)
		kBack += time.Since(start)
		os.Remove(kimg)
	}
	n := float64(b.N * benchDirs * benchFiles)
	b.ReportMetric(n/one.create.Seconds(), "engine-creates/s")
	b.ReportMetric(n/kCreate.Seconds(), "kernel-creates/s")
	b.ReportMetric(kCreate.Seconds()/one.create.Seconds(), "create-ratio")
	b.ReportMetric(n/one.delete.Seconds(), "engine-deletes/s")
	b.ReportMetric(n/bulk.delete.Seconds(), "engine-bulk-deletes/s")
	b.ReportMetric(n/kDelete.Seconds(), "kernel-deletes/s")
	b.ReportMetric(kDelete.Seconds()/one.delete.Seconds(), "delete-ratio")
	b.ReportMetric(kDelete.Seconds()/bulk.delete.Seconds(), "bulk-delete-ratio")
	b.ReportMetric(kBack.Seconds()/one.back.Seconds(), "space-back-ratio")
	b.ReportMetric(kBack.Seconds()/bulk.back.Seconds(), "bulk-space-back-ratio")
	b.ReportMetric(float64(one.createCPU.Microseconds())/n, "engine-cpu-us/create")
	b.ReportMetric(float64(one.deleteCPU.Microseconds())/n, "engine-cpu-us/delete")
	b.ReportMetric(float64(bulk.deleteCPU.Microseconds())/n, "engine-cpu-us/bulk-delete")
}

// engineCreateDelete sums the engine's side of CreateDelete100k over its
// runs: wall and CPU times of the create and delete phases, and the time
// from the first delete until everything is free.
type engineCreateDelete struct {
	create, delete, back, createCPU, deleteCPU time.Duration
}

// run creates the files on a new volume and deletes them, one Unlink per
// file or, with bulk, by UnlinkFiles over each directory's names.
func (e *engineCreateDelete) run(b *testing.B, bulk bool) {
	img := newBenchImage(b, 4<<30)
	defer os.Remove(img)
	v, err := xfs.Open(img, xfs.Options{LazyCommits: true})
	if err != nil {
		b.Fatal(err)
	}
	collector, err := gc.Start(v, gc.Options{Mode: gc.PerCPU})
	if err != nil {
		b.Fatal(err)
	}
	start, startCPU := time.Now(), processCPU(b)
	dirs := make([]format.Ino, benchDirs)
	names := make([]string, benchFiles)
	for f := range names {
		names[f] = fmt.Sprintf("object-%06d", f)
	}
	for d := range dirs {
		if dirs[d], err = v.Names().Mkdir(v.Root(), fmt.Sprintf("d%03d", d), xfs.Attrs{Mode: 0o755}); err != nil {
			b.Fatal(err)
		}
		for _, name := range names {
			if _, err := v.Names().Create(dirs[d], name, xfs.Attrs{Mode: 0o644}); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := v.Sync(); err != nil {
		b.Fatal(err)
	}
	e.create += time.Since(start)
	e.createCPU += processCPU(b) - startCPU
	start, startCPU = time.Now(), processCPU(b)
	for _, d := range dirs {
		if bulk {
			for i, err := range v.Names().UnlinkFiles(d, names) {
				if err != nil {
					b.Fatalf("%s: %v", names[i], err)
				}
			}
			continue
		}
		for _, name := range names {
			if err := v.Names().Unlink(d, name); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := v.Sync(); err != nil {
		b.Fatal(err)
	}
	e.delete += time.Since(start)
	if err := collector.Close(); err != nil {
		b.Fatal(err)
	}
	if err := v.Close(); err != nil {
		b.Fatal(err)
	}
	e.back += time.Since(start)
	e.deleteCPU += processCPU(b) - startCPU
}

// BenchmarkUnlink times the engine's foreground unlink alone: b.N empty
// files, made before the timer starts, are unlinked from 100 directories
// while per-CPU inode gc frees them behind, as under xfs3 serve. Its
// allocations and CPU profile are where the unlink's cost is looked for:
//
//	go test -run '^$' -bench Unlink -benchtime 100000x -memprofile mem.out ./xfs/
func BenchmarkUnlink(b *testing.B) { benchUnlinks(b, false) }

// BenchmarkUnlinkFiles is BenchmarkUnlink through UnlinkFiles: each
// directory's names go in calls of up to 1,000 (S3's DeleteObjects
// limit), as a bulk delete sends them.
func BenchmarkUnlinkFiles(b *testing.B) { benchUnlinks(b, true) }

// BenchmarkCreate times the engine's create alone: b.N empty files over
// 100 directories, one to each in turn, lazily committed as
// CreateDelete100k commits them, ended by a Sync inside the timer. Its
// CPU profile is where a create's cost is looked for:
//
//	go test -run '^$' -bench 'Create$' -benchtime 100000x -cpuprofile cpu.out ./xfs/
func BenchmarkCreate(b *testing.B) { benchCreates(b, false) }

// BenchmarkCreateDirByDir is BenchmarkCreate filling one directory before
// the next, as CreateDelete100k and the kernel's side of it do: each
// directory's blocks and inode change many times in a row.
func BenchmarkCreateDirByDir(b *testing.B) { benchCreates(b, true) }

func benchCreates(b *testing.B, dirByDir bool) {
	v, collector := startBench(b)
	dirs := make([]format.Ino, benchDirs)
	for d := range dirs {
		var err error
		if dirs[d], err = v.Names().Mkdir(v.Root(), fmt.Sprintf("d%03d", d), xfs.Attrs{Mode: 0o755}); err != nil {
			b.Fatal(err)
		}
	}
	names := make([]string, b.N)
	for i := range names {
		names[i] = fmt.Sprintf("object-%08d", i)
	}
	perDir := (b.N + benchDirs - 1) / benchDirs
	if err := v.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, logBytes := processCPU(b), v.LogStats().Bytes
	for i, name := range names {
		d := i % benchDirs
		if dirByDir {
			d = i / perDir
		}
		if _, err := v.Names().Create(dirs[d], name, xfs.Attrs{Mode: 0o644}); err != nil {
			b.Fatal(err)
		}
	}
	if err := v.Sync(); err != nil {
		b.Fatal(err)
	}
	endBench(b, v, collector, start, logBytes)
}

func benchUnlinks(b *testing.B, bulk bool) {
	v, collector := startBench(b)
	var err error
	dirs := make([]format.Ino, benchDirs)
	for d := range dirs {
		if dirs[d], err = v.Names().Mkdir(v.Root(), fmt.Sprintf("d%03d", d), xfs.Attrs{Mode: 0o755}); err != nil {
			b.Fatal(err)
		}
	}
	names := make([][]string, benchDirs) // by directory, in creation order
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("object-%08d", i)
		if _, err := v.Names().Create(dirs[i%benchDirs], name, xfs.Attrs{Mode: 0o644}); err != nil {
			b.Fatal(err)
		}
		names[i%benchDirs] = append(names[i%benchDirs], name)
	}
	if err := v.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, logBytes := processCPU(b), v.LogStats().Bytes
	if bulk {
		for d, dirNames := range names {
			for len(dirNames) > 0 {
				n := min(len(dirNames), 1000)
				for i, err := range v.Names().UnlinkFiles(dirs[d], dirNames[:n]) {
					if err != nil {
						b.Fatalf("%s: %v", dirNames[i], err)
					}
				}
				dirNames = dirNames[n:]
			}
		}
	} else {
		for i := 0; i < b.N; i++ {
			if err := v.Names().Unlink(dirs[i%benchDirs], names[i%benchDirs][i/benchDirs]); err != nil {
				b.Fatal(err)
			}
		}
	}
	// The log bytes are what the unlinks and the inactivations they
	// queued have logged so far (some inactivations still run).
	endBench(b, v, collector, start, logBytes)
}

// startBench opens a fresh 4 GiB volume with lazy commits and per-CPU
// inode gc, as the server runs; endBench closes both.
func startBench(b *testing.B) (*xfs.Volume, *gc.InodeGC) {
	v, err := xfs.Open(newBenchImage(b, 4<<30), xfs.Options{LazyCommits: true})
	if err != nil {
		b.Fatal(err)
	}
	collector, err := gc.Start(v, gc.Options{Mode: gc.PerCPU})
	if err != nil {
		b.Fatal(err)
	}
	return v, collector
}

// endBench stops the timer, reports the process's CPU and the bytes
// logged per operation since start and logBytes, and closes the
// collector and the volume.
func endBench(b *testing.B, v *xfs.Volume, collector *gc.InodeGC, start time.Duration, logBytes int64) {
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-start).Nanoseconds())/float64(b.N)/1e3, "cpu-us/op")
	b.ReportMetric(float64(v.LogStats().Bytes-logBytes)/float64(b.N), "log-B/op")
	if err := collector.Close(); err != nil {
		b.Fatal(err)
	}
	if err := v.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSequentialWrite writes 1 GiB in 4 MiB chunks into one file
// through the engine, into the volume file directly, and into a file on a
// kernel mount. "ratio" is engine throughput over raw throughput.
func BenchmarkSequentialWrite(b *testing.B) {
	oracle.Require(b, oracle.ToolMount)
	chunk := make([]byte, 4<<20)
	rand.New(rand.NewSource(1)).Read(chunk)
	var engine, raw, kernel time.Duration
	for i := 0; i < b.N; i++ {
		img := newBenchImage(b, 4<<30)
		v, err := xfs.Open(img, xfs.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ino, err := v.Names().Create(v.Root(), "big", xfs.Attrs{Mode: 0o644})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for off := int64(0); off < seqFileSize; off += int64(len(chunk)) {
			if _, err := v.Files().WriteAt(ino, chunk, off); err != nil {
				b.Fatal(err)
			}
		}
		if err := v.Close(); err != nil {
			b.Fatal(err)
		}
		engine += time.Since(start)
		st := statOf(b, img, ino)

		// The same bytes straight into the volume file, past the metadata.
		f, err := os.OpenFile(img, os.O_RDWR, 0)
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		base := int64(1 << 30)
		for off := int64(0); off < seqFileSize; off += int64(len(chunk)) {
			if _, err := f.WriteAt(chunk, base+off); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		raw += time.Since(start)
		f.Close()
		os.Remove(img)

		kimg := newBenchImage(b, 4<<30)
		mnt := oracle.Mount(b, kimg, false)
		start = time.Now()
		kf, err := os.Create(filepath.Join(mnt, "big"))
		if err != nil {
			b.Fatal(err)
		}
		for off := int64(0); off < seqFileSize; off += int64(len(chunk)) {
			if _, err := kf.Write(chunk); err != nil {
				b.Fatal(err)
			}
		}
		if err := kf.Sync(); err != nil {
			b.Fatal(err)
		}
		kf.Close()
		kernel += time.Since(start)
		oracle.Unmount(b, mnt)
		os.Remove(kimg)
		b.Logf("engine file: %d extents (%s)", st.Extents, st.DataFormat)
	}
	mb := float64(seqFileSize) * float64(b.N) / (1 << 20)
	b.ReportMetric(mb/engine.Seconds(), "engine-MB/s")
	b.ReportMetric(mb/raw.Seconds(), "raw-MB/s")
	b.ReportMetric(mb/kernel.Seconds(), "kernel-MB/s")
	b.ReportMetric(raw.Seconds()/engine.Seconds(), "ratio")
}

func statOf(b *testing.B, img string, ino format.Ino) xfs.Stat {
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	st, err := v.Stat(ino)
	if err != nil {
		b.Fatal(err)
	}
	return st
}
