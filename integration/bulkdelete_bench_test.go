package integration

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// bulkDeleteKeys is the most keys a DeleteObjects request names (S3's
// limit, and what aws s3 rm --recursive and minio-go's RemoveObjects send).
const bulkDeleteKeys = 1000

// BenchmarkHTTPBulkDeletes measures what a recursive delete costs through
// the real binary: per round, each side in turn (in an order that rotates
// from round to round, roundOrder) starts on a fresh volume,
// takes XFS3_BENCH_OBJECTS 4 KiB PUTs over 100 prefixes (as
// HTTPParallelDeletes does), then removes them all with DeleteObjects
// requests of 1,000 keys in listing order, from each client count of
// XFS3_BENCH_CLIENTS (default 1,4) taking the next request as it is
// answered. It prints keys deleted per second and the server's CPU per
// key for each run, and each side's median and its ratio to the first
// side's at the end. XFS3_BENCH_BINARIES, XFS3_BENCH_OBJECTS and
// XFS3_BENCH_ROUNDS mean what they do for HTTPParallelDeletes:
//
//	XFS3_BENCH_BINARIES=old=/path/xfs3-old,new=/path/xfs3-new \
//	  go test -run '^$' -bench HTTPBulkDeletes -benchtime 1x ./integration/
func BenchmarkHTTPBulkDeletes(b *testing.B) {
	getenv := func(k string) string {
		if k == "XFS3_BENCH_CLIENTS" && os.Getenv(k) == "" {
			return "1,4"
		}
		return os.Getenv(k)
	}
	cfg, err := deleteBenchConfigFrom(getenv, binary)
	if err != nil {
		b.Fatal(err)
	}
	rates := map[string][]float64{}
	for range b.N {
		for round := 1; round <= cfg.rounds; round++ {
			for _, clients := range cfg.clients {
				for _, i := range roundOrder(len(cfg.binaries), round-1) {
					nb := cfg.binaries[i]
					rate, cpu := runBulkDeletes(b, nb.path, clients, cfg.objects)
					label := fmt.Sprintf("%s clients=%d", nb.label, clients)
					rates[label] = append(rates[label], rate)
					fmt.Printf("round %d %-8s clients=%-2d objects=%d  DeleteObjects %8.0f keys/s  server CPU/key %v  load %s\n",
						round, nb.label, clients, cfg.objects, rate, cpu, oracle.LoadAverage())
				}
			}
		}
	}
	fmt.Println("median keys/s over rounds (ratio to the first binary):")
	for _, clients := range cfg.clients {
		first := median(slices.Clone(rates[fmt.Sprintf("%s clients=%d", cfg.binaries[0].label, clients)]))
		for _, nb := range cfg.binaries {
			m := median(slices.Clone(rates[fmt.Sprintf("%s clients=%d", nb.label, clients)]))
			fmt.Printf("  clients=%-2d %-8s %8.0f keys/s  x%.2f\n", clients, nb.label, m, m/first)
		}
	}
}

// runBulkDeletes runs one binary once: PUTs, then the DeleteObjects from
// clients goroutines; it answers keys deleted per second and the
// server's CPU per key (-1 where /proc does not say).
func runBulkDeletes(tb testing.TB, bin string, clients, objects int) (float64, time.Duration) {
	tb.Helper()
	dir, err := os.MkdirTemp("", "xfs3-bulkbench-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(dir)
	volMiB := max(1024, objects*4*deleteBenchObjectSize>>20)
	s := startPinnedBinaryOn(tb, nil, bin, filepath.Join(dir, "volume.xfs"), fmt.Sprintf("%dM", volMiB), "--durability", "on-ack")
	defer s.stop(tb)
	c := newBenchClient(s.URL, deleteBenchPutClients)
	defer c.http.CloseIdleConnections()
	if code, body, err := c.do("PUT", "/"+deleteBenchBucket, nil); err != nil || code != http.StatusOK {
		tb.Fatalf("create bucket: %d %v %s", code, err, body)
	}
	data := bytes.Repeat([]byte{'d'}, deleteBenchObjectSize)
	if _, err := c.parallel(deleteBenchPutClients, objects, "PUT", data, http.StatusOK); err != nil {
		tb.Fatalf("PUT phase: %v", err)
	}
	keys := make([]string, objects)
	for i := range keys {
		keys[i] = strings.TrimPrefix(deleteBenchKey(i), "/"+deleteBenchBucket+"/")
	}
	slices.Sort(keys) // listing order, as a recursive delete sends them
	var bodies [][]byte
	for len(keys) > 0 {
		n := min(len(keys), bulkDeleteKeys)
		bodies = append(bodies, deleteObjectsBody(keys[:n]))
		keys = keys[n:]
	}
	cpuBefore, cpuErr := processCPU(s.cmd.Process.Pid)
	start := time.Now()
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(bodies) {
					return
				}
				code, body, err := c.do("POST", "/"+deleteBenchBucket+"?delete", bodies[i])
				if err != nil || code != http.StatusOK || bytes.Contains(body, []byte("<Error>")) {
					tb.Errorf("DeleteObjects: %d %v %.300s", code, err, body)
					return
				}
			}
		}()
	}
	wg.Wait()
	rate := float64(objects) / time.Since(start).Seconds()
	cpu := time.Duration(-1)
	if cpuAfter, err := processCPU(s.cmd.Process.Pid); err == nil && cpuErr == nil {
		cpu = (cpuAfter - cpuBefore) / time.Duration(objects)
	}
	if code, body, err := c.do("GET", "/"+deleteBenchBucket+"?list-type=2&max-keys=1", nil); err != nil || code != http.StatusOK || bytes.Contains(body, []byte("<Contents>")) {
		tb.Fatalf("listing after the deletes: %d %v %s", code, err, body)
	}
	return rate, cpu
}

// deleteObjectsBody is a quiet DeleteObjects request naming keys.
func deleteObjectsBody(keys []string) []byte {
	var buf bytes.Buffer
	buf.WriteString("<Delete><Quiet>true</Quiet>")
	for _, k := range keys {
		buf.WriteString("<Object><Key>")
		xml.EscapeText(&buf, []byte(k))
		buf.WriteString("</Key></Object>")
	}
	buf.WriteString("</Delete>")
	return buf.Bytes()
}
