package s3api

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/s3api/sigv4"
)

// metricsPath is where Prometheus scrapes, MinIO's v3 metrics path;
// metricsV2Path is MinIO's v2 path, where "mc admin prometheus generate"
// points Prometheus: the same series and a few of MinIO's v2 names
// (metrics_v2.go).
const (
	metricsPath   = systemPrefix + "/metrics/v3"
	metricsV2Path = systemPrefix + "/v2/metrics/cluster"
)

// setupMetrics makes the server's own registry (never the global one:
// two servers in one process keep apart) with the request series, the
// store's scrape-time collector and the Go runtime's and process's.
func (s *server) setupMetrics(access MetricsAccess) error {
	switch access {
	case "":
		access = MetricsRoot
	case MetricsRoot, MetricsPublic, MetricsOff:
	default:
		return fmt.Errorf("s3api: metrics access %q is none of %s, %s, %s", access, MetricsRoot, MetricsPublic, MetricsOff)
	}
	s.metricsAccess = access
	if access == MetricsOff {
		return nil
	}
	reg := prometheus.NewRegistry()
	s.metrics = newRequestMetrics()
	s.metrics.register(reg)
	s.unknownOp = s.metrics.forOp("Unknown")
	reg.MustRegister(&storeCollector{store: s.store, started: s.started, version: map[string]string{
		"version": s.version.Version, "revision": s.version.Revision, "go_version": s.version.Go}})
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts := promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}
	s.scrape = promhttp.HandlerFor(reg, opts)
	// Gathered in order: the v2 names read the volume's space after the
	// store's collector has read the inode gc's queues.
	s.scrapeV2 = promhttp.HandlerFor(prometheus.Gatherers{reg, minioV2Registry(s.store)}, opts)
	return nil
}

// opMetricsFor returns the series of operation name (nil with metrics
// off).
func (s *server) opMetricsFor(name string) *opMetrics {
	if s.metrics == nil {
		return nil
	}
	return s.metrics.forOp(name)
}

// serveMetrics is GET /minio/metrics/v3 and /minio/v2/metrics/cluster:
// the Prometheus text exposition.
func (s *server) serveMetrics(w http.ResponseWriter, r *http.Request, rq *request) error {
	if s.metrics == nil {
		return s.systemNotFound(w, r, rq)
	}
	if s.metricsAccess != MetricsPublic {
		if err := s.authorizeScrape(r, rq); err != nil {
			return err
		}
	}
	if r.URL.Path == metricsV2Path {
		s.scrapeV2.ServeHTTP(w, r)
		return nil
	}
	s.scrape.ServeHTTP(w, r)
	return nil
}

// authorizeScrape accepts a bearer token of a configured key
// (admin.MetricsToken); mc's Prometheus token (a JWT,
// admin.VerifyPrometheusToken) or a request signed as admin requests
// are, of the root credentials or of a user or service account whose
// policies allow admin:Prometheus.
func (s *server) authorizeScrape(r *http.Request, rq *request) error {
	authz := r.Header.Get("Authorization")
	token, bearer := strings.CutPrefix(authz, "Bearer ")
	if !bearer || admin.LooksLikeJWT(token) {
		auth, err := s.scrapeAuth(r, token, bearer)
		if err != nil {
			return err
		}
		if err := s.identify(rq, auth); err != nil {
			return err
		}
		return s.authorizeAdmin(r, rq, "")
	}
	ak, _, _ := strings.Cut(token, ":")
	if sk, ok := s.creds[ak]; ok && subtle.ConstantTimeCompare([]byte(admin.MetricsToken(ak, sk)), []byte(token)) == 1 {
		rq.auth = &sigv4.Auth{AccessKey: ak}
		return nil
	}
	return &admin.Error{Status: http.StatusForbidden, Code: "AccessDenied",
		Message: "The bearer token is not the metrics token of a configured key ('xfs3 metrics-token' prints it)."}
}

// scrapeAuth authenticates a scrape signed with SigV4 or carrying mc's
// Prometheus token (bearer).
func (s *server) scrapeAuth(r *http.Request, token string, bearer bool) (*sigv4.Auth, error) {
	if !bearer {
		return s.adminVerifier.Verify(r)
	}
	ak, err := admin.VerifyPrometheusToken(token, keyring{root: s.creds, dir: s.identities}.SecretKey, s.now())
	if errors.Is(err, admin.ErrTokenUnknownKey) {
		err = admin.ErrTokenSignature // as a wrong signature: no way to probe for access keys
	}
	if err != nil {
		return nil, &admin.Error{Status: http.StatusForbidden, Code: "AccessDenied",
			Message: "The bearer token is refused: " + err.Error() + "."}
	}
	return &sigv4.Auth{AccessKey: ak}, nil
}
