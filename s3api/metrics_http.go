package s3api

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/s3api/sigv4"
)

// metricsPath is where Prometheus scrapes, MinIO's v3 metrics path.
const metricsPath = systemPrefix + "/metrics/v3"

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
	s.scrape = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
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

// serveMetrics is GET /minio/metrics/v3: the Prometheus text exposition.
func (s *server) serveMetrics(w http.ResponseWriter, r *http.Request, rq *request) error {
	if s.metrics == nil {
		return s.systemNotFound(w, r, rq)
	}
	if s.metricsAccess != MetricsPublic {
		if err := s.authorizeScrape(r, rq); err != nil {
			return err
		}
	}
	s.scrape.ServeHTTP(w, r)
	return nil
}

// authorizeScrape accepts a bearer token of a configured key
// (admin.MetricsToken), or a request signed as admin requests are.
func (s *server) authorizeScrape(r *http.Request, rq *request) error {
	authz := r.Header.Get("Authorization")
	token, bearer := strings.CutPrefix(authz, "Bearer ")
	if !bearer {
		auth, err := s.adminVerifier.Verify(r)
		if err != nil {
			return err
		}
		rq.auth = auth
		return nil
	}
	ak, _, _ := strings.Cut(token, ":")
	if sk, ok := s.creds[ak]; ok && subtle.ConstantTimeCompare([]byte(admin.MetricsToken(ak, sk)), []byte(token)) == 1 {
		rq.auth = &sigv4.Auth{AccessKey: ak}
		return nil
	}
	return &admin.Error{Status: http.StatusForbidden, Code: "AccessDenied",
		Message: "The bearer token is not the metrics token of a configured key ('xfs3 metrics-token' prints it)."}
}
