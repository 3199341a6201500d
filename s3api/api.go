package s3api

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/s3api/identity"
	"github.com/xfs3/xfs3/s3api/sigv4"
	"github.com/xfs3/xfs3/store"
)

// Config configures the handler New returns.
type Config struct {
	Store       *store.Store
	Credentials map[string]string // access key -> secret key
	Region      string            // empty: us-east-1, and buckets may be made for any region (region.go)
	Logger      zerolog.Logger    // one line per request
	Now         func() time.Time  // nil: time.Now
	// LogSampleEvery logs one in this many successful requests (0 and
	// 1: every one); failed requests are always logged.
	LogSampleEvery int
	// Metrics is who may scrape GET /minio/metrics/v3 (MetricsRoot when
	// empty); MetricsOff records nothing and answers 404 there.
	Metrics MetricsAccess
	// Version is the build, for the metrics and the info document.
	Version admin.Version
	// Volume is the volume's path, the drive of mc's server info.
	Volume string
	// LifecycleDay is how long a day of lifecycle rules lasts, for
	// x-amz-expiration (0: 24h; shorter only for tests and demos).
	LifecycleDay time.Duration
}

// MetricsAccess says who may scrape the metrics endpoint.
type MetricsAccess string

const (
	// MetricsRoot: requests signed by a configured key (SigV4, as admin
	// requests) or carrying its bearer token (admin.MetricsToken).
	MetricsRoot MetricsAccess = "root"
	// MetricsPublic: anyone who can reach the listener.
	MetricsPublic MetricsAccess = "public"
	// MetricsOff: no metrics are kept.
	MetricsOff MetricsAccess = "off"
)

// DefaultRegion is the region reported when Config.Region is empty.
const DefaultRegion = "us-east-1"

// server holds what every handler needs.
type server struct {
	store    *store.Store
	verifier *sigv4.Verifier
	// adminVerifier also accepts the empty region that MinIO's admin
	// client puts in its credential scope.
	adminVerifier *sigv4.Verifier
	region        string
	log           zerolog.Logger
	now           func() time.Time
	creds         sigv4.StaticCredentials // the root credentials
	owner         string                  // the first root access key: seals identities, owns the buckets
	identities    *identity.Directory     // users and service accounts
	bucketAuths   bucketAuths             // parsed bucket policies (bucketpolicy.go)
	regions       bucketRegions           // the regions buckets were made for (region.go)
	anyRegion     bool                    // Config.Region is empty: buckets may be made in any region
	cors          corsConfigs             // parsed CORS configurations (cors.go)
	lifecycles    lifecycleConfigs        // parsed lifecycle configurations (lifecycle.go)
	lifecycleDay  time.Duration           // Config.LifecycleDay, 24h when 0
	version       admin.Version
	started       time.Time
	volume        string        // Config.Volume
	objectCounts  admin.Counter // the object counts of mc's server info (serverinfo.go)

	// logSample and logged implement Config.LogSampleEvery.
	logSample uint64
	logged    atomic.Uint64

	// metrics is nil when Config.Metrics is MetricsOff; unknownOp counts
	// requests refused before an operation was chosen.
	metrics       *requestMetrics
	unknownOp     *opMetrics
	metricsAccess MetricsAccess
	scrape        http.Handler
	scrapeV2      http.Handler // the same series and MinIO's v2 names (metrics_v2.go)
}

// identitiesFile is the system file of users, service accounts and
// named policies (store.SystemFiles).
const identitiesFile = "identities.json"

// systemFile keeps one system file of the store for identity.Open.
type systemFile struct {
	files store.SystemFiles
	name  string
}

func (f systemFile) Load() ([]byte, error) {
	b, err := f.files.Read(f.name)
	if errors.Is(err, store.ErrNoSuchSystemFile) {
		return nil, nil
	}
	return b, err
}

func (f systemFile) Save(doc []byte) error { return f.files.Write(f.name, doc) }

// openIdentities opens the volume's identities, sealed under the root
// credentials: with several, those of the first access key in byte
// order (the owner).
func openIdentities(st *store.Store, root sigv4.StaticCredentials, now func() time.Time) (*identity.Directory, error) {
	owner := slices.Sorted(maps.Keys(root))[0]
	return identity.Open(systemFile{st.SystemFiles(), identitiesFile}, owner, root[owner], now)
}

// New returns the server's handler: S3 in path style, every S3 request
// authenticated before it reaches the store, the server's own endpoints
// under /minio/, one log line per request.
func New(c Config) (http.Handler, error) {
	if c.Store == nil {
		return nil, errors.New("s3api: Config.Store is nil")
	}
	if len(c.Credentials) == 0 {
		return nil, errors.New("s3api: no credentials: every request must be signed")
	}
	for ak, sk := range c.Credentials {
		if ak == "" || sk == "" {
			return nil, errors.New("s3api: empty access key or secret key")
		}
	}
	s := &server{
		store:  c.Store,
		region: c.Region,
		log:    c.Logger,
		now:    c.Now,
	}
	if s.region == "" {
		s.region, s.anyRegion = DefaultRegion, true
	} else if !sigv4.ValidRegion(s.region) {
		return nil, errors.New("s3api: Config.Region " + strconv.Quote(s.region) + " is not a region name")
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.started = s.now()
	s.version = c.Version
	s.volume = c.Volume
	s.lifecycleDay = c.LifecycleDay
	if s.lifecycleDay <= 0 {
		s.lifecycleDay = 24 * time.Hour
	}
	if c.LogSampleEvery > 1 {
		s.logSample = uint64(c.LogSampleEvery)
	}
	creds := make(sigv4.StaticCredentials, len(c.Credentials))
	for ak, sk := range c.Credentials {
		creds[ak] = sk
	}
	s.creds = creds
	var err error
	if err = s.setupMetrics(c.Metrics); err != nil {
		return nil, err
	}
	s.owner = slices.Sorted(maps.Keys(creds))[0]
	if s.identities, err = openIdentities(c.Store, creds, s.now); err != nil {
		return nil, err
	}
	if n := s.identities.SealedKeys(); n > 0 {
		s.log.Warn().Int("access_keys", n).Msg("access keys sealed under other root credentials cannot sign in until their secret keys are set again (or the old root credentials come back)")
	}
	keys := keyring{root: creds, dir: s.identities}
	// Region is left empty so that clients signing for another region (the
	// aws CLI's configured default, minio-go's location probe, a bucket
	// made for another region) are accepted: each signature is checked
	// against the region its credential names.
	s.verifier = &sigv4.Verifier{Credentials: keys, Now: s.now}
	s.adminVerifier = &sigv4.Verifier{Credentials: keys, Now: s.now, AllowEmptyRegion: true}
	return s.middleware(s.router(), s.systemRouter()), nil
}
