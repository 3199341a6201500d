package s3api

import (
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/xfs3/xfs3/s3api/admin"
)

// countBudget is the longest an info request walks the buckets to count
// their objects (admin.Counter): past it, the request answers the last
// counts and the next request resumes the walk.
const countBudget = 2 * time.Second

// serverInfo is GET /info, mc admin info: MinIO's server-info document
// (admin.ServerInfo) of this server and its volume. mc's ?no-cache=true
// asks for fresh object counts.
func (s *server) serverInfo(w http.ResponseWriter, r *http.Request, rq *request) error {
	counts, countErr := s.objectCounts.Get(s.store, s.now, countBudget, r.URL.Query().Get("no-cache") == "true")
	if countErr != nil && !errors.Is(countErr, admin.ErrCounting) {
		// The document still answers (with the last counts, or the
		// error in their place); the log keeps why the walk failed.
		s.log.Warn().Err(countErr).Str("request_id", rq.id).Msg("server info: counting objects failed")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	in, err := admin.ServerInfoOf(s.store, admin.ServerInfoOptions{
		Endpoint: endpointOf(r), Scheme: scheme, Region: s.region, Volume: s.volume,
		Version: s.version, Started: s.started, Now: s.now(), Counts: counts, CountErr: countErr})
	if err != nil {
		return err
	}
	return writeJSON(w, in)
}

// endpointOf is the host:port a request reached, as its client named it
// (the Host header), or the listener's address when it named none.
func endpointOf(r *http.Request) string {
	if r.Host != "" {
		return r.Host
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return a.String()
	}
	return ""
}
