package durablemetrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/go-timingwheel/timingwheel/durable"
)

// DefaultStatsTimeout bounds the store calls of one scrape's tasks per
// state: under Prometheus's default scrape timeout of 10s, so a slow store
// costs the scrape those gauges, not the whole scrape.
const DefaultStatsTimeout = 5 * time.Second

// Buckets of the histograms, in seconds.
var (
	// roundTripBuckets: a claim or settle is one round trip of a bounded
	// batch (about a millisecond on Redis, rediswheel caps its scripts for
	// that; a few on a SQL store's commit), and a LAN adds a fraction of
	// one; past a second the store is in trouble.
	roundTripBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	// latenessBuckets: an idle Run sees a task added elsewhere within
	// Options.PollInterval (1s by default); later than that is a backlog.
	latenessBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
	// DefaultHandlerBuckets are the handler duration buckets unless
	// HandlerBuckets sets others: 5ms to 5 minutes.
	DefaultHandlerBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
)

// A StatsSource is what WatchStats reads at each scrape; a *durable.Queue
// is one.
type StatsSource interface {
	Stats(context.Context) (durable.Stats, error)
}

// Metrics counts one namespace's events as its Queues' Observer and reports
// them as a prometheus.Collector. It is safe for concurrent use.
type Metrics struct {
	added    *prometheus.CounterVec // mode
	fired    prometheus.Counter
	settled  *prometheus.CounterVec // result
	trimmed  prometheus.Counter
	kept     prometheus.Counter     // retained tasks trimmed
	errors   *prometheus.CounterVec // op
	lateness prometheus.Histogram
	handler  *prometheus.HistogramVec // outcome
	// handlerBy holds handler's series of the known outcomes, looked up
	// once: WithLabelValues, which hashes the value and takes a lock, was
	// 40% of an event's cost (BenchmarkObserverPerDelivery's profile).
	// Read-only after New.
	handlerBy map[string]prometheus.Observer
	claim     prometheus.Histogram
	settle    prometheus.Histogram
	// deliveries and breakers are labelled by origin, of which origins
	// bounds the values (origin.go).
	deliveries *prometheus.CounterVec // outcome, status_class, origin
	breakers   *prometheus.GaugeVec   // origin
	origins    *origins
	open       openBreakers

	// The gauges, read from the store at each scrape.
	tasksDesc, dueDesc, oldestDesc, pausedDesc *prometheus.Desc
	source                                     atomic.Pointer[StatsSource] // set by WatchStats
	statsTimeout                               time.Duration
}

// An Option configures New.
type Option func(*config)

type config struct {
	statsTimeout   time.Duration
	handlerBuckets []float64
	maxOrigins     int
	originKey      func(durable.Task) string
}

// StatsTimeout bounds the store calls that read the tasks per state at each
// scrape (default DefaultStatsTimeout). d must be positive.
func StatsTimeout(d time.Duration) Option {
	if d <= 0 {
		panic("durablemetrics: StatsTimeout: duration must be positive")
	}
	return func(c *config) { c.statsTimeout = d }
}

// HandlerBuckets sets the buckets of handler_duration_seconds, in seconds,
// increasing (default DefaultHandlerBuckets).
func HandlerBuckets(b []float64) Option {
	for i := 1; i < len(b); i++ {
		if b[i] <= b[i-1] {
			panic("durablemetrics: HandlerBuckets: buckets must increase")
		}
	}
	return func(c *config) { c.handlerBuckets = b }
}

// New returns the metrics of a namespace, which becomes the constant label
// namespace of every metric. Pass m.Observer() as the Options.Observer of
// the namespace's Queues, call WatchStats for the tasks per state, and
// register m.
func New(namespace string, opts ...Option) *Metrics {
	cfg := config{statsTimeout: DefaultStatsTimeout, handlerBuckets: DefaultHandlerBuckets,
		maxOrigins: DefaultMaxOrigins, originKey: durable.HTTPOrigin}
	for _, o := range opts {
		o(&cfg)
	}
	labels := prometheus.Labels{"namespace": namespace}
	counter := func(name, help string) prometheus.CounterOpts {
		return prometheus.CounterOpts{Namespace: prefix, Name: name, Help: help, ConstLabels: labels}
	}
	histogram := func(name, help string, buckets []float64) prometheus.HistogramOpts {
		return prometheus.HistogramOpts{Namespace: prefix, Name: name, Help: help, ConstLabels: labels, Buckets: buckets}
	}
	m := &Metrics{
		added: prometheus.NewCounterVec(counter("tasks_added_total",
			"Tasks stored by Add, AddAfter, AddBatch (mode add) or Replace (mode replace)."), []string{"mode"}),
		fired: prometheus.NewCounter(counter("tasks_fired_total",
			"Deliveries started: handlers started by Run, once per attempt.")),
		settled: prometheus.NewCounterVec(counter("tasks_settled_total",
			"Finished deliveries by what became of the task."), []string{"result"}),
		trimmed: prometheus.NewCounter(counter("dead_tasks_trimmed_total",
			"Dead tasks dropped because their partition held more than MaxDead.")),
		kept: prometheus.NewCounter(counter("retained_tasks_trimmed_total",
			"Retained tasks forgotten by a settle or Cancel: retention over, or their partition over MaxRetained.")),
		errors: prometheus.NewCounterVec(counter("store_errors_total",
			"Failed store calls by operation."), []string{"op"}),
		lateness: prometheus.NewHistogram(histogram("lateness_seconds",
			"How long after its due time each delivery started, by the store's clock.", latenessBuckets)),
		handler: prometheus.NewHistogramVec(histogram("handler_duration_seconds",
			"Time from a handler's start to its return, by outcome.", cfg.handlerBuckets), []string{"outcome"}),
		deliveries: prometheus.NewCounterVec(counter("deliveries_total",
			"Finished deliveries by outcome, status class (2xx..5xx of the handler's Result code, none without one) and origin (MaxOrigins of them, then other; none for a task without one)."),
			[]string{"outcome", "status_class", "origin"}),
		breakers: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: prefix, Name: "breakers_open", ConstLabels: labels,
			Help: "Flow breakers open in this process, by origin (MaxOrigins of them, then other): 1 while open, 0 once closed."},
			[]string{"origin"}),
		origins: &origins{key: cfg.originKey, max: cfg.maxOrigins, named: map[string]struct{}{}},
		open:    openBreakers{open: map[string]struct{}{}},
		claim: prometheus.NewHistogram(histogram("claim_duration_seconds",
			"Round trips of successful claim calls.", roundTripBuckets)),
		settle: prometheus.NewHistogram(histogram("settle_duration_seconds",
			"Round trips of successful settle calls.", roundTripBuckets)),
		tasksDesc: prometheus.NewDesc(prefix+"_tasks",
			"Tasks per state at scrape time, read from the store.", []string{"state"}, labels),
		dueDesc: prometheus.NewDesc(prefix+"_tasks_due",
			"Scheduled and retrying tasks due now and waiting for a worker, read from the store at scrape time.", nil, labels),
		oldestDesc: prometheus.NewDesc(prefix+"_oldest_due_seconds",
			"How long the oldest due task has waited past its due time, read from the store at scrape time.", nil, labels),
		pausedDesc: prometheus.NewDesc(prefix+"_paused",
			"1 while claims are stopped on any partition (Pause), else 0, read from the store at scrape time.", nil, labels),
		statsTimeout: cfg.statsTimeout,
	}
	initLabels(m.added.MetricVec, addModes)
	initLabels(m.settled.MetricVec, settleResults)
	initLabels(m.errors.MetricVec, errorOps)
	m.handlerBy = map[string]prometheus.Observer{}
	for _, v := range handlerOutcomes {
		m.handlerBy[v] = m.handler.WithLabelValues(v)
	}
	return m
}

// prefix starts every metric's name.
const prefix = "durable"

// WatchStats makes each scrape report s's tasks per state, read with
// s.Stats: pass any Queue of the namespace. Until it is called, the gauges
// are missing.
func (m *Metrics) WatchStats(s StatsSource) {
	if s == nil {
		panic("durablemetrics: WatchStats with nil StatsSource")
	}
	m.source.Store(&s)
}

// Describe sends the descriptors of every metric m reports.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
	ch <- m.tasksDesc
	ch <- m.dueDesc
	ch <- m.oldestDesc
	ch <- m.pausedDesc
}

// Collect sends the counters and histograms and, if WatchStats was called,
// the gauges read from the store now. If that read fails, the gauges are
// left out and store_errors_total{op="stats"} counts the failure; the rest
// of the scrape goes on.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	if s := m.source.Load(); s != nil {
		ctx, cancel := context.WithTimeout(context.Background(), m.statsTimeout)
		st, err := readStats(ctx, *s)
		cancel()
		if err != nil {
			m.errors.WithLabelValues(opStats).Inc()
		} else {
			for _, c := range st.states {
				ch <- prometheus.MustNewConstMetric(m.tasksDesc, prometheus.GaugeValue, float64(c.tasks), c.state)
			}
			ch <- prometheus.MustNewConstMetric(m.dueDesc, prometheus.GaugeValue, float64(st.due))
			ch <- prometheus.MustNewConstMetric(m.oldestDesc, prometheus.GaugeValue, st.oldestDue.Seconds())
			paused := 0.0
			if st.paused {
				paused = 1
			}
			ch <- prometheus.MustNewConstMetric(m.pausedDesc, prometheus.GaugeValue, paused)
		}
	}
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
}

// initLabels creates vec's series for values, so that each exists, at zero,
// from the first scrape: a rate over a series that appears late misses its
// first increase.
func initLabels(vec *prometheus.MetricVec, values []string) {
	for _, v := range values {
		if _, err := vec.GetMetricWithLabelValues(v); err != nil {
			panic("durablemetrics: " + err.Error()) // the label names above are wrong
		}
	}
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.added, m.fired, m.settled, m.trimmed, m.kept, m.errors, m.lateness, m.handler, m.claim, m.settle,
		m.deliveries, m.breakers}
}
