package s3api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// BenchmarkPut4KHTTP compares durable 4 KiB PUTs through HTTP (signed
// requests to a server on a loopback listener, metrics on as xfs3 serve
// has them) with the same PUTs straight into the store, and with the
// kernel creating, writing and fsyncing the same files on a loop mount of
// the same kind of volume, at 1, 8 and 32 clients. Every object is a new
// key spread over ten directories, as in the store's Put4K. The three
// sides take turns in rounds of a second (which goes first rotates) so
// that the machine's load meets them alike. Reported: each side's rate,
// http/kernel, store/kernel and http/store, and the CPU time per PUT of
// the two sides that run in this process (the kernel's runs in kernel
// threads). Run it alone:
//
//	go test -run '^$' -bench Put4KHTTP -benchtime 1x ./s3api/
func BenchmarkPut4KHTTP(b *testing.B) {
	oracle.Require(b, oracle.ToolMount)
	const round, rounds = time.Second, 6
	for _, clients := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			h, st := newBenchHandler(b, MetricsRoot, store.Options{})
			srv := httptest.NewServer(h)
			defer srv.Close()
			web := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}}
			defer web.CloseIdleConnections()
			kdir := kernelBenchDir(b)
			body := bytes.Repeat([]byte{'z'}, 4096)
			sum := sha256.Sum256(body)
			hash := hex.EncodeToString(sum[:])
			sides := []struct {
				name string
				put  func(key string) error
			}{
				{"http", func(key string) error { return putSigned(web, srv.URL+"/bench/"+key, body, hash) }},
				{"store", func(key string) error {
					_, err := st.PutObject("bench", key, bytes.NewReader(body), int64(len(body)), store.Meta{})
					return err
				}},
				{"kernel", func(key string) error { return createFsync(filepath.Join(kdir, key), body) }},
			}
			var done [3]int64
			var elapsed, cpu [3]time.Duration
			var keys atomic.Int64
			key := func() string { n := keys.Add(1); return fmt.Sprintf("d%d/k%d", n%10, n) }
			for _, s := range sides { // warm-up: connections, directories
				if _, _, err := putRound(clients, round/4, func() error { return s.put(key()) }); err != nil {
					b.Fatal(err)
				}
			}
			for r := 0; r < rounds; r++ {
				for k := range sides {
					i := (r + k) % len(sides)
					cpu0 := processCPU()
					n, took, err := putRound(clients, round, func() error { return sides[i].put(key()) })
					if err != nil {
						b.Fatalf("%s: %v", sides[i].name, err)
					}
					cpu[i] += processCPU() - cpu0
					done[i] += n
					elapsed[i] += took
				}
			}
			var rate [3]float64
			for i, s := range sides {
				rate[i] = float64(done[i]) / elapsed[i].Seconds()
				b.ReportMetric(rate[i], s.name+"_PUT/s")
			}
			b.ReportMetric(rate[0]/rate[2], "http/kernel")
			b.ReportMetric(rate[1]/rate[2], "store/kernel")
			b.ReportMetric(rate[0]/rate[1], "http/store")
			b.ReportMetric(cpu[0].Seconds()*1e6/float64(done[0]), "http_cpu_us/PUT")
			b.ReportMetric(cpu[1].Seconds()*1e6/float64(done[1]), "store_cpu_us/PUT")
		})
	}
}

// putSigned PUTs body to url with a SigV4 signature by the test
// credentials (hash: the body's SHA-256, hex) and wants a 200.
func putSigned(client *http.Client, url string, body []byte, hash string) error {
	req, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Amz-Content-Sha256", hash)
	req = signer.SignV4(*req, testAccessKey, testSecretKey, "", testRegion)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT %s: status %d", url, resp.StatusCode)
	}
	return nil
}

// kernelBenchDir mounts a fresh volume and returns its directory "bench"
// with subdirectories d0…d9.
func kernelBenchDir(b *testing.B) string {
	img := filepath.Join(b.TempDir(), "kernel.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 1 << 30}); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(oracle.Mount(b, img, false), "bench")
	for d := 0; d < 10; d++ {
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("d%d", d)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// createFsync is the kernel's durable PUT: create, write, fsync.
func createFsync(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// putRound runs clients goroutines calling put for d and returns the
// calls done, the time taken and the first error.
func putRound(clients int, d time.Duration, put func() error) (int64, time.Duration, error) {
	var n atomic.Int64
	var first sync.Once
	var failed error
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				if err := put(); err != nil {
					first.Do(func() { failed = err })
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return n.Load(), time.Since(start), failed
}
