package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/signer"
	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/config"
)

// testCA is a private certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool // trusts the CA alone
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1000),
		Subject:               pkix.Name{CommonName: "xfs3 test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
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
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue returns a PEM server certificate for 127.0.0.1 and localhost
// with the given serial, signed by ca, and its PEM private key.
func (ca *testCA) issue(t *testing.T, serial int64) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
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
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// replaceFile writes data to path as a rotation tool does: under a
// temporary name, then renamed over path.
func replaceFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// install puts a new pair with the given serial in dir.
func (ca *testCA) install(t *testing.T, dir string, serial int64) {
	t.Helper()
	certPEM, keyPEM := ca.issue(t, serial)
	writePair(t, dir, certPEM, keyPEM)
}

// writePair puts a pair in dir, the key first.
func writePair(t *testing.T, dir string, certPEM, keyPEM []byte) {
	t.Helper()
	replaceFile(t, filepath.Join(dir, config.KeyFile), keyPEM)
	replaceFile(t, filepath.Join(dir, config.CertFile), certPEM)
}

// TestCertReloader follows a certs directory through rotations on a
// fake clock: a change is seen at the first handshake a second or more
// after the last look, and a pair that does not load is logged once and
// the pair in service kept.
func TestCertReloader(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	ca.install(t, dir, 1)
	var logs syncBuffer
	clock := time.Unix(1e9, 0)
	r, err := newCertReloader(dir, zerolog.New(&logs), func() time.Time { return clock })
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath := filepath.Join(dir, config.CertFile), filepath.Join(dir, config.KeyFile)
	cert3, key3 := ca.issue(t, 3)
	_, otherKey := ca.issue(t, 99)
	for i, step := range []struct {
		change  func()
		advance time.Duration
		serial  int64 // served after the step
		warns   int   // warnings logged so far
	}{
		{nil, 0, 1, 0},
		{func() { ca.install(t, dir, 2) }, 0, 1, 0}, // no look within a second
		{nil, 999 * time.Millisecond, 1, 0},
		{nil, time.Millisecond, 2, 0},
		{func() { replaceFile(t, certPath, []byte("not a certificate\n")) }, time.Second, 2, 1},
		{nil, time.Second, 2, 1},                                        // unchanged since: not tried again
		{func() { replaceFile(t, certPath, cert3) }, time.Second, 2, 2}, // half rotated: key of 2
		{func() { replaceFile(t, keyPath, key3) }, time.Second, 3, 2},
		{func() { os.Remove(keyPath) }, time.Second, 3, 3},
		{func() { replaceFile(t, keyPath, otherKey) }, time.Second, 3, 4},
		{func() { replaceFile(t, keyPath, key3) }, time.Second, 3, 4}, // the pair in service, reloaded
		{func() { ca.install(t, dir, 4) }, -time.Hour, 4, 4},          // a clock set back looks at once
	} {
		if step.change != nil {
			step.change()
		}
		clock = clock.Add(step.advance)
		c, err := r.getCertificate(&tls.ClientHelloInfo{})
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := c.Leaf.SerialNumber.Int64(); got != step.serial {
			t.Errorf("step %d: serial %d served, want %d", i, got, step.serial)
		}
		if got := strings.Count(logs.String(), `"level":"warn"`); got != step.warns {
			t.Errorf("step %d: %d warnings, want %d:\n%s", i, got, step.warns, logs.String())
		}
	}
}

// TestLoadCertPair: each way a pair can be wrong is an error naming the
// file at fault.
func TestLoadCertPair(t *testing.T) {
	ca := newTestCA(t)
	certPEM, keyPEM := ca.issue(t, 1)
	_, otherKey := ca.issue(t, 2)
	corrupt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")})
	badKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("not DER")})
	for _, c := range []struct {
		name        string
		cert, key   []byte // nil: no file
		certAtFault bool
		keyAtFault  bool
		is          error // when not nil, the error is of this kind
	}{
		{"missing certificate", nil, keyPEM, true, false, fs.ErrNotExist},
		{"missing key", certPEM, nil, false, true, fs.ErrNotExist},
		{"certificate not PEM", []byte("hello"), keyPEM, true, false, errNoPEM},
		{"key not PEM", certPEM, []byte("hello"), false, true, errNoPEM},
		{"files swapped", keyPEM, certPEM, true, false, errNoPEM},
		{"certificate not DER", corrupt, keyPEM, true, false, nil},
		{"key not DER", certPEM, badKey, false, true, nil},
		{"key of another certificate", certPEM, otherKey, true, true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			certPath, keyPath := filepath.Join(dir, config.CertFile), filepath.Join(dir, config.KeyFile)
			if c.cert != nil {
				os.WriteFile(certPath, c.cert, 0o600)
			}
			if c.key != nil {
				os.WriteFile(keyPath, c.key, 0o600)
			}
			_, err := loadCertPair(certPath, keyPath)
			if err == nil {
				t.Fatal("loaded")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v is not %v", err, c.is)
			}
			if strings.Contains(err.Error(), certPath) != c.certAtFault || strings.Contains(err.Error(), keyPath) != c.keyAtFault {
				t.Errorf("%q should name the certificate: %v, the key: %v", err, c.certAtFault, c.keyAtFault)
			}
		})
	}
	if _, err := loadCertPair(writeTestPair(t, certPEM, keyPEM)); err != nil {
		t.Errorf("a good pair: %v", err)
	}
}

// writeTestPair writes a pair into a new directory and returns its paths.
func writeTestPair(t *testing.T, certPEM, keyPEM []byte) (certPath, keyPath string) {
	dir := t.TempDir()
	writePair(t, dir, certPEM, keyPEM)
	return filepath.Join(dir, config.CertFile), filepath.Join(dir, config.KeyFile)
}

// TestServeTLS runs the server with a certs directory: signed S3 requests
// work over HTTPS from a client trusting the CA, plain HTTP and TLS 1.1
// are refused, a rotated pair reaches new connections without a restart,
// and a broken replacement leaves the pair in service.
func TestServeTLS(t *testing.T) {
	ca := newTestCA(t)
	cfg := testConfig(t)
	cfg.AccessKey, cfg.SecretKey = "tester", "tester-secret"
	cfg.CertsDir = t.TempDir()
	ca.install(t, cfg.CertsDir, 1)
	logs := &syncBuffer{}
	out, stop := startServeLogging(t, cfg, logs)
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	m := regexp.MustCompile(`xfs3: serving S3 on https://(\S+)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no https:// URL announced:\n%s", out)
	}
	addr := m[1]

	// Fresh connections, so that each request shakes hands anew.
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca.pool},
		DisableKeepAlives: true,
	}, Timeout: time.Minute}
	do := func(method, path, body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, "https://"+addr+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		req = signer.SignV4(*req, cfg.AccessKey, cfg.SecretKey, "", "us-east-1")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %s\n%s", method, path, resp.Status, got)
		}
		return resp, string(got)
	}
	do(http.MethodPut, "/secure", "")
	do(http.MethodPut, "/secure/hello.txt", "over TLS")
	resp, got := do(http.MethodGet, "/secure/hello.txt", "")
	if got != "over TLS" {
		t.Errorf("GET over https: %q", got)
	}
	if resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 || resp.Proto != "HTTP/1.1" {
		t.Errorf("answered over %s, TLS %+v", resp.Proto, resp.TLS)
	}

	// An SDK configured for https with the CA trusted.
	mc, err := minio.New(addr, &minio.Options{
		Creds:     miniocreds.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:    true,
		Region:    "us-east-1",
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if info, err := mc.StatObject(context.Background(), "secure", "hello.txt", minio.StatObjectOptions{}); err != nil || info.Size != int64(len("over TLS")) {
		t.Errorf("minio-go over https: %+v, %v", info, err)
	}

	// Plain HTTP on the TLS port gets no S3 answer.
	if resp, err := http.Get("http://" + addr + "/minio/health/live"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP to the TLS port answered 200")
		}
	}
	// Neither does TLS 1.1.
	if c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.pool, MaxVersion: tls.VersionTLS11}); err == nil {
		c.Close()
		t.Error("a TLS 1.1 handshake succeeded")
	}

	// serial is the serial of the certificate a new connection gets.
	serial := func() int64 {
		t.Helper()
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.pool})
		if err != nil {
			t.Fatalf("handshake: %v", err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	// waitFor shakes hands until cond holds, for up to 10 s.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10 s\n%s", what, logs.String())
			}
		}
	}
	if s := serial(); s != 1 {
		t.Fatalf("serial %d served, want 1", s)
	}
	ca.install(t, cfg.CertsDir, 2)
	waitFor("the rotated certificate", func() bool { return serial() == 2 })
	do(http.MethodGet, "/secure/hello.txt", "")

	replaceFile(t, filepath.Join(cfg.CertsDir, config.CertFile), []byte("garbage\n"))
	waitFor("a warning about the broken certificate", func() bool {
		if s := serial(); s != 2 {
			t.Fatalf("serial %d served after a broken replacement, want 2", s)
		}
		return strings.Contains(logs.String(), "TLS certificate not reloaded")
	})
	if s := serial(); s != 2 {
		t.Errorf("serial %d served after a broken replacement, want 2", s)
	}
	do(http.MethodGet, "/secure/hello.txt", "")

	err = stop()
	stop = nil
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"message":"TLS certificate loaded"`, `"message":"TLS certificate reloaded"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log has no %s:\n%s", want, logs.String())
		}
	}
}

// TestServeTLSStartFails: a certs directory without its key stops the
// start with an error naming the missing file, before the volume is
// created; through the command line, the exit status is 1.
func TestServeTLSStartFails(t *testing.T) {
	ca := newTestCA(t)
	cfg := testConfig(t)
	cfg.CertsDir = t.TempDir()
	certPEM, _ := ca.issue(t, 1)
	os.WriteFile(filepath.Join(cfg.CertsDir, config.CertFile), certPEM, 0o600)
	keyPath := filepath.Join(cfg.CertsDir, config.KeyFile)

	var sink strings.Builder
	e := &env{stdout: bufio.NewWriter(&sink), stderr: &sink}
	err := serve(context.Background(), cfg, e)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), keyPath) {
		t.Errorf("serve without %s: %v", keyPath, err)
	}
	if _, err := os.Stat(cfg.Volume); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the volume was touched: %v", err)
	}

	r := runCLI(t, "serve", "--certs-dir", cfg.CertsDir, "--volume", cfg.Volume, "--addr", "127.0.0.1:0", "--log-format", "json")
	if r.code != exitError || r.stdout != "" || !strings.Contains(r.stderr, "xfs3: serve: TLS private key: ") || !strings.Contains(r.stderr, keyPath) {
		t.Errorf("xfs3 serve without %s: status %d\nstdout: %s\nstderr: %s", keyPath, r.code, r.stdout, r.stderr)
	}
	noStackTrace(t, r.stderr)
}
