package integration

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// The files of a certs directory, as xfs3 serve (and MinIO) name them.
const (
	tlsCertFile = "public.crt"
	tlsKeyFile  = "private.key"
)

// tlsCA is a certificate authority made for one test, its certificate
// also written as a PEM file for the command-line clients.
type tlsCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool // trusts this CA alone
	file string         // the CA certificate, PEM
}

// newTLSCA makes a CA named name and writes its certificate into dir.
func newTLSCA(t *testing.T, name, dir string) *tlsCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(t),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"xfs3 integration tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &tlsCA{cert: cert, key: key, pool: x509.NewCertPool(), file: filepath.Join(dir, name+".pem")}
	ca.pool.AddCert(cert)
	if err := os.WriteFile(ca.file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return ca
}

// randomSerial is a fresh 128-bit certificate serial number.
func randomSerial(t *testing.T) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		t.Fatal(err)
	}
	return n.Add(n, big.NewInt(1)) // never 0
}

// issueServer returns a PEM server certificate for 127.0.0.1 and
// localhost signed by ca, its PEM private key (a new one each time) and
// its serial.
func (ca *tlsCA) issueServer(t *testing.T) (certPEM, keyPEM []byte, serial *big.Int) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial = randomSerial(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "xfs3 test server"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), serial
}

// installServer issues a server certificate and puts the pair in dir as
// a rotation tool does: each file written under a temporary name and
// renamed over the one in service, the key first. It returns the serial.
func (ca *tlsCA) installServer(t *testing.T, dir string) *big.Int {
	t.Helper()
	certPEM, keyPEM, serial := ca.issueServer(t)
	for _, f := range []struct {
		name string
		data []byte
	}{{tlsKeyFile, keyPEM}, {tlsCertFile, certPEM}} {
		tmp := filepath.Join(dir, "."+f.name+".tmp")
		if err := os.WriteFile(tmp, f.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, f.name)); err != nil {
			t.Fatal(err)
		}
	}
	return serial
}

// startTLSServer starts the real binary on the volume at path (created
// when missing) serving HTTPS with the pair in certsDir, given by
// --certs-dir or, when viaEnv, by XFS3_CERTS_DIR. s.URL is https://Host.
// The test's cleanup kills the server if it still runs.
func startTLSServer(t *testing.T, path, certsDir string, viaEnv bool) *server {
	t.Helper()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--volume", path, "--size", "1G", "--log-format", "json"}
	env := binaryEnv()
	if viaEnv {
		env = append(env, "XFS3_CERTS_DIR="+certsDir)
	} else {
		args = append(args, "--certs-dir", certsDir)
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	s := startCommand(t, path, cmd)
	if !strings.HasPrefix(s.URL, "https://") {
		t.Fatalf("xfs3 serve with a certs directory announced %q, want an https:// URL", s.URL)
	}
	return s
}

// tlsTransport is a fresh transport trusting the CAs of pool alone (the
// system's when pool is nil).
func tlsTransport(pool *x509.CertPool) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	return tr
}

// tlsMinio is a minio-go client of s over HTTPS trusting pool, without
// retries, so that a refused handshake fails at once.
func tlsMinio(t *testing.T, s *server, pool *x509.CertPool, secure bool) *minio.Client {
	t.Helper()
	c, err := minio.New(s.Host, &minio.Options{
		Creds:      credentials.NewStaticV4(accessKey, secretKey, ""),
		Region:     region,
		Secure:     secure,
		Transport:  tlsTransport(pool),
		MaxRetries: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// peerSerial shakes hands with s on a new connection, verifying the
// certificate for serverName against pool, and returns the serial of the
// certificate served.
func peerSerial(s *server, pool *x509.CertPool, serverName string) (*big.Int, error) {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: &tls.Config{RootCAs: pool, ServerName: serverName}}
	c, err := d.Dial("tcp", s.Host)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber, nil
}

// isUnknownAuthority reports whether err is a certificate a client could
// not chain to a CA it trusts.
func isUnknownAuthority(err error) bool {
	var ua x509.UnknownAuthorityError
	return errors.As(err, &ua) || strings.Contains(fmt.Sprint(err), "certificate signed by unknown authority")
}

// waitLog waits up to 5 s for the server log to hold want.
func waitLog(t *testing.T, s *server, want string) bool {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(s.logs.String(), want) {
			return true
		}
	}
	return false
}

// randomFile writes n random bytes to path and returns them.
func randomFile(t *testing.T, path string, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTLSClients serves HTTPS from a certs directory holding a pair
// issued by a CA made here, and drives the real binary with every S3
// client the suite knows, each trusting that CA: minio-go, the aws CLI,
// boto3 and rclone (mc is not among them: it is AGPL and not installed).
// Plain HTTP to the port and clients that do not trust the CA are
// refused. Then the pair is rotated while the server runs: new
// connections get the new certificate within seconds, one already open
// keeps the old, and every client works again, all without a restart.
// The volume is checked with xfs_repair at the end, after a restart with
// the certs directory given by XFS3_CERTS_DIR.
func TestTLSClients(t *testing.T) {
	work := t.TempDir()
	certsDir := filepath.Join(work, "certs")
	if err := os.Mkdir(certsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	ca := newTLSCA(t, "xfs3-test-ca", work)
	stranger := newTLSCA(t, "another-ca", work) // trusted by the refused clients
	serial1 := ca.installServer(t, certsDir)
	s := startTLSServer(t, filepath.Join(work, "data", "volume.xfs"), certsDir, false)
	t.Logf("serving on %s, certificate serial %x", s.URL, serial1)

	if got, err := peerSerial(s, ca.pool, ""); err != nil || got.Cmp(serial1) != 0 {
		t.Fatalf("first handshake: serial %x, %v; want %x", got, err, serial1)
	}
	if got, err := peerSerial(s, ca.pool, "localhost"); err != nil || got.Cmp(serial1) != 0 {
		t.Fatalf("handshake for localhost: serial %x, %v; want %x", got, err, serial1)
	}

	// Each client makes its own bucket per round and moves data both ways.
	clients := []struct {
		name string
		run  func(t *testing.T, round string)
	}{
		{"minio-go", func(t *testing.T, round string) { tlsMinioRound(t, s, ca, round) }},
		{"aws", func(t *testing.T, round string) { tlsAwsRound(t, s, ca, round) }},
		{"boto3", func(t *testing.T, round string) { tlsBoto3Round(t, s, ca, round) }},
		{"rclone", func(t *testing.T, round string) { tlsRcloneRound(t, s, ca, round) }},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) { c.run(t, "before") })
	}

	t.Run("refused", func(t *testing.T) {
		// Plain HTTP to the HTTPS port: Go's server answers 400 without
		// reaching the S3 handler, or the connection fails.
		plain := &http.Client{Transport: tlsTransport(nil), Timeout: 10 * time.Second}
		if resp, err := plain.Get("http://" + s.Host + "/minio/health/live"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("plain HTTP to the TLS port: %s %q, want 400 or an error", resp.Status, body)
			}
		} else {
			t.Logf("plain HTTP to the TLS port: %v", err)
		}
		if _, err := tlsMinio(t, s, ca.pool, false).BucketExists(context.Background(), "tls-minio-go-before"); err == nil {
			t.Error("minio-go over plain HTTP to the TLS port succeeded")
		}
		// Clients that do not trust the CA fail the handshake.
		for _, c := range []struct {
			name string
			pool *x509.CertPool
		}{{"system roots", nil}, {"another CA", stranger.pool}} {
			if got, err := peerSerial(s, c.pool, ""); err == nil {
				t.Errorf("a handshake trusting %s succeeded (serial %x)", c.name, got)
			} else if !isUnknownAuthority(err) {
				t.Errorf("a handshake trusting %s: %v, want an unknown authority", c.name, err)
			}
			if _, err := tlsMinio(t, s, c.pool, true).BucketExists(context.Background(), "tls-minio-go-before"); err == nil {
				t.Errorf("minio-go trusting %s succeeded", c.name)
			} else if !isUnknownAuthority(err) {
				t.Errorf("minio-go trusting %s: %v, want an unknown authority", c.name, err)
			}
		}
		// A certificate for 127.0.0.1 and localhost is no good for another name.
		if _, err := peerSerial(s, ca.pool, "xfs3.example.com"); err == nil {
			t.Error("a handshake for xfs3.example.com succeeded")
		}
		if !waitLog(t, s, `"message":"TLS handshake failed"`) {
			t.Error("the server log has no failed TLS handshake")
		}
	})

	t.Run("rotation", func(t *testing.T) {
		// A keep-alive connection opened before the rotation.
		var reused bool
		kept := &http.Client{Transport: tlsTransport(ca.pool), Timeout: 10 * time.Second}
		health := func(c *http.Client) *big.Int {
			t.Helper()
			req, err := http.NewRequest(http.MethodGet, s.URL+"/minio/health/live", nil)
			if err != nil {
				t.Fatal(err)
			}
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
			}))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("GET /minio/health/live: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.TLS == nil {
				t.Fatalf("GET /minio/health/live: %s, TLS %v", resp.Status, resp.TLS != nil)
			}
			return resp.TLS.PeerCertificates[0].SerialNumber
		}
		if got := health(kept); got.Cmp(serial1) != 0 {
			t.Fatalf("serial %x before the rotation, want %x", got, serial1)
		}

		serial2 := ca.installServer(t, certsDir)
		start := time.Now()
		var seen []string // the serials fresh connections got, in order, without repeats
		for {
			got, err := peerSerial(s, ca.pool, "")
			if err != nil {
				// Half rotated (the new key, the old certificate), the
				// server must go on serving the old pair whole.
				t.Fatalf("a handshake during the rotation failed after %v: %v", time.Since(start), err)
			}
			if h := fmt.Sprintf("%x", got); len(seen) == 0 || seen[len(seen)-1] != h {
				seen = append(seen, h)
			}
			if got.Cmp(serial2) == 0 {
				break
			}
			if got.Cmp(serial1) != 0 {
				t.Fatalf("serial %x served during the rotation, want %x or %x", got, serial1, serial2)
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("new connections still get serial %x %v after the rotation to %x", got, time.Since(start), serial2)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("new connections get the rotated certificate %x after %v (serials seen: %v)", serial2, time.Since(start).Round(time.Millisecond), seen)
		if got, err := peerSerial(s, ca.pool, "localhost"); err != nil || got.Cmp(serial2) != 0 {
			t.Errorf("after the rotation, a handshake for localhost: serial %x, %v; want %x", got, err, serial2)
		}
		if got := health(&http.Client{Transport: tlsTransport(ca.pool), Timeout: 10 * time.Second}); got.Cmp(serial2) != 0 || reused {
			t.Errorf("a fresh transport after the rotation: serial %x (reused connection: %v), want %x", got, reused, serial2)
		}
		// The connection opened before keeps the certificate it shook hands with.
		if got := health(kept); !reused {
			t.Errorf("the keep-alive connection was not reused (serial %x)", got)
		} else if got.Cmp(serial1) != 0 {
			t.Errorf("the keep-alive connection opened before the rotation now shows serial %x, want %x", got, serial1)
		}

		if s.cmd.ProcessState != nil {
			t.Fatalf("the server exited: %v", s.cmd.ProcessState)
		}
		if !waitLog(t, s, fmt.Sprintf(`"serial":"%x"`, serial2)) || !strings.Contains(s.logs.String(), `"message":"TLS certificate reloaded"`) {
			t.Errorf("the server log has no reload of serial %x", serial2)
		}
		if n := strings.Count(s.logs.String(), `"message":"TLS certificate loaded"`); n != 1 {
			t.Errorf("%d start-up loads of the certificate in the log, want 1: the server restarted?", n)
		}
	})
	if t.Failed() {
		t.FailNow()
	}

	for _, c := range clients {
		t.Run(c.name+"-after-rotation", func(t *testing.T) { c.run(t, "after") })
	}

	// A restart with the certs directory from the environment serves
	// the pair now in the directory, then the volume is checked.
	s.stop(t)
	s2 := startTLSServer(t, s.Volume, certsDir, true)
	got, err := peerSerial(s2, ca.pool, "")
	if err != nil || got.Cmp(serial1) == 0 {
		t.Errorf("after a restart with XFS3_CERTS_DIR: serial %x, %v; want the rotated one", got, err)
	}
	mc := tlsMinio(t, s2, ca.pool, true)
	if _, err := mc.StatObject(context.Background(), "tls-minio-go-before", "six-mib.bin", minio.StatObjectOptions{}); err != nil {
		t.Errorf("after the restart, minio-go: %v", err)
	}
	s2.stop(t)
	oracle.Repair(t, s.Volume)
}

// tlsMinioRound: minio-go trusting the CA makes a bucket, puts an object
// in two parts and a small one, and reads them back.
func tlsMinioRound(t *testing.T, s *server, ca *tlsCA, round string) {
	ctx := context.Background()
	c := tlsMinio(t, s, ca.pool, true)
	bucket := "tls-minio-go-" + round
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: region}); err != nil {
		t.Fatalf("MakeBucket over https: %v", err)
	}
	body := make([]byte, 6<<20)
	rand.Read(body)
	for key, data := range map[string][]byte{"six-mib.bin": body, "hello.txt": []byte("hello over TLS\n")} {
		if _, err := c.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)),
			minio.PutObjectOptions{PartSize: 5 << 20, ContentType: "application/octet-stream"}); err != nil {
			t.Fatalf("PutObject %s over https: %v", key, err)
		}
		obj, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj)
		obj.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("GetObject %s over https: %d bytes, %v; want the %d put", key, len(got), err, len(data))
		}
	}
	var keys []string
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	if strings.Join(keys, ",") != "hello.txt,six-mib.bin" {
		t.Errorf("ListObjects over https: %q", keys)
	}
}

// tlsAwsRound: the aws CLI with --ca-bundle copies a file up and down
// (multipart: above its 8 MiB threshold) and lists it with s3api, also
// with the bundle from AWS_CA_BUNDLE; before the rotation, without the
// bundle it fails certificate validation.
func tlsAwsRound(t *testing.T, s *server, ca *tlsCA, round string) {
	plain, home := awsClient(t, s) // s.URL is https://
	aws := &client{t: t, name: plain.name, args: append(append([]string{}, plain.args...), "--ca-bundle", ca.file), env: plain.env}
	bucket := "tls-aws-" + round
	up, down := filepath.Join(home, "up.bin"), filepath.Join(home, "down.bin")
	want := randomFile(t, up, 9<<20)
	aws.run("s3", "mb", "s3://"+bucket)
	aws.run("s3", "cp", "--no-progress", up, "s3://"+bucket+"/dir/nine-mib.bin")
	aws.run("s3", "cp", "--no-progress", "s3://"+bucket+"/dir/nine-mib.bin", down)
	if got, _ := os.ReadFile(down); !bytes.Equal(got, want) {
		t.Errorf("aws s3 cp over https: %d bytes back, want the %d sent", len(got), len(want))
	}
	viaEnv := &client{t: t, name: plain.name, args: plain.args, env: append(append([]string{}, plain.env...), "AWS_CA_BUNDLE="+ca.file)}
	var listed struct {
		KeyCount int
		Contents []struct {
			Key  string
			Size int
		}
	}
	// --no-paginate: the CLI's paginator drops KeyCount from its output.
	decode(t, viaEnv.run("s3api", "list-objects-v2", "--no-paginate", "--bucket", bucket), &listed)
	if listed.KeyCount != 1 || len(listed.Contents) != 1 || listed.Contents[0].Key != "dir/nine-mib.bin" || listed.Contents[0].Size != len(want) {
		t.Errorf("aws s3api list-objects-v2 over https: %+v", listed)
	}
	if round != "before" {
		return
	}
	untrusting := &client{t: t, name: plain.name, args: plain.args, env: append(append([]string{}, plain.env...), "AWS_MAX_ATTEMPTS=1")}
	if out, err := untrusting.try("s3api", "list-objects-v2", "--bucket", bucket); err == nil {
		t.Errorf("the aws CLI without the CA listed the bucket:\n%s", out)
	} else if !strings.Contains(out, "CERTIFICATE_VERIFY_FAILED") && !strings.Contains(out, "SSL validation failed") {
		t.Errorf("the aws CLI without the CA: %v, not a certificate failure:\n%s", err, out)
	}
}

// tlsBoto3Script puts and gets an object with boto3 verifying against
// the CA file, and checks that a client using its default trust store
// fails with an SSL error.
const tlsBoto3Script = `
import os, sys
import boto3, botocore.config, botocore.exceptions
url, ca, bucket, access, secret, region = sys.argv[1:7]

def client(verify):
    return boto3.client("s3", endpoint_url=url, region_name=region,
        aws_access_key_id=access, aws_secret_access_key=secret, verify=verify,
        config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))

s3 = client(ca)
s3.create_bucket(Bucket=bucket)
body = os.urandom(1 << 20)
s3.put_object(Bucket=bucket, Key="one-mib.bin", Body=body)
got = s3.get_object(Bucket=bucket, Key="one-mib.bin")["Body"].read()
if got != body:
    raise SystemExit("get_object over https: %d bytes back, want the %d put" % (len(got), len(body)))
keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
if keys != ["one-mib.bin"]:
    raise SystemExit("list_objects_v2 over https: %r" % keys)
try:
    client(True).head_bucket(Bucket=bucket)
except botocore.exceptions.SSLError as e:
    print("untrusting client refused:", e)
else:
    raise SystemExit("a boto3 client without the CA reached the server")
print("ok")
`

// tlsBoto3Round runs tlsBoto3Script.
func tlsBoto3Round(t *testing.T, s *server, ca *tlsCA, round string) {
	py := boto3Python(t)
	cmd := exec.Command(py, "-c", tlsBoto3Script, s.URL, ca.file, "tls-boto3-"+round, accessKey, secretKey, region)
	// No AWS_* or other CA settings of the caller's: the untrusting
	// client must see the default trust store alone.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "REQUESTS_CA_BUNDLE=") && !strings.HasPrefix(kv, "SSL_CERT_") && !strings.HasPrefix(kv, "CURL_CA_BUNDLE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+t.TempDir(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("boto3 over https: %v\n%s", err, out)
	}
	t.Logf("boto3: %s", strings.TrimSpace(string(out)))
}

// tlsRcloneRound: rclone with --ca-cert copies a file (multipart: above
// the 5 MiB cutoff set) up and back and lists it; before the rotation,
// without the CA it fails.
func tlsRcloneRound(t *testing.T, s *server, ca *tlsCA, round string) {
	oracle.Require(t, "rclone")
	home := t.TempDir()
	conf := filepath.Join(home, "rclone.conf")
	os.WriteFile(conf, nil, 0o600)
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"RCLONE_CONFIG_X3_TYPE=s3", "RCLONE_CONFIG_X3_PROVIDER=Other", "RCLONE_CONFIG_X3_ENDPOINT=" + s.URL,
		"RCLONE_CONFIG_X3_ACCESS_KEY_ID=" + accessKey, "RCLONE_CONFIG_X3_SECRET_ACCESS_KEY=" + secretKey,
		"RCLONE_CONFIG_X3_REGION=" + region}
	rc := &client{t: t, name: "rclone", env: env,
		args: []string{"--config", conf, "--ca-cert", ca.file, "--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M"}}
	src, back := filepath.Join(home, "src"), filepath.Join(home, "back")
	os.Mkdir(src, 0o755)
	want := randomFile(t, filepath.Join(src, "seven-mib.bin"), 7<<20)
	remote := "x3:tls-rclone-" + round
	rc.run("mkdir", remote)
	rc.run("copy", src, remote+"/dir")
	if out := rc.run("lsf", "-R", remote); !sameLines(out, "dir/", "dir/seven-mib.bin") {
		t.Errorf("rclone lsf over https:\n%s", out)
	}
	rc.run("copy", remote+"/dir", back)
	if got, _ := os.ReadFile(filepath.Join(back, "seven-mib.bin")); !bytes.Equal(got, want) {
		t.Errorf("rclone copy over https: %d bytes back, want the %d sent", len(got), len(want))
	}
	if round != "before" {
		return
	}
	untrusting := &client{t: t, name: "rclone", env: env,
		args: []string{"--config", conf, "--retries", "1", "--low-level-retries", "1"}}
	if out, err := untrusting.try("lsf", remote); err == nil {
		t.Errorf("rclone without the CA listed the bucket:\n%s", out)
	} else if !strings.Contains(out, "certificate signed by unknown authority") {
		t.Errorf("rclone without the CA: %v, not a certificate failure:\n%s", err, out)
	}
}

// sameLines reports whether out holds exactly the lines want, in any order.
func sameLines(out string, want ...string) bool {
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}
