package rwmetrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// DefaultStatsTimeout bounds the Redis calls of one scrape's tasks per state:
// under Prometheus's default scrape timeout of 10s, so a slow Redis costs the
// scrape those gauges, not the whole scrape.
const DefaultStatsTimeout = 5 * time.Second

// Buckets of the histograms, in seconds.
var (
	// roundTripBuckets: a claim or settle script runs about a millisecond at
	// most (rediswheel caps its batches for that), and a round trip on a
	// LAN adds a fraction of one; past a second Redis is in trouble.
	roundTripBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	// latenessBuckets: an idle Run sees a task added elsewhere within a
	// second (its longest sleep); later than that is a backlog.
	latenessBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
	// DefaultHandlerBuckets are the handler duration buckets unless
	// HandlerBuckets sets others: 5ms to 5 minutes.
	DefaultHandlerBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
)

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

	// The gauges, read from Redis at each scrape.
	tasksDesc, oldestDesc, pausedDesc *prometheus.Desc
	queue                             atomic.Pointer[rediswheel.Queue] // set by WatchStats
	statsTimeout                      time.Duration
}

// An Option configures New.
type Option func(*config)

type config struct {
	statsTimeout   time.Duration
	handlerBuckets []float64
}

// StatsTimeout bounds the Redis calls that read the tasks per state at each
// scrape (default DefaultStatsTimeout). d must be positive.
func StatsTimeout(d time.Duration) Option {
	if d <= 0 {
		panic("rwmetrics: StatsTimeout: duration must be positive")
	}
	return func(c *config) { c.statsTimeout = d }
}

// HandlerBuckets sets the buckets of handler_duration_seconds, in seconds,
// increasing (default DefaultHandlerBuckets).
func HandlerBuckets(b []float64) Option {
	for i := 1; i < len(b); i++ {
		if b[i] <= b[i-1] {
			panic("rwmetrics: HandlerBuckets: buckets must increase")
		}
	}
	return func(c *config) { c.handlerBuckets = b }
}

// New returns the metrics of the rediswheel namespace, which becomes the
// constant label namespace of every metric. Pass m.Observer() as the
// Options.Observer of the namespace's Queues, call WatchStats for the tasks
// per state, and register m.
func New(namespace string, opts ...Option) *Metrics {
	cfg := config{statsTimeout: DefaultStatsTimeout, handlerBuckets: DefaultHandlerBuckets}
	for _, o := range opts {
		o(&cfg)
	}
	labels := prometheus.Labels{"namespace": namespace}
	counter := func(name, help string) prometheus.CounterOpts {
		return prometheus.CounterOpts{Namespace: "rediswheel", Name: name, Help: help, ConstLabels: labels}
	}
	histogram := func(name, help string, buckets []float64) prometheus.HistogramOpts {
		return prometheus.HistogramOpts{Namespace: "rediswheel", Name: name, Help: help, ConstLabels: labels, Buckets: buckets}
	}
	m := &Metrics{
		added: prometheus.NewCounterVec(counter("tasks_added_total",
			"Tasks stored by Add, AddAfter, AddBatch (mode add) or Replace (mode replace)."), []string{"mode"}),
		fired: prometheus.NewCounter(counter("tasks_fired_total",
			"Deliveries started: tasks claimed by Run, once per attempt.")),
		settled: prometheus.NewCounterVec(counter("tasks_settled_total",
			"Finished deliveries by what became of the task."), []string{"result"}),
		trimmed: prometheus.NewCounter(counter("dead_tasks_trimmed_total",
			"Dead tasks dropped because their shard's dead set was over MaxDead.")),
		kept: prometheus.NewCounter(counter("retained_tasks_trimmed_total",
			"Retained tasks forgotten by a settle or Cancel: retention over, or their shard over MaxRetained.")),
		errors: prometheus.NewCounterVec(counter("redis_errors_total",
			"Failed Redis calls by operation."), []string{"op"}),
		lateness: prometheus.NewHistogram(histogram("lateness_seconds",
			"How long after its due time each delivery started, by the Redis clock.", latenessBuckets)),
		handler: prometheus.NewHistogramVec(histogram("handler_duration_seconds",
			"Time from a task's claim to its handler's return, by outcome.", cfg.handlerBuckets), []string{"outcome"}),
		claim: prometheus.NewHistogram(histogram("claim_duration_seconds",
			"Round trips of successful claim calls.", roundTripBuckets)),
		settle: prometheus.NewHistogram(histogram("settle_duration_seconds",
			"Round trips of successful settle calls.", roundTripBuckets)),
		tasksDesc: prometheus.NewDesc("rediswheel_tasks",
			"Tasks per state at scrape time, read from Redis.", []string{"state"}, labels),
		oldestDesc: prometheus.NewDesc("rediswheel_oldest_due_seconds",
			"How long the oldest due task has waited past its due time, read from Redis at scrape time.", nil, labels),
		pausedDesc: prometheus.NewDesc("rediswheel_paused",
			"1 while claims are stopped on any shard (Pause), else 0, read from Redis at scrape time.", nil, labels),
		statsTimeout: cfg.statsTimeout,
	}
	initLabels(m.added.MetricVec, addModes)
	initLabels(m.settled.MetricVec, settleResults)
	initLabels(m.errors.MetricVec, errorOps)
	m.handlerBy = map[string]prometheus.Observer{}
	for _, v := range handlerResults {
		m.handlerBy[v] = m.handler.WithLabelValues(v)
	}
	return m
}

// WatchStats makes each scrape report q's tasks per state, read from Redis
// with q.Stats. Any Queue of the namespace will do. Until it is called, the
// gauges are missing.
func (m *Metrics) WatchStats(q *rediswheel.Queue) {
	if q == nil {
		panic("rwmetrics: WatchStats with nil Queue")
	}
	m.queue.Store(q)
}

// Describe sends the descriptors of every metric m reports.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
	ch <- m.tasksDesc
	ch <- m.oldestDesc
	ch <- m.pausedDesc
}

// Collect sends the counters and histograms and, if WatchStats was called,
// the gauges read from Redis now. If that read fails, the gauges are left
// out and redis_errors_total{op="stats"} counts the failure; the rest of
// the scrape goes on.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	if q := m.queue.Load(); q != nil {
		ctx, cancel := context.WithTimeout(context.Background(), m.statsTimeout)
		s, err := readStats(ctx, q)
		cancel()
		if err != nil {
			m.errors.WithLabelValues("stats").Inc()
		} else {
			for _, st := range s.states {
				ch <- prometheus.MustNewConstMetric(m.tasksDesc, prometheus.GaugeValue, float64(st.tasks), st.state)
			}
			ch <- prometheus.MustNewConstMetric(m.oldestDesc, prometheus.GaugeValue, s.oldestDue.Seconds())
			paused := 0.0
			if s.paused {
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
			panic("rwmetrics: " + err.Error()) // the label names above are wrong
		}
	}
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.added, m.fired, m.settled, m.trimmed, m.kept, m.errors, m.lateness, m.handler, m.claim, m.settle}
}
