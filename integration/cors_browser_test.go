package integration

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"html"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/cors"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// chromiumPath returns Debian's chromium. Missing, the test skips, or
// fails under XFS3_REQUIRE_ORACLES=1.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if path, err := exec.LookPath("chromium"); err == nil {
		return path
	}
	msg := "chromium not found (Debian package chromium): the CORS test needs a real browser"
	if os.Getenv(oracle.RequireEnv) == "1" {
		t.Fatalf("%s (%s=1 makes this fatal)", msg, oracle.RequireEnv)
	}
	t.Skip(msg)
	return ""
}

// browserPage is what testdata/cors/page.html is given: the URLs and form
// fields its script uses, all signed here.
type browserPage struct {
	PutURL       string            `json:"putURL"`
	PutBody      string            `json:"putBody"`
	PostURL      string            `json:"postURL"`
	FormFields   map[string]string `json:"formFields"`
	PostBody     string            `json:"postBody"`
	GetPutURL    string            `json:"getPutURL"`
	GetPostURL   string            `json:"getPostURL"`
	HeaderPutURL string            `json:"headerPutURL"`
	ClosedGetURL string            `json:"closedGetURL"`
	ClosedPutURL string            `json:"closedPutURL"`
}

// browserStep is what the page saw of one request: its status and what
// it could read, or the error the browser threw instead.
type browserStep struct {
	Status    int    `json:"status"`
	ETag      string `json:"etag"`
	RequestID string `json:"requestID"`
	Body      string `json:"body"`
	Error     string `json:"error"`
	Message   string `json:"message"`
}

// TestCORSBrowser: headless chromium loads a page from one loopback
// origin, and its script uses xfs3 on another port: a presigned PUT
// (after a preflight), a form POST (no preflight: a form is a simple
// request) and GETs of both objects through presigned URLs, all allowed
// by the bucket's CORS rules. The browser refuses, with a TypeError, a
// PUT with a header the rule does not allow (at its preflight), and both
// a GET and a PUT to a bucket whose rules name another origin; the
// refused PUTs never reach the store.
func TestCORSBrowser(t *testing.T) {
	browser := chromiumPath(t)
	start := time.Now()
	s := startServer(t, "1G")
	c := s.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	results := make(chan []byte, 1)
	var page []byte
	// Started once the page is made: the origin is known before, from
	// the listener.
	site := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(page)
		case "/result":
			b, _ := io.ReadAll(r.Body)
			select {
			case results <- b:
			default:
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	origin := "http://" + site.Listener.Addr().String() // another port than xfs3's

	for _, b := range []string{"open", "closed"} {
		if err := c.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rules := map[string][]cors.Rule{
		"open": {{AllowedOrigin: []string{origin}, AllowedMethod: []string{"GET", "PUT", "POST"},
			AllowedHeader: []string{"Content-Type"}, ExposeHeader: []string{"ETag"}, MaxAgeSeconds: 60}},
		"closed": {{AllowedOrigin: []string{"http://127.0.0.1:1"}, AllowedMethod: []string{"GET", "PUT", "POST"}, AllowedHeader: []string{"*"}}},
	}
	for b, r := range rules {
		if err := c.SetBucketCors(ctx, b, cors.NewConfig(r)); err != nil {
			t.Fatalf("SetBucketCors %s: %v", b, err)
		}
	}
	if _, err := c.PutObject(ctx, "closed", "secret", strings.NewReader("closed bytes"), 12, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}

	p := browserPage{PutBody: "put from a browser\n", PostBody: "posted from a browser\n"}
	presign := func(method, bucket, key string) string {
		u, err := c.Presign(ctx, method, bucket, key, 10*time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		return u.String()
	}
	p.PutURL, p.GetPutURL = presign("PUT", "open", "browser-put.txt"), presign("GET", "open", "browser-put.txt")
	p.GetPostURL = presign("GET", "open", "browser-post.txt")
	p.HeaderPutURL = presign("PUT", "open", "header.txt")
	p.ClosedGetURL, p.ClosedPutURL = presign("GET", "closed", "secret"), presign("PUT", "closed", "new.txt")
	policy := minio.NewPostPolicy()
	for _, err := range []error{policy.SetBucket("open"), policy.SetKey("browser-post.txt"), policy.SetContentType("text/plain"),
		policy.SetContentLengthRange(1, 1<<20), policy.SetExpires(time.Now().Add(10 * time.Minute))} {
		if err != nil {
			t.Fatal(err)
		}
	}
	u, fields, err := c.PresignedPostPolicy(ctx, policy)
	if err != nil {
		t.Fatal(err)
	}
	p.PostURL, p.FormFields = u.String(), fields
	tmpl, err := template.ParseFiles("testdata/cors/page.html")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, p); err != nil {
		t.Fatal(err)
	}
	page = buf.Bytes()
	site.Start()

	got := runBrowser(t, browser, origin+"/", results)
	t.Logf("page saw: %s", got)
	var steps map[string]browserStep
	if err := json.Unmarshal(got, &steps); err != nil {
		t.Fatalf("results %q: %v", got, err)
	}
	sum := md5.Sum([]byte(p.PutBody))
	want := map[string]browserStep{
		// ETag is exposed by the rule; the request ID is not, so the page cannot read it.
		"put":           {Status: 200, ETag: `"` + hex.EncodeToString(sum[:]) + `"`},
		"post":          {Status: 204},
		"getPut":        {Status: 200, Body: p.PutBody},
		"getPost":       {Status: 200, Body: p.PostBody},
		"putWithHeader": {Error: "TypeError", Message: "Failed to fetch"},
		"closedGet":     {Error: "TypeError", Message: "Failed to fetch"},
		"closedPut":     {Error: "TypeError", Message: "Failed to fetch"},
	}
	for name, w := range want {
		if steps[name] != w {
			t.Errorf("%s: the page saw %+v, want %+v", name, steps[name], w)
		}
	}

	// What the server saw: the refused PUTs stopped at their preflights,
	// and the form's object has the form's Content-Type.
	for _, key := range []string{"open/header.txt", "closed/new.txt"} {
		bucket, k, _ := strings.Cut(key, "/")
		if _, err := c.StatObject(ctx, bucket, k, minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
			t.Errorf("%s after a refused preflight: %v", key, err)
		}
	}
	if info, err := c.StatObject(ctx, "open", "browser-post.txt", minio.StatObjectOptions{}); err != nil || info.ContentType != "text/plain" {
		t.Errorf("the form's object: %+v, %v", info, err)
	}
	s.stop(t) // its log is complete once it has exited
	preflights := map[string]int{}
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, `"op":"PreflightCORS"`) {
			preflights[regexp.MustCompile(`"status":\d+`).FindString(line)]++
		}
	}
	if preflights[`"status":200`] < 1 || preflights[`"status":403`] < 2 {
		t.Errorf("preflights by status: %v; want the open PUT's allowed and two refused", preflights)
	}
	t.Logf("browser CORS test took %v", time.Since(start).Round(time.Millisecond))
}

// runBrowser loads url in headless chromium and returns what the page
// posted to /result (or, failing that, wrote into its results element
// before chromium dumped the DOM). Virtual time lets the page's requests
// finish and then ends the run at once; 30 s of real time bound it.
func runBrowser(t *testing.T, browser, url string, results <-chan []byte) []byte {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--user-data-dir="+home+"/profile",
		"--virtual-time-budget=20000", "--dump-dom", url)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_CACHE_HOME="+home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // chromium's helpers go with it
	var dom, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &dom, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the group of the chromium started here
		<-exited
	}()
	timeout := time.After(30 * time.Second)
	select {
	case b := <-results:
		return b
	case err := <-exited:
		exited <- err
		select {
		case b := <-results:
			return b
		default:
		}
		m := regexp.MustCompile(`(?s)<pre id="results">(.*?)</pre>`).FindStringSubmatch(dom.String())
		if m == nil || m[1] == "running" {
			t.Fatalf("chromium exited (%v) before the page finished; DOM:\n%s\nstderr:\n%s", err, dom.String(), stderr.tail(4<<10))
		}
		return []byte(html.UnescapeString(m[1]))
	case <-timeout:
		t.Fatalf("the page did not finish in 30 s; stderr:\n%s", stderr.tail(4<<10))
	}
	return nil
}

// TestCORSBoto3: boto3's bucket CORS calls (botocore checksums the
// document with CRC32 and sends no Content-MD5), and the preflight and
// response headers its rules give, read with Python's own HTTP client.
func TestCORSBoto3(t *testing.T) {
	boto3Python(t)
	s := startServer(t, "1G")
	out := runBoto3(t, s, `
import urllib.request, urllib.error
s3.create_bucket(Bucket="web")
try:
    s3.get_bucket_cors(Bucket="web")
    raise SystemExit("GetBucketCors without a configuration succeeded")
except s3.exceptions.ClientError as e:
    print(e.response["Error"]["Code"])
rules = [{"ID": "app", "AllowedOrigins": ["https://*.example.com"], "AllowedMethods": ["GET", "PUT"],
          "AllowedHeaders": ["x-amz-*"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 300}]
s3.put_bucket_cors(Bucket="web", CORSConfiguration={"CORSRules": rules})
print(s3.get_bucket_cors(Bucket="web")["CORSRules"] == rules)
try:
    s3.put_bucket_cors(Bucket="web", CORSConfiguration={"CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["PATCH"]}]})
except s3.exceptions.ClientError as e:
    print(e.response["Error"]["Code"], e.response["Error"]["Message"])
req = urllib.request.Request(sys.argv[1] + "/web/k", method="OPTIONS", headers={
    "Origin": "https://app.example.com", "Access-Control-Request-Method": "PUT",
    "Access-Control-Request-Headers": "x-amz-date,x-amz-content-sha256"})
with urllib.request.urlopen(req) as r:
    print(r.status, r.headers["Access-Control-Allow-Origin"], r.headers["Access-Control-Allow-Headers"], r.headers["Access-Control-Max-Age"])
req = urllib.request.Request(sys.argv[1] + "/web/k", method="OPTIONS", headers={
    "Origin": "https://example.org", "Access-Control-Request-Method": "PUT"})
try:
    urllib.request.urlopen(req)
except urllib.error.HTTPError as e:
    print(e.code, b"<Code>AccessForbidden</Code>" in e.read())
s3.delete_bucket_cors(Bucket="web")
try:
    s3.get_bucket_cors(Bucket="web")
except s3.exceptions.ClientError as e:
    print(e.response["Error"]["Code"])
`)
	want := strings.Join([]string{
		"NoSuchCORSConfiguration",
		"True",
		"InvalidRequest Found unsupported HTTP method in CORS config. Unsupported method is PATCH",
		"200 https://app.example.com x-amz-date, x-amz-content-sha256 300",
		"403 True",
		"NoSuchCORSConfiguration",
	}, "\n")
	if out != want {
		t.Errorf("boto3 saw:\n%s\nwant:\n%s", out, want)
	}
	s.stop(t)
}
