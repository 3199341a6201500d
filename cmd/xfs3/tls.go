package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	stdlog "log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/config"
)

// certCheckEvery is the least time between two looks at the certificate
// files: a handshake after it stats them, so a busy server stats twice a
// second at most and an idle one not at all.
const certCheckEvery = time.Second

// certReloader hands each TLS handshake the certificate pair of a certs
// directory and picks up a replaced pair without a restart:
//
//	handshake ─► GetCertificate ─► a second since the last look?
//	                                 └─ stat both files; changed? ─► load
//	                                      ok: serve the new pair
//	                                      bad: log it, keep the old one
//
// Connections already open keep the certificate they shook hands with.
// The stat comes before the read, so a file replaced while it is read is
// read again at the next look.
type certReloader struct {
	certPath, keyPath string
	log               zerolog.Logger
	now               func() time.Time // injectable clock

	mu      sync.Mutex       // guards the fields below
	cert    *tls.Certificate // the pair in service
	seen    [2]os.FileInfo   // the cert and key files as last loaded or tried; nil: unreadable
	checked time.Time        // when the files were last stat'ed
}

// newCertReloader loads dir's pair, failing with an error that names the
// file at fault; now is the clock (time.Now).
func newCertReloader(dir string, log zerolog.Logger, now func() time.Time) (*certReloader, error) {
	r := &certReloader{
		certPath: filepath.Join(dir, config.CertFile),
		keyPath:  filepath.Join(dir, config.KeyFile),
		log:      log,
		now:      now,
	}
	r.checked = r.now()
	r.seen = r.stat()
	cert, err := loadCertPair(r.certPath, r.keyPath)
	if err != nil {
		return nil, err
	}
	r.cert = cert
	return r, nil
}

// tlsConfig is the server's TLS configuration: TLS 1.2 or later, the
// certificate from r at each handshake.
func (r *certReloader) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.getCertificate}
}

// getCertificate is tls.Config.GetCertificate.
func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := r.now(); now.Sub(r.checked) >= certCheckEvery || now.Before(r.checked) {
		r.checked = now
		r.refreshLocked()
	}
	return r.cert, nil
}

// current is the pair in service.
func (r *certReloader) current() *tls.Certificate {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cert
}

// refreshLocked loads the pair again when either file changed since the
// last look.
func (r *certReloader) refreshLocked() {
	seen := r.stat()
	if sameFile(seen[0], r.seen[0]) && sameFile(seen[1], r.seen[1]) {
		return
	}
	r.seen = seen
	cert, err := loadCertPair(r.certPath, r.keyPath)
	if err != nil {
		// Replacing the two files one after the other can be seen half
		// done; the next look, a second later, finds the whole pair.
		r.log.Warn().Err(err).Msg("TLS certificate not reloaded: the pair in service is kept until the files change again")
		return
	}
	r.cert = cert
	logCertificate(r.log.Info(), r.certPath, cert.Leaf).Msg("TLS certificate reloaded")
}

// stat returns the cert and key files' FileInfo, nil for one it cannot
// stat (the load that follows says why).
func (r *certReloader) stat() (fis [2]os.FileInfo) {
	for i, p := range []string{r.certPath, r.keyPath} {
		if fi, err := os.Stat(p); err == nil {
			fis[i] = fi
		}
	}
	return fis
}

// sameFile reports whether a and b are the same unchanged file: one
// replaced by a rename is another file, one rewritten in place has
// another modification time or size.
func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// loadCertPair reads a PEM certificate chain and its PEM private key; an
// error names the file at fault, or both when they do not match.
func loadCertPair(certPath, keyPath string) (*tls.Certificate, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("TLS private key: %w", err)
	}
	if err := checkCertPEM(certPEM); err != nil {
		return nil, fmt.Errorf("TLS certificate %s: %w", certPath, err)
	}
	if err := checkKeyPEM(keyPEM); err != nil {
		return nil, fmt.Errorf("TLS private key %s: %w", keyPath, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("TLS private key %s does not go with the certificate %s: %w", keyPath, certPath, err)
	}
	return &cert, nil
}

// errNoPEM is a file with no PEM block of the kind wanted.
var errNoPEM = errors.New("no PEM block")

// checkCertPEM checks that data holds PEM certificates, each one parsable:
// the server's own first, then the chain.
func checkCertPEM(data []byte) error {
	n := 0
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		n++
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return fmt.Errorf("certificate %d: %w", n, err)
		}
	}
	if n == 0 {
		return fmt.Errorf("%w: want one or more \"CERTIFICATE\" blocks", errNoPEM)
	}
	return nil
}

// checkKeyPEM checks that data's first private key block is a key Go's
// TLS can use: PKCS #8, PKCS #1 (RSA) or SEC 1 (EC).
func checkKeyPEM(data []byte) error {
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return fmt.Errorf("%w: want a \"PRIVATE KEY\" block", errNoPEM)
		}
		if !strings.HasSuffix(b.Type, "PRIVATE KEY") {
			continue
		}
		if _, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
			return nil
		}
		if _, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
			return nil
		}
		if _, err := x509.ParseECPrivateKey(b.Bytes); err == nil {
			return nil
		}
		return fmt.Errorf("%q block is no PKCS #8, PKCS #1 or EC private key", b.Type)
	}
}

// logCertificate adds to ev what an operator checks of a certificate:
// the file, whom it names and until when.
func logCertificate(ev *zerolog.Event, path string, leaf *x509.Certificate) *zerolog.Event {
	ips := make([]string, len(leaf.IPAddresses))
	for i, ip := range leaf.IPAddresses {
		ips[i] = ip.String()
	}
	return ev.Str("file", path).Str("subject", leaf.Subject.String()).Strs("dns_names", leaf.DNSNames).
		Strs("ip_addresses", ips).Str("serial", leaf.SerialNumber.Text(16)).Time("not_after", leaf.NotAfter)
}

// startTLS loads the certs directory's pair for serve and logs it; a
// certificate out of its validity period is served, with a warning.
func startTLS(dir string, log zerolog.Logger) (*certReloader, error) {
	r, err := newCertReloader(dir, log, time.Now)
	if err != nil {
		return nil, err
	}
	leaf := r.current().Leaf
	ev := log.Info()
	if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		ev = log.Warn().Time("not_before", leaf.NotBefore)
	}
	logCertificate(ev, r.certPath, leaf).Msg("TLS certificate loaded")
	return r, nil
}

// serverErrorLog sends net/http's own messages into the server log: a
// failed TLS handshake (a client that does not trust the certificate, a
// scanner) at info, anything else at warn.
func serverErrorLog(log zerolog.Logger) *stdlog.Logger {
	return stdlog.New(httpErrorWriter{log}, "", 0)
}

type httpErrorWriter struct{ log zerolog.Logger }

func (w httpErrorWriter) Write(p []byte) (int, error) {
	msg := string(bytes.TrimSpace(p))
	if strings.HasPrefix(msg, "http: TLS handshake error") {
		w.log.Info().Str("error", msg).Msg("TLS handshake failed")
	} else {
		w.log.Warn().Str("error", msg).Msg("http server error")
	}
	return len(p), nil
}
