package s3api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/store"
)

// BenchmarkVersioning compares, in one run and through loopback HTTP
// (signed, durable on acknowledgement), a bucket with versioning Enabled
// against one that never had it, on one store:
//
//   - overwrite: 4 KiB PUTs over existing keys at 8 and 32 clients; the
//     versioned side keeps every replaced version.
//   - delete: DELETEs of existing keys at 8 clients; the versioned side
//     makes a delete marker and keeps the object.
//   - list: ListObjectsV2 (pages of 1000) of 5000 keys in a bucket without
//     versions and in one where each key has 10 noncurrent versions, and
//     ListObjectVersions of the latter (every version an entry); and
//     ListObjectsV2 of 55000 keys, as many inodes as those versions.
//
// The sides take turns in rounds (which goes first rotates). Reported:
// each side's rate and versioned/plain. Run it alone:
//
//	go test -run '^$' -bench Versioning -benchtime 1x ./s3api/
func BenchmarkVersioning(b *testing.B) {
	h, st := newBenchHandlerOfSize(b, MetricsRoot, store.Options{}, 4<<30)
	srv := httptest.NewServer(h)
	defer srv.Close()
	web := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	defer web.CloseIdleConnections()
	for _, name := range []string{"plain", "versioned"} {
		if err := st.CreateBucket(name); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Versions().SetState("versioned", store.VersioningEnabled); err != nil {
		b.Fatal(err)
	}
	body := bytes.Repeat([]byte{'v'}, 4096)
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	const keys = 2000
	key := func(i int) string { return fmt.Sprintf("d%d/k%d", i%10, i) }
	fill(b, st, []string{"plain", "versioned"}, keys, key, 1, body)
	for _, clients := range []int{8, 32} {
		b.Run(fmt.Sprintf("overwrite/clients=%d", clients), func(b *testing.B) {
			rates := alternate(b, st, clients, []string{"plain", "versioned"}, func(bucket string) error {
				return putSigned(web, srv.URL+"/"+bucket+"/"+key(rand.IntN(keys)), body, hash)
			})
			report(b, rates, "PUT/s")
		})
	}
	b.Run("delete/clients=8", func(b *testing.B) {
		const deletable = 60000 // more than either side deletes in its six rounds
		dkey := func(i int) string { return fmt.Sprintf("del/d%d/k%d", i%10, i) }
		fill(b, st, []string{"plain", "versioned"}, deletable, dkey, 1, body[:1])
		var next [2]atomic.Int64
		sides := []string{"plain", "versioned"}
		rates := alternate(b, st, 8, sides, func(bucket string) error {
			i := 0
			if bucket == "versioned" {
				i = 1
			}
			n := int(next[i].Add(1))
			if n >= deletable {
				return fmt.Errorf("out of keys to delete")
			}
			return deleteSigned(web, srv.URL+"/"+bucket+"/"+dkey(n))
		})
		report(b, rates, "DELETE/s")
	})
	b.Run("list", func(b *testing.B) {
		const listKeys = 5000
		lkey := func(i int) string { return fmt.Sprintf("list/d%d/k%05d", i%10, i) }
		fill(b, st, []string{"plain"}, listKeys, lkey, 1, body[:100])
		fill(b, st, []string{"versioned"}, listKeys, lkey, 11, body[:100])
		// As many keys as the versioned bucket has versions: a
		// listing that reads as many inodes.
		wkey := func(i int) string { return fmt.Sprintf("wide/d%d/k%06d", i%10, i) }
		fill(b, st, []string{"plain"}, 11*listKeys, wkey, 1, body[:100])
		var took [4]time.Duration
		var entries [4]int
		walks := []func() (int, error){
			func() (int, error) { return listV2(web, srv.URL+"/plain?list-type=2&prefix=list/") },
			func() (int, error) { return listV2(web, srv.URL+"/versioned?list-type=2&prefix=list/") },
			func() (int, error) { return listVersions(web, srv.URL+"/versioned?versions&prefix=list/") },
			func() (int, error) { return listV2(web, srv.URL+"/plain?list-type=2&prefix=wide/") },
		}
		for r := 0; r < 5; r++ {
			for k := range walks {
				i := (r + k) % len(walks)
				start := time.Now()
				n, err := walks[i]()
				if err != nil {
					b.Fatal(err)
				}
				took[i] += time.Since(start)
				entries[i] += n
			}
		}
		rate := func(i int) float64 { return float64(entries[i]) / took[i].Seconds() }
		b.ReportMetric(rate(0), "plain_V2_keys/s")
		b.ReportMetric(rate(1), "versioned_V2_keys/s")
		b.ReportMetric(rate(2), "versions_entries/s")
		b.ReportMetric(rate(1)/rate(0), "V2_versioned/plain")
		b.ReportMetric(rate(2)/rate(0), "versions/V2")
		b.ReportMetric(rate(3), "plain_V2_wide_keys/s")
		b.ReportMetric(rate(2)/rate(3), "versions/V2_wide")
	})
}

// fill puts n keys into each bucket, each versions times, with 16
// writers straight into the store.
func fill(b *testing.B, st *store.Store, buckets []string, n int, key func(int) string, versions int, body []byte) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n*versions {
					return
				}
				for _, bucket := range buckets {
					if _, err := st.PutObject(bucket, key(i%n), bytes.NewReader(body), int64(len(body)), store.Meta{}); err != nil {
						failed.Store(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
}

// alternate runs op on each side in turns of a second, six rounds,
// clients at a time, and returns each side's rate. A side's turn ends
// once the inode gc has freed what its requests released (a plain
// bucket's deletes and overwrites; a versioned bucket keeps its
// versions): that work belongs to the side that made it, and left to run
// on it would slow the other side's next turn.
func alternate(b *testing.B, st *store.Store, clients int, sides []string, op func(side string) error) []float64 {
	b.Helper()
	const round, rounds = time.Second, 6
	done := make([]int64, len(sides))
	elapsed := make([]time.Duration, len(sides))
	for r := 0; r < rounds; r++ {
		for k := range sides {
			i := (r + k) % len(sides)
			start := time.Now()
			n, _, err := putRound(clients, round, func() error { return op(sides[i]) })
			if err != nil {
				b.Fatalf("%s: %v", sides[i], err)
			}
			for st.GCStats().Pending > 0 {
				time.Sleep(time.Millisecond)
			}
			done[i] += n
			elapsed[i] += time.Since(start)
		}
	}
	rates := make([]float64, len(sides))
	for i := range sides {
		rates[i] = float64(done[i]) / elapsed[i].Seconds()
	}
	return rates
}

// report puts plain and versioned rates and their ratio on b.
func report(b *testing.B, rates []float64, unit string) {
	b.ReportMetric(rates[0], "plain_"+unit)
	b.ReportMetric(rates[1], "versioned_"+unit)
	b.ReportMetric(rates[1]/rates[0], "versioned/plain")
}

// getSigned GETs url, signed, and returns the body of a 200.
func getSigned(client *http.Client, method, target string) ([]byte, error) {
	req, err := http.NewRequest(method, target, nil)
	if err != nil {
		return nil, err
	}
	empty := sha256.Sum256(nil)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(empty[:]))
	req = signer.SignV4(*req, testAccessKey, testSecretKey, "", testRegion)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode/100 != 2 {
		err = fmt.Errorf("%s %s: status %d: %s", method, target, resp.StatusCode, data)
	}
	return data, err
}

// deleteSigned DELETEs url, signed.
func deleteSigned(client *http.Client, target string) error {
	_, err := getSigned(client, http.MethodDelete, target)
	return err
}

// listV2 walks a ListObjectsV2 listing to its end and counts its keys.
func listV2(client *http.Client, target string) (int, error) {
	n, token := 0, ""
	for {
		u := target
		if token != "" {
			u += "&continuation-token=" + url.QueryEscape(token)
		}
		data, err := getSigned(client, http.MethodGet, u)
		if err != nil {
			return 0, err
		}
		var page struct {
			KeyCount              int
			IsTruncated           bool
			NextContinuationToken string
		}
		if err := xml.Unmarshal(data, &page); err != nil {
			return 0, err
		}
		n += page.KeyCount
		if !page.IsTruncated {
			return n, nil
		}
		token = page.NextContinuationToken
	}
}

// listVersions walks a ListObjectVersions listing to its end and counts
// its versions and delete markers.
func listVersions(client *http.Client, target string) (int, error) {
	n, keyMarker, versionMarker := 0, "", ""
	for {
		u := target
		if keyMarker != "" {
			u += "&key-marker=" + url.QueryEscape(keyMarker) + "&version-id-marker=" + url.QueryEscape(versionMarker)
		}
		data, err := getSigned(client, http.MethodGet, u)
		if err != nil {
			return 0, err
		}
		// Counted, not kept: as listV2 reads only KeyCount.
		var page struct {
			IsTruncated         bool
			NextKeyMarker       string
			NextVersionIdMarker string
			Versions            []struct{} `xml:"Version"`
			DeleteMarkers       []struct{} `xml:"DeleteMarker"`
		}
		if err := xml.Unmarshal(data, &page); err != nil {
			return 0, err
		}
		n += len(page.Versions) + len(page.DeleteMarkers)
		if !page.IsTruncated {
			return n, nil
		}
		keyMarker, versionMarker = page.NextKeyMarker, page.NextVersionIdMarker
	}
}
