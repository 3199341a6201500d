package s3api

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Request metrics are the only ones kept on the request path: per
// request, one histogram observation and three counter adds, through
// children resolved once per operation (operation names are fixed when
// the routes are built) and once per status code, so no label lookup
// and no allocation happens per request. Everything else is read from
// the store at scrape time (metrics_store.go).

// latencyBuckets span a cached HEAD (well under a millisecond) to a
// large upload (tens of seconds), in seconds.
var latencyBuckets = []float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
}

// requestMetrics holds the per-operation request series.
type requestMetrics struct {
	requests *prometheus.CounterVec   // op, status
	latency  *prometheus.HistogramVec // op
	bytesIn  *prometheus.CounterVec   // op
	bytesOut *prometheus.CounterVec   // op

	mu  sync.Mutex // guards ops
	ops map[string]*opMetrics
}

func newRequestMetrics() *requestMetrics {
	return &requestMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "xfs3_requests_total",
			Help: "Requests answered, by operation and HTTP status.",
		}, []string{"op", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "xfs3_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by operation.",
			Buckets: latencyBuckets,
		}, []string{"op"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "xfs3_request_received_bytes_total",
			Help: "Request body bytes read, by operation.",
		}, []string{"op"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "xfs3_request_sent_bytes_total",
			Help: "Response body bytes written, by operation.",
		}, []string{"op"}),
		ops: make(map[string]*opMetrics),
	}
}

func (m *requestMetrics) register(r *prometheus.Registry) {
	r.MustRegister(m.requests, m.latency, m.bytesIn, m.bytesOut)
}

// forOp returns the series of one operation. Called while routes are
// built (and for requests no route named), not per request. The series
// themselves are made by the operation's first request, so a scrape
// shows the operations that ran, not every one the router knows.
func (m *requestMetrics) forOp(name string) *opMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.ops[name]; ok {
		return o
	}
	o := &opMetrics{name: name, parent: m}
	m.ops[name] = o
	return o
}

// opMetrics are one operation's series.
type opMetrics struct {
	name   string
	parent *requestMetrics
	// byStatus maps each status code seen to its request counter. It is
	// copied on write (a new code is rare), so requests read it without
	// a lock; mu serializes writers.
	byStatus atomic.Pointer[map[int]prometheus.Counter]
	// sized holds the latency and byte series, made on first use.
	sized atomic.Pointer[sizedSeries]
	mu    sync.Mutex
}

// sizedSeries are an operation's series without a status label.
type sizedSeries struct {
	latency           prometheus.Observer
	bytesIn, bytesOut prometheus.Counter
}

// observe records one answered request.
func (o *opMetrics) observe(status int, in, out int64, took time.Duration) {
	s := o.sized.Load()
	if s == nil {
		s = o.makeSized()
	}
	s.latency.Observe(took.Seconds())
	if in > 0 {
		s.bytesIn.Add(float64(in))
	}
	if out > 0 {
		s.bytesOut.Add(float64(out))
	}
	o.counter(status).Inc()
}

func (o *opMetrics) makeSized() *sizedSeries {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s := o.sized.Load(); s != nil {
		return s
	}
	m := o.parent
	s := &sizedSeries{latency: m.latency.WithLabelValues(o.name),
		bytesIn: m.bytesIn.WithLabelValues(o.name), bytesOut: m.bytesOut.WithLabelValues(o.name)}
	o.sized.Store(s)
	return s
}

// counter returns the request counter for status.
func (o *opMetrics) counter(status int) prometheus.Counter {
	if m := o.byStatus.Load(); m != nil {
		if c, ok := (*m)[status]; ok {
			return c
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	old := o.byStatus.Load()
	if old != nil {
		if c, ok := (*old)[status]; ok {
			return c
		}
	}
	next := make(map[int]prometheus.Counter, 1+lenOf(old))
	if old != nil {
		for k, c := range *old {
			next[k] = c
		}
	}
	c := o.parent.requests.WithLabelValues(o.name, strconv.Itoa(status))
	next[status] = c
	o.byStatus.Store(&next)
	return c
}

func lenOf(m *map[int]prometheus.Counter) int {
	if m == nil {
		return 0
	}
	return len(*m)
}
