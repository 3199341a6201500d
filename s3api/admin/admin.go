// Package admin is xfs3's administration API below HTTP: the JSON
// documents of the /minio/admin/v3/ endpoints, the operations behind them
// on a store, and a signed client for them.
//
//	xfs3 serve ──► s3api handlers ──┐
//	xfs3 quota ──► admin.Client ────┤ (HTTP, signed as mc signs)
//	xfs3 vol quota (stopped volume) ┴──► admin operations ──► store
//
//	xfs3 user, xfs3 policy ──► admin.Client ──► s3api handlers ──► identity.Directory
//	                   (identities.go: MinIO's identity calls; bodies
//	                    sealed with the caller's secret key, package sealed)
//
//	mc admin info ──► s3api handler ──► ServerInfoOf (serverinfo.go: MinIO's document;
//	                                    Counter, objectcount.go: object counts kept between requests)
//	Prometheus ──► bearer token: MetricsToken, or mc's JWT (prometheus.go) ──► s3api metrics
//
// Each capability has three faces (a setting, an endpoint, a subcommand);
// they meet here, so a document is parsed, checked and applied by one
// piece of code whichever face received it. The endpoints, their
// documents and their errors are written out for operators in
// docs/operations.md.
package admin

import "net/http"

// Prefix is where every admin endpoint lives, as in MinIO.
const Prefix = "/minio/admin/v3"

// Paths of the endpoints below Prefix.
const (
	PathSetBucketQuota = "/set-bucket-quota" // MinIO's (mc quota set, clear)
	PathGetBucketQuota = "/get-bucket-quota" // MinIO's (mc quota info)
	PathQuota          = "/xfs3/quota"       // xfs3's: usage and every limit
	PathQuotaGrace     = "/xfs3/quota/grace" // xfs3's: grace periods
)

// Error is an admin error as MinIO's admin API sends them: the HTTP
// status and a JSON object {"Code": ..., "Message": ...}. The server
// answers with it and the client returns it.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// invalid is the error of a request whose parameters or document are
// wrong.
func invalid(message string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "XMinioAdminInvalidArgument", Message: message}
}
