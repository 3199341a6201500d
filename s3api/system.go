package s3api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/s3api/iam"
	"github.com/xfs3/xfs3/s3api/identity"
	"github.com/xfs3/xfs3/store"
)

// The server's own endpoints live under /minio/, where MinIO keeps its
// own, so that probes and admin tools written for MinIO work unchanged;
// the bucket name "minio" is reserved (store.ReservedBucket) so no bucket
// can hide behind them.
const (
	systemPrefix = "/" + store.ReservedBucket
	adminPrefix  = admin.Prefix
)

// isSystemPath reports whether p addresses the server rather than S3:
// "/minio" itself or anything below "/minio/".
func isSystemPath(p string) bool {
	return p == systemPrefix || strings.HasPrefix(p, systemPrefix+"/")
}

// adminRoute is one admin endpoint: signed by a configured key like any
// S3 request, answered in JSON.
type adminRoute struct {
	name    string
	method  string
	path    string   // below adminPrefix
	query   []string // pairs of a query parameter and the value it must have
	handler handlerFunc
	// self: the handler authorizes (authorizeAdmin), since a user may
	// manage its own service accounts without an admin policy.
	self bool
}

// adminRoutes are the admin endpoints.
func (s *server) adminRoutes() []adminRoute {
	return []adminRoute{
		{name: "AdminInfo", method: http.MethodGet, path: admin.PathServerInfo, handler: s.serverInfo},
		{name: "AdminGCStats", method: http.MethodGet, path: "/xfs3/gc", handler: s.adminGCStats},
		{name: "AdminXFS3Info", method: http.MethodGet, path: admin.PathInfo, handler: s.adminInfo},
		{name: "AdminHealth", method: http.MethodGet, path: admin.PathHealth, handler: s.adminHealth},
		{name: "AdminTrimStart", method: http.MethodPost, path: admin.PathTrim, handler: s.trimStart},
		{name: "AdminTrimStatus", method: http.MethodGet, path: admin.PathTrim, handler: s.trimStatus},
		{name: "AdminTrimCancel", method: http.MethodDelete, path: admin.PathTrim, handler: s.trimCancel},
		{name: "AdminLifecycleStatus", method: http.MethodGet, path: admin.PathLifecycle, handler: s.lifecycleStatus},
		{name: "AdminLifecycleStart", method: http.MethodPost, path: admin.PathLifecycle, handler: s.lifecycleStart},
		{name: "AdminScrubStatus", method: http.MethodGet, path: admin.PathScrub, handler: s.scrubStatus},
		{name: "AdminScrubStart", method: http.MethodPost, path: admin.PathScrub, handler: s.scrubStart},
		{name: "AdminSetBucketQuota", method: http.MethodPut, path: admin.PathSetBucketQuota, handler: s.setBucketQuota},
		{name: "AdminGetBucketQuota", method: http.MethodGet, path: admin.PathGetBucketQuota, handler: s.getBucketQuota},
		{name: "AdminQuotaReport", method: http.MethodGet, path: admin.PathQuota, handler: s.quotaReport},
		{name: "AdminSetQuota", method: http.MethodPut, path: admin.PathQuota, handler: s.setQuota},
		{name: "AdminSetQuotaGrace", method: http.MethodPut, path: admin.PathQuotaGrace, handler: s.setQuotaGrace},
	}
}

// systemRouter serves everything under /minio/. Health probes need no
// signature (load balancers send none); admin requests are authenticated
// here, with the admin verifier, since the S3 middleware does not.
func (s *server) systemRouter() http.Handler {
	r := mux.NewRouter()
	r.SkipClean(true)
	probe := func(name string, h handlerFunc) {
		r.Methods(http.MethodGet, http.MethodHead).Path(systemPrefix + "/health/" + name).
			Handler(s.operation("Health"+strings.ToUpper(name[:1])+name[1:], h))
	}
	probe("live", s.healthLive)
	probe("ready", s.healthReady)
	probe("cluster", s.healthCluster)
	r.Methods(http.MethodGet, http.MethodHead).Path(systemPrefix + "/health/cluster/read").
		Handler(s.operation("HealthClusterRead", s.healthClusterRead))
	// The metrics endpoint authenticates itself: it also takes a bearer
	// token, which Prometheus can send and cannot sign.
	r.Methods(http.MethodGet).Path(metricsPath).Handler(s.operation("Metrics", s.serveMetrics))
	r.Methods(http.MethodGet).Path(metricsV2Path).Handler(s.operation("MetricsV2", s.serveMetrics))
	for _, rt := range append(s.adminRoutes(), s.identityRoutes()...) {
		r.Methods(rt.method).Path(adminPrefix + rt.path).Queries(rt.query...).Handler(s.admin(rt))
	}
	r.PathPrefix(adminPrefix + "/").Handler(s.admin(adminRoute{name: "AdminUnknown", handler: s.adminNotImplemented, self: true}))
	r.NotFoundHandler = s.operation("SystemUnknown", s.systemNotFound)
	r.MethodNotAllowedHandler = r.NotFoundHandler
	return r
}

// healthLive answers 200 while the process serves requests.
func (s *server) healthLive(w http.ResponseWriter, r *http.Request, rq *request) error {
	w.WriteHeader(http.StatusOK)
	return nil
}

// healthReady answers 200 while the volume accepts changes and 503, with
// the reason, once a failed write has shut it down. Sick structures
// leave it 200, since what they do not hold still serves, and set
// admin.HeaderHealth.
func (s *server) healthReady(w http.ResponseWriter, r *http.Request, rq *request) error {
	if len(s.store.SickCounts()) > 0 {
		w.Header().Set(admin.HeaderHealth, store.HealthDegraded)
	}
	if err := s.store.Err(); err != nil {
		return &admin.Error{Status: http.StatusServiceUnavailable, Code: "XMinioServerNotInitialized",
			Message: "The volume was shut down by a failed write: " + err.Error()}
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// MinIO's cluster probes (mc ready, load balancers) answer for the whole
// cluster: here one server, one drive, no parity, so one drive is the
// quorum for reads and for writes. Their headers are MinIO's (madmin
// reads the write quorum).
const (
	headerWriteQuorum = "X-Minio-Write-Quorum"
	headerReadQuorum  = "X-Minio-Read-Quorum"
)

// healthCluster answers 200 while the cluster can serve writes (the
// volume accepts changes) and 503 once a failed write has shut it down.
// With ?maintenance=true it asks whether this server may be taken down
// and keep the cluster writable: never (412), it is the only one.
func (s *server) healthCluster(w http.ResponseWriter, r *http.Request, rq *request) error {
	w.Header().Set(headerWriteQuorum, "1")
	if err := maintenanceRefused(r); err != nil {
		return err
	}
	return s.healthReady(w, r, rq)
}

// healthClusterRead answers 200 while the cluster can serve reads: as
// long as the server runs, since a volume shut down by a failed write
// refuses changes only.
func (s *server) healthClusterRead(w http.ResponseWriter, r *http.Request, rq *request) error {
	w.Header().Set(headerReadQuorum, "1")
	if err := maintenanceRefused(r); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// maintenanceRefused is the answer to a cluster probe asking, with
// ?maintenance=true, whether this server can be taken down safely.
func maintenanceRefused(r *http.Request) error {
	if r.URL.Query().Get("maintenance") != "true" {
		return nil
	}
	return &admin.Error{Status: http.StatusPreconditionFailed, Code: "PreconditionFailed",
		Message: "This server is the whole cluster: taking it down for maintenance stops the service."}
}

// admin authenticates an admin request and, unless the route does it
// itself, authorizes it before its handler runs.
func (s *server) admin(rt adminRoute) http.Handler {
	return s.operation(rt.name, func(w http.ResponseWriter, r *http.Request, rq *request) error {
		auth, err := s.adminVerifier.Verify(r)
		if err != nil {
			return err
		}
		if err := s.identify(rq, auth); err != nil {
			return err
		}
		if !rt.self {
			if err := s.authorizeAdmin(r, rq, ""); err != nil {
				return err
			}
		}
		return rt.handler(w, r, rq)
	})
}

// authorizeAdmin allows the root credentials, a user acting on what it
// owns (owner: the parent of the service account concerned), and
// identities whose policies allow the operation's admin action.
func (s *server) authorizeAdmin(r *http.Request, rq *request, owner string) error {
	if rq.root {
		return nil
	}
	if owner != "" && rq.ident != nil && rq.ident.Kind == identity.KindUser && owner == rq.ident.AccessKey {
		return nil
	}
	perms, ok := iam.Permissions(rq.op, false)
	if !ok {
		return s.denied(rq, iam.Decision{Effect: iam.Deny}, "no IAM action is defined for "+rq.op)
	}
	return s.allowed(r, rq, perms[0].Action, "", iam.AllBucketsARN)
}

// adminGCStats answers the inode garbage collector's counters.
func (s *server) adminGCStats(w http.ResponseWriter, r *http.Request, rq *request) error {
	return writeJSON(w, s.store.GCStats())
}

// adminInfo is GET /xfs3/info: the server at a glance (admin.Info).
func (s *server) adminInfo(w http.ResponseWriter, r *http.Request, rq *request) error {
	in, err := admin.InfoOf(s.store, s.version, s.started, s.now())
	if err != nil {
		return err
	}
	return writeJSON(w, in)
}

// adminHealth is GET /xfs3/health: the sick structures and where they
// lie (admin.Health).
func (s *server) adminHealth(w http.ResponseWriter, r *http.Request, rq *request) error {
	return writeJSON(w, admin.HealthOf(s.store))
}

// trimStart is POST /xfs3/trim: starts a pass on demand (body optional:
// offset, length, minlen) and answers the status once its first batch or
// its first discard request is done (gc.Trimmer.Start).
func (s *server) trimStart(w http.ResponseWriter, r *http.Request, rq *request) error {
	body, err := adminBody(r, rq)
	if err != nil {
		return err
	}
	req, err := admin.DecodeTrimRequest(body)
	if err != nil {
		return err
	}
	st, err := admin.StartTrim(s.store.Trimmer(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, st)
}

// trimStatus is GET /xfs3/trim: the pass under way, the last one and the
// scheduler's counters.
func (s *server) trimStatus(w http.ResponseWriter, r *http.Request, rq *request) error {
	return writeJSON(w, admin.TrimStatusOf(s.store.Trimmer().Status()))
}

// lifecycleStatus is GET /xfs3/lifecycle: the scanner's pass under way,
// last pass and totals.
func (s *server) lifecycleStatus(w http.ResponseWriter, r *http.Request, rq *request) error {
	l := s.store.Lifecycle()
	return writeJSON(w, admin.LifecycleStatusOf(l.Status(), l.Day(), s.now()))
}

// lifecycleStart is POST /xfs3/lifecycle: a pass now (the one under way,
// if any, goes on), answered with the scanner's status.
func (s *server) lifecycleStart(w http.ResponseWriter, r *http.Request, rq *request) error {
	if _, err := adminBody(r, rq); err != nil {
		return err
	}
	l := s.store.Lifecycle()
	if _, err := l.Start(); err != nil {
		return err
	}
	return writeJSON(w, admin.LifecycleStatusOf(l.Status(), l.Day(), s.now()))
}

// scrubStatus is GET /xfs3/scrub: the scrubber's pass under way, last
// pass, totals and the rotten objects known.
func (s *server) scrubStatus(w http.ResponseWriter, r *http.Request, rq *request) error {
	sc := s.store.Scrub()
	rotten, err := sc.Rotten()
	if err != nil {
		return err
	}
	return writeJSON(w, admin.ScrubStatusOf(sc.Status(), rotten, s.now()))
}

// scrubStart is POST /xfs3/scrub: a pass now (the one under way, if any,
// goes on), answered with the scrubber's status.
func (s *server) scrubStart(w http.ResponseWriter, r *http.Request, rq *request) error {
	if _, err := adminBody(r, rq); err != nil {
		return err
	}
	sc := s.store.Scrub()
	if _, err := sc.Start(); err != nil {
		return err
	}
	return s.scrubStatus(w, r, rq)
}

// trimCancel is DELETE /xfs3/trim: cancels the pass under way (if any).
func (s *server) trimCancel(w http.ResponseWriter, r *http.Request, rq *request) error {
	return writeJSON(w, admin.CancelTrim(s.store.Trimmer()))
}

// writeJSON sends v as a 200 JSON answer.
func writeJSON(w http.ResponseWriter, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	writeBody(w, "application/json", body)
	return nil
}

// writeBody sends a 200 answer of the given type.
func writeBody(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

func (s *server) adminNotImplemented(w http.ResponseWriter, r *http.Request, rq *request) error {
	return &admin.Error{Status: http.StatusNotImplemented, Code: "NotImplemented",
		Message: "This server does not implement " + r.Method + " " + r.URL.Path + "."}
}

func (s *server) systemNotFound(w http.ResponseWriter, r *http.Request, rq *request) error {
	return &admin.Error{Status: http.StatusNotFound, Code: "XMinioUnknownAPIRequest",
		Message: "No endpoint " + r.Method + " " + r.URL.Path + " under " + systemPrefix + "/; the bucket name " + store.ReservedBucket + " is reserved."}
}

// writeAdminError sends err as MinIO's admin API sends errors: a JSON
// object with Code and Message. An error that is not an *admin.Error (a
// failed signature check, a missing bucket) keeps its S3 code and status.
func writeAdminError(w http.ResponseWriter, r *http.Request, err error) (code string) {
	var ae *admin.Error
	if !errors.As(err, &ae) {
		se := toS3Error(err)
		ae = &admin.Error{Status: se.Status(), Code: se.code, Message: messageOf(se)}
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(ae.Status)
		return ae.Code
	}
	body, _ := json.Marshal(struct{ Code, Message string }{ae.Code, ae.Message})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ae.Status)
	w.Write(body)
	return ae.Code
}
