package s3api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/s3api/iam"
	"github.com/xfs3/xfs3/s3api/identity"
	"github.com/xfs3/xfs3/s3api/sigv4"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// The identity the authorization benchmarks sign as: a user with one
// attached policy of three statements, in a bucket that has a policy of
// its own, so that every decision walks five statements and reads the
// bucket's parsed policy from the cache.
const (
	authBenchUser   = "benchuser"
	authBenchSecret = "benchuser-secret-0123456789"
	authBenchPolicy = "bench-rw3"

	// authBenchUserPolicy: everything on the bucket and its objects,
	// the location of any bucket, and no deletes under locked/.
	authBenchUserPolicy = `{"Version":"2012-10-17","Statement":[
 {"Sid":"BenchBucket","Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::bench","arn:aws:s3:::bench/*"]},
 {"Sid":"Locate","Effect":"Allow","Action":["s3:GetBucketLocation"],"Resource":["arn:aws:s3:::*"]},
 {"Sid":"KeepLocked","Effect":"Deny","Action":["s3:DeleteObject"],"Resource":["arn:aws:s3:::bench/locked/*"]}]}`

	// authBenchBucketPolicy is not public: it grants another user reads
	// and denies everyone PUTs under locked/ (neither applies to the
	// benchmark's requests, so both are walked to the end).
	authBenchBucketPolicy = `{"Version":"2012-10-17","Statement":[
 {"Sid":"ReaderReads","Effect":"Allow","Principal":{"AWS":["arn:aws:iam:::user/reader"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::bench/*"]},
 {"Sid":"NoPutLocked","Effect":"Deny","Principal":{"AWS":["*"]},"Action":["s3:PutObject"],"Resource":["arn:aws:s3:::bench/locked/*"]}]}`
)

// BenchmarkAuthHTTP compares, in one run and on one server (a loopback
// listener, metrics on, request logs discarded, 1 GiB volume), 4 KiB
// requests signed by the root credentials, which skip policy
// evaluation, with the same requests signed by a user whose three-
// statement policy and the bucket's two-statement policy decide each of
// them: PUTs overwriting 1,024 keys in turn, durable on acknowledgement,
// and GETs of 1,024 other keys, at 8 and 32 clients. The four sides
// (root PUT, user PUT, root GET, user GET) take turns in 20 rounds of
// half a second each; the user and root sides of each kind run back to
// back, and which of the two goes first alternates from round to round.
// Reported: each side's rate and CPU per request (client and server,
// this process), put-ratio and get-ratio (user/root over all rounds, the
// target is 0.95 or more), the minimum, median and maximum of the
// rounds' user/root ratios, and user/root of the CPU per request.
// XFS3_AUTH_BENCH_CONTROL=1 signs the user sides with the root
// credentials too: an A/A control that shows the noise. Run it alone:
//
//	go test -run '^$' -bench AuthHTTP -benchtime 1x ./s3api/
func BenchmarkAuthHTTP(b *testing.B) {
	h, st := newBenchHandler(b, MetricsRoot, store.Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := bytes.Repeat([]byte{'a'}, 4096)
	sum := sha256.Sum256(body)
	bodyHash := hex.EncodeToString(sum[:])
	const pool = 1024
	putKey := func(i int) string { return fmt.Sprintf("put/d%d/k%d", i%10, i) }
	getKey := func(i int) string { return fmt.Sprintf("get/d%d/k%d", i%10, i) }
	fill(b, st, []string{"bench"}, pool, putKey, 1, body)
	fill(b, st, []string{"bench"}, pool, getKey, 1, body)
	setupAuthBenchUser(b, srv.URL)

	userAK, userSK := authBenchUser, authBenchSecret
	if os.Getenv("XFS3_AUTH_BENCH_CONTROL") == "1" {
		userAK, userSK = testAccessKey, testSecretKey
		b.Log("control: the user sides sign with the root credentials")
	}
	type side struct {
		name   string
		get    bool
		ak, sk string
		next   atomic.Int64
	}
	sides := []*side{
		{name: "root_PUT", ak: testAccessKey, sk: testSecretKey},
		{name: "user_PUT", ak: userAK, sk: userSK},
		{name: "root_GET", get: true, ak: testAccessKey, sk: testSecretKey},
		{name: "user_GET", get: true, ak: userAK, sk: userSK},
	}
	b.Logf("load average before: %s", loadAverage())
	for _, clients := range []int{8, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			const round, rounds = 500 * time.Millisecond, 20
			web := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}}
			defer web.CloseIdleConnections()
			op := func(s *side) error {
				i := int(s.next.Add(1) % pool)
				if s.get {
					return authRequest(web, http.MethodGet, srv.URL+"/bench/"+getKey(i), nil, emptyHash, s.ak, s.sk, len(body))
				}
				return authRequest(web, http.MethodPut, srv.URL+"/bench/"+putKey(i), body, bodyHash, s.ak, s.sk, 0)
			}
			for _, s := range sides { // warm-up: connections, caches
				if _, _, err := putRound(clients, round/4, func() error { return op(s) }); err != nil {
					b.Fatalf("%s: %v", s.name, err)
				}
			}
			var done [4]int64
			var elapsed, cpu [4]time.Duration
			var putRatios, getRatios []float64
			for r := 0; r < rounds; r++ {
				order := []int{0, 1, 2, 3}
				if r%2 == 1 {
					order = []int{1, 0, 3, 2}
				}
				var rate [4]float64
				for _, i := range order {
					cpu0 := processCPU()
					n, took, err := putRound(clients, round, func() error { return op(sides[i]) })
					if err != nil {
						b.Fatalf("%s: %v", sides[i].name, err)
					}
					cpu[i] += processCPU() - cpu0
					done[i] += n
					elapsed[i] += took
					rate[i] = float64(n) / took.Seconds()
				}
				putRatios = append(putRatios, rate[1]/rate[0])
				getRatios = append(getRatios, rate[3]/rate[2])
			}
			var rate, cpuPer [4]float64
			for i, s := range sides {
				rate[i] = float64(done[i]) / elapsed[i].Seconds()
				cpuPer[i] = cpu[i].Seconds() * 1e6 / float64(done[i])
				b.ReportMetric(rate[i], s.name+"/s")
				b.ReportMetric(cpuPer[i], s.name+"_cpu_us")
			}
			b.ReportMetric(rate[1]/rate[0], "put-ratio")
			b.ReportMetric(rate[3]/rate[2], "get-ratio")
			reportSpread(b, "put-ratio", putRatios)
			reportSpread(b, "get-ratio", getRatios)
			b.ReportMetric(cpuPer[1]/cpuPer[0], "put-cpu-ratio")
			b.ReportMetric(cpuPer[3]/cpuPer[2], "get-cpu-ratio")
			b.Logf("clients %d: PUT root %.0f/s user %.0f/s (%.3f), GET root %.0f/s user %.0f/s (%.3f); CPU per request PUT %.0f/%.0f us, GET %.0f/%.0f us (root/user)",
				clients, rate[0], rate[1], rate[1]/rate[0], rate[2], rate[3], rate[3]/rate[2], cpuPer[0], cpuPer[1], cpuPer[2], cpuPer[3])
			b.Logf("clients %d: round ratios user/root PUT %.3f", clients, putRatios)
			b.Logf("clients %d: round ratios user/root GET %.3f", clients, getRatios)
		})
	}
	b.Logf("load average after: %s", loadAverage())
}

// emptyHash is the SHA-256 of an empty body, hex.
var emptyHash = func() string {
	sum := sha256.Sum256(nil)
	return hex.EncodeToString(sum[:])
}()

// setupAuthBenchUser makes, through the admin API and S3 as root, the
// benchmark's policy, its user with the policy attached and the policy
// of bucket "bench", and checks that the user is held to them.
func setupAuthBenchUser(b *testing.B, url string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root := &admin.Client{Endpoint: url, AccessKey: testAccessKey, SecretKey: testSecretKey}
	if err := root.AddPolicy(ctx, authBenchPolicy, []byte(authBenchUserPolicy)); err != nil {
		b.Fatal(err)
	}
	if err := root.AddUser(ctx, authBenchUser, authBenchSecret, true); err != nil {
		b.Fatal(err)
	}
	if _, err := root.AttachPolicies(ctx, authBenchUser, authBenchPolicy); err != nil {
		b.Fatal(err)
	}
	web := &http.Client{}
	defer web.CloseIdleConnections()
	doc := []byte(authBenchBucketPolicy)
	sum := sha256.Sum256(doc)
	if err := authRequest(web, http.MethodPut, url+"/bench?policy", doc, hex.EncodeToString(sum[:]), testAccessKey, testSecretKey, 0); err != nil {
		b.Fatal(err)
	}
	// The user is not root: the policy's Deny holds.
	err := authRequest(web, http.MethodDelete, url+"/bench/locked/x", nil, emptyHash, authBenchUser, authBenchSecret, 0)
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		b.Fatalf("DELETE under locked/ as the user: %v, want AccessDenied", err)
	}
}

// authRequest sends a request signed by ak and sk (hash: the body's
// SHA-256, hex) and wants a 2xx answer; want > 0 also wants that many
// bytes of body.
func authRequest(client *http.Client, method, target string, body []byte, hash, ak, sk string, want int) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-Amz-Content-Sha256", hash)
	req = signer.SignV4(*req, ak, sk, "", testRegion)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s %s as %s: status %d: %s", method, target, ak, resp.StatusCode, data)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && want > 0 && n != int64(want) {
		err = fmt.Errorf("%s %s: %d bytes, want %d", method, target, n, want)
	}
	return err
}

// reportSpread reports the minimum, median and maximum of ratios as
// NAME-min, NAME-median and NAME-max.
func reportSpread(b *testing.B, name string, ratios []float64) {
	s := slices.Clone(ratios)
	slices.Sort(s)
	b.ReportMetric(s[0], name+"-min")
	b.ReportMetric(s[len(s)/2], name+"-median")
	b.ReportMetric(s[len(s)-1], name+"-max")
}

// loadAverage is the first three fields of /proc/loadavg, or "?".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// BenchmarkAuthorize is the authorization step alone (server.authorize
// after the signature is verified and the signer identified) on a
// prepared request, for a PutObject and a GetObject signed by root and by
// the benchmark's user; each iteration starts from a fresh request, so
// the condition keys are made every time, as for a real request. For the
// user's GetObject it also times the parts: making the condition keys,
// finding the bucket's policy in the cache, and Decide over the five
// statements. Run it with:
//
//	go test -run '^$' -bench Authorize -benchmem ./s3api/
func BenchmarkAuthorize(b *testing.B) {
	s, id := newAuthBenchServer(b)
	for _, op := range []string{"PutObject", "GetObject"} {
		method := http.MethodPut
		if op == "GetObject" {
			method = http.MethodGet
		}
		r := httptest.NewRequest(method, "/bench/put/d1/k1", nil)
		r.RemoteAddr = "127.0.0.1:40000"
		r.Header.Set("User-Agent", "MinIO (linux; amd64) minio-go/v7.0.0")
		r.Header.Set("X-Amz-Content-Sha256", emptyHash)
		r.Header.Set("X-Amz-Date", "20261201T000000Z")
		for _, who := range []string{"root", "user"} {
			tmpl := request{op: op, bucket: "bench", key: "put/d1/k1"}
			if who == "root" {
				tmpl.auth = &sigv4.Auth{Kind: sigv4.V4Header, AccessKey: testAccessKey}
				tmpl.root = true
			} else {
				tmpl.auth = &sigv4.Auth{Kind: sigv4.V4Header, AccessKey: authBenchUser}
				tmpl.ident = id
			}
			b.Run(op+"/"+who, func(b *testing.B) {
				rq := new(request)
				b.ReportAllocs()
				for b.Loop() {
					*rq = tmpl
					if err := s.authorize(r, rq); err != nil {
						b.Fatal(err)
					}
				}
			})
			if who != "user" || op != "GetObject" {
				continue
			}
			b.Run(op+"/user/context", func(b *testing.B) {
				rq := new(request)
				b.ReportAllocs()
				for b.Loop() {
					*rq = tmpl
					rq.context(r, s)
				}
			})
			b.Run(op+"/user/bucketAuth", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if s.bucketAuth("bench").policy == nil {
						b.Fatal("no bucket policy")
					}
				}
			})
			b.Run(op+"/user/Decide", func(b *testing.B) {
				rq := tmpl
				req := iam.Request{Action: "s3:GetObject", Resource: iam.ObjectARN("bench", "put/d1/k1"),
					Context: rq.context(r, s), Principals: id.Principals()}
				policy := s.bucketAuth("bench").policy
				b.ReportAllocs()
				for b.Loop() {
					if d := id.Decide(req, policy); !d.Allowed() {
						b.Fatal(d)
					}
				}
			})
		}
	}
}

// BenchmarkAuthRequest is one 4 KiB request through the whole handler
// in this process (no socket), signed once by root or by the
// benchmark's user and sent again each iteration, so that what differs
// between the two is the server's work: verifying, identifying,
// authorizing. The PUTs overwrite one key and wait for the log like any
// PUT. Run it with:
//
//	go test -run '^$' -bench AuthRequest -benchmem ./s3api/
func BenchmarkAuthRequest(b *testing.B) {
	h, st := newBenchHandler(b, MetricsRoot, store.Options{})
	body := bytes.Repeat([]byte{'a'}, 4096)
	sum := sha256.Sum256(body)
	bodyHash := hex.EncodeToString(sum[:])
	if _, err := st.PutObject("bench", "get/k", bytes.NewReader(body), int64(len(body)), store.Meta{}); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	setupAuthBenchUser(b, srv.URL)
	srv.Close()
	creds := map[string][2]string{"root": {testAccessKey, testSecretKey}, "user": {authBenchUser, authBenchSecret}}
	for _, method := range []string{http.MethodPut, http.MethodGet} {
		for _, who := range []string{"root", "user"} {
			b.Run(method+"/"+who, func(b *testing.B) {
				target, hash := "/bench/put/k", bodyHash
				if method == http.MethodGet {
					target, hash = "/bench/get/k", emptyHash
				}
				req := httptest.NewRequest(method, target, nil)
				req.Header.Set("X-Amz-Content-Sha256", hash)
				if method == http.MethodPut {
					req.ContentLength = int64(len(body))
				}
				req = signer.SignV4(*req, creds[who][0], creds[who][1], "", testRegion)
				b.ReportAllocs()
				for b.Loop() {
					if method == http.MethodPut {
						req.Body = io.NopCloser(bytes.NewReader(body))
					}
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						b.Fatalf("%s as %s: %d %s", method, who, w.Code, w.Body)
					}
				}
			})
		}
	}
}

// newAuthBenchServer is a server (without a router: authorization only)
// over a fresh volume with bucket "bench" and its policy, and the
// benchmark's user with its policy attached; it returns the user's
// identity.
func newAuthBenchServer(b *testing.B) (*server, *identity.Identity) {
	b.Helper()
	img := filepath.Join(b.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(img)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if err := st.CreateBucket("bench"); err != nil {
		b.Fatal(err)
	}
	if err := st.BucketConfigs().Put("bench", store.ConfigPolicy, []byte(authBenchBucketPolicy)); err != nil {
		b.Fatal(err)
	}
	s := &server{store: st, region: DefaultRegion, log: zerolog.Nop(), now: time.Now,
		creds: sigv4.StaticCredentials{testAccessKey: testSecretKey}}
	if s.identities, err = openIdentities(st, s.creds, s.now); err != nil {
		b.Fatal(err)
	}
	if err := s.identities.SetPolicy(authBenchPolicy, []byte(authBenchUserPolicy)); err != nil {
		b.Fatal(err)
	}
	if err := s.identities.AddUser(authBenchUser, authBenchSecret, true); err != nil {
		b.Fatal(err)
	}
	if _, err := s.identities.Attach(authBenchUser, authBenchPolicy); err != nil {
		b.Fatal(err)
	}
	id, ok := s.identities.Lookup(authBenchUser)
	if !ok || len(id.Policies) != 1 || len(id.Policies[0].Statements) != 3 {
		b.Fatalf("user %q: %+v, %v", authBenchUser, id, ok)
	}
	if p := s.bucketAuth("bench").policy; p == nil || len(p.Statements) != 2 {
		b.Fatalf("bucket policy: %+v", p)
	}
	// The user is held to the policies: a delete under locked/ is denied.
	rq := &request{op: "DeleteObject", bucket: "bench", key: "locked/x", ident: id,
		auth: &sigv4.Auth{Kind: sigv4.V4Header, AccessKey: authBenchUser}}
	if err := s.authorize(httptest.NewRequest(http.MethodDelete, "/bench/locked/x", nil), rq); err == nil {
		b.Fatal("the user may delete under locked/")
	}
	return s, id
}
