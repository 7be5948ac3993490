package rwmetrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// After known work on real Redis, every metric says exactly what happened:
// 15 tasks added and one replaced; 12 due now, of which ten succeed, one
// fails once, one fails for good; three wait an hour.
func TestMetricsAfterKnownWork(t *testing.T) {
	t.Run("standalone", func(t *testing.T) { testKnownWork(t, standalone(t)) })
	t.Run("cluster", func(t *testing.T) { testKnownWork(t, cluster(t)) })
}

func testKnownWork(t *testing.T, c redis.UniversalClient) {
	ns := uniqueNamespace(t, c)
	m := New(ns)
	reg := prometheus.NewPedanticRegistry() // checks Collect against Describe
	require.NoError(t, reg.Register(m))
	q := newQueue(t, c, ns, m, rediswheel.Options{Shards: 4, Backoff: func(int) time.Duration { return 0 }})
	m.WatchStats(q)
	ctx := context.Background()

	now, err := c.Time(ctx).Result()
	require.NoError(t, err)
	var items []rediswheel.Item
	for i := range 10 {
		items = append(items, rediswheel.Item{Key: fmt.Sprint("ok", i), At: now})
	}
	for i := range 3 {
		items = append(items, rediswheel.Item{Key: fmt.Sprint("later", i), At: now.Add(time.Hour)})
	}
	_, err = q.AddBatch(ctx, items)
	require.NoError(t, err)
	_, err = q.Add(ctx, "flaky", nil, now)
	require.NoError(t, err)
	_, err = q.Add(ctx, "bad", nil, now.Add(-2*time.Second)) // two seconds late at best
	require.NoError(t, err)
	_, err = q.Add(ctx, "ok0", nil, now) // exists: not counted
	require.NoError(t, err)
	require.NoError(t, q.Replace(ctx, "later0", []byte("new"), now.Add(time.Hour)))

	var flakyFailed atomic.Bool
	var wg sync.WaitGroup
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	wg.Add(1)
	go func() {
		defer wg.Done()
		q.Run(runCtx, func(ctx context.Context, tk rediswheel.Task) error {
			switch {
			case tk.Key == "bad":
				return rediswheel.Permanent(errors.New("no"))
			case tk.Key == "flaky" && flakyFailed.CompareAndSwap(false, true):
				return errors.New("once")
			}
			return nil
		})
	}()
	settled := func() float64 {
		var n float64
		for _, r := range settleResults {
			n += testutil.ToFloat64(m.settled.WithLabelValues(r))
		}
		return n
	}
	deadline := time.Now().Add(20 * time.Second)
	for settled() < 13 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	awaitDone(t, "Run to return", wg.Wait)

	assert.Equal(t, 13.0, testutil.ToFloat64(m.fired), "ten, flaky twice, bad once")
	expected := fmt.Sprintf(`
# HELP rediswheel_tasks_added_total Tasks stored by Add, AddAfter, AddBatch (mode add) or Replace (mode replace).
# TYPE rediswheel_tasks_added_total counter
rediswheel_tasks_added_total{mode="add",namespace="%[1]s"} 15
rediswheel_tasks_added_total{mode="replace",namespace="%[1]s"} 1
# HELP rediswheel_tasks_fired_total Deliveries started: tasks claimed by Run, once per attempt.
# TYPE rediswheel_tasks_fired_total counter
rediswheel_tasks_fired_total{namespace="%[1]s"} 13
# HELP rediswheel_tasks_settled_total Finished deliveries by what became of the task.
# TYPE rediswheel_tasks_settled_total counter
rediswheel_tasks_settled_total{namespace="%[1]s",result="cancelled"} 0
rediswheel_tasks_settled_total{namespace="%[1]s",result="dead"} 1
rediswheel_tasks_settled_total{namespace="%[1]s",result="done"} 11
rediswheel_tasks_settled_total{namespace="%[1]s",result="postponed"} 0
rediswheel_tasks_settled_total{namespace="%[1]s",result="rejected"} 0
rediswheel_tasks_settled_total{namespace="%[1]s",result="released"} 0
rediswheel_tasks_settled_total{namespace="%[1]s",result="retried"} 1
# HELP rediswheel_dead_tasks_trimmed_total Dead tasks dropped because their shard's dead set was over MaxDead.
# TYPE rediswheel_dead_tasks_trimmed_total counter
rediswheel_dead_tasks_trimmed_total{namespace="%[1]s"} 0
# HELP rediswheel_redis_errors_total Failed Redis calls by operation.
# TYPE rediswheel_redis_errors_total counter
rediswheel_redis_errors_total{namespace="%[1]s",op="add"} 0
rediswheel_redis_errors_total{namespace="%[1]s",op="claim"} 0
rediswheel_redis_errors_total{namespace="%[1]s",op="extend"} 0
rediswheel_redis_errors_total{namespace="%[1]s",op="settle"} 0
rediswheel_redis_errors_total{namespace="%[1]s",op="stats"} 0
# HELP rediswheel_tasks Tasks per state at scrape time, read from Redis.
# TYPE rediswheel_tasks gauge
rediswheel_tasks{namespace="%[1]s",state="dead"} 1
rediswheel_tasks{namespace="%[1]s",state="due"} 0
rediswheel_tasks{namespace="%[1]s",state="in_flight"} 0
rediswheel_tasks{namespace="%[1]s",state="retained"} 0
rediswheel_tasks{namespace="%[1]s",state="scheduled"} 3
# HELP rediswheel_oldest_due_seconds How long the oldest due task has waited past its due time, read from Redis at scrape time.
# TYPE rediswheel_oldest_due_seconds gauge
rediswheel_oldest_due_seconds{namespace="%[1]s"} 0
# HELP rediswheel_paused 1 while claims are stopped on any shard (Pause), else 0, read from Redis at scrape time.
# TYPE rediswheel_paused gauge
rediswheel_paused{namespace="%[1]s"} 0
`, ns)
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected),
		"rediswheel_tasks_added_total", "rediswheel_tasks_fired_total", "rediswheel_tasks_settled_total",
		"rediswheel_dead_tasks_trimmed_total", "rediswheel_redis_errors_total",
		"rediswheel_tasks", "rediswheel_oldest_due_seconds", "rediswheel_paused"))

	// The histograms' samples depend on timing; their counts do not.
	h := histograms(t, reg)
	assert.EqualValues(t, 13, h["rediswheel_lateness_seconds"].GetSampleCount())
	assert.GreaterOrEqual(t, h["rediswheel_lateness_seconds"].GetSampleSum(), 1.999, "bad was claimed 2s late by the Redis clock")
	assert.EqualValues(t, 11, h[`rediswheel_handler_duration_seconds{outcome="done"}`].GetSampleCount())
	assert.EqualValues(t, 1, h[`rediswheel_handler_duration_seconds{outcome="retry"}`].GetSampleCount())
	assert.EqualValues(t, 1, h[`rediswheel_handler_duration_seconds{outcome="dead"}`].GetSampleCount())
	assert.EqualValues(t, 0, h[`rediswheel_handler_duration_seconds{outcome="later"}`].GetSampleCount())
	// Four shards polled at least once; at least one settle per fate.
	assert.GreaterOrEqual(t, h["rediswheel_claim_duration_seconds"].GetSampleCount(), uint64(4))
	assert.Positive(t, h["rediswheel_claim_duration_seconds"].GetSampleSum())
	assert.GreaterOrEqual(t, h["rediswheel_settle_duration_seconds"].GetSampleCount(), uint64(2))

	problems, err := testutil.CollectAndLint(m)
	require.NoError(t, err)
	assert.Empty(t, problems, "Prometheus naming rules")
}

// histograms gathers reg's histograms by name and, for the others than
// namespace, labels: `name{label="value"}`.
func histograms(t *testing.T, reg *prometheus.Registry) map[string]*dto.Histogram {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]*dto.Histogram{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if m.GetHistogram() == nil {
				continue
			}
			name := f.GetName()
			for _, l := range m.GetLabel() {
				if l.GetName() != "namespace" {
					name += fmt.Sprintf("{%s=%q}", l.GetName(), l.GetValue())
				}
			}
			out[name] = m.GetHistogram()
		}
	}
	return out
}

// A scrape while Redis is unreachable gives up on the tasks per state after
// StatsTimeout, counts the failure, and still reports everything else.
func TestStatsFailureKeepsScrape(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	m := New("unreachable", StatsTimeout(time.Second))
	q, err := rediswheel.New(c, rediswheel.Options{Namespace: "unreachable", Observer: m.Observer()})
	require.NoError(t, err)
	m.WatchStats(q)

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(m))
	gathered := make(chan error, 1)
	var families []*dto.MetricFamily
	go func() {
		var err error
		families, err = reg.Gather()
		gathered <- err
	}()
	require.NoError(t, await(t, gathered, "the scrape to give up on Redis"))
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	assert.False(t, names["rediswheel_tasks"])
	assert.False(t, names["rediswheel_oldest_due_seconds"])
	assert.False(t, names["rediswheel_paused"])
	assert.True(t, names["rediswheel_tasks_fired_total"])
	assert.True(t, names["rediswheel_lateness_seconds"])
	assert.Equal(t, 1.0, testutil.ToFloat64(m.errors.WithLabelValues("stats")))
}

// Dead tasks dropped past MaxDead are counted, never silent: five tasks die
// in a shard that keeps two.
func TestDeadTrimmedCounted(t *testing.T) {
	c := standalone(t)
	ns := uniqueNamespace(t, c)
	m := New(ns)
	q := newQueue(t, c, ns, m, rediswheel.Options{Shards: 1, MaxDead: 2})
	m.WatchStats(q)
	ctx := context.Background()
	for i := range 5 {
		_, err := q.Add(ctx, fmt.Sprint("doomed", i), nil, time.Now())
		require.NoError(t, err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.Run(runCtx, func(context.Context, rediswheel.Task) error { return rediswheel.Permanent(errors.New("no")) })
	}()
	deadline := time.Now().Add(20 * time.Second)
	for testutil.ToFloat64(m.settled.WithLabelValues("dead")) < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	await(t, done, "Run to return")
	assert.Equal(t, 5.0, testutil.ToFloat64(m.settled.WithLabelValues("dead")))
	assert.Equal(t, 3.0, testutil.ToFloat64(m.trimmed))
	st, err := readStats(ctx, q)
	require.NoError(t, err)
	assert.Contains(t, st.states, stateCount{"dead", 2})
}

// The gauges follow what Redis holds: a retained task, a paused namespace.
func TestGaugesRetainedAndPaused(t *testing.T) {
	c := standalone(t)
	ns := uniqueNamespace(t, c)
	m := New(ns)
	q := newQueue(t, c, ns, m, rediswheel.Options{Shards: 2, Retention: time.Hour})
	m.WatchStats(q)
	ctx := context.Background()
	_, err := q.Add(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.Run(runCtx, func(context.Context, rediswheel.Task) error { return nil })
	}()
	deadline := time.Now().Add(20 * time.Second)
	for testutil.ToFloat64(m.settled.WithLabelValues("done")) < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	await(t, done, "Run to return")
	require.NoError(t, q.Pause(ctx))
	expected := fmt.Sprintf(`
# HELP rediswheel_paused 1 while claims are stopped on any shard (Pause), else 0, read from Redis at scrape time.
# TYPE rediswheel_paused gauge
rediswheel_paused{namespace="%[1]s"} 1
# HELP rediswheel_tasks Tasks per state at scrape time, read from Redis.
# TYPE rediswheel_tasks gauge
rediswheel_tasks{namespace="%[1]s",state="dead"} 0
rediswheel_tasks{namespace="%[1]s",state="due"} 0
rediswheel_tasks{namespace="%[1]s",state="in_flight"} 0
rediswheel_tasks{namespace="%[1]s",state="retained"} 1
rediswheel_tasks{namespace="%[1]s",state="scheduled"} 0
`, ns)
	assert.NoError(t, testutil.CollectAndCompare(m, strings.NewReader(expected), "rediswheel_paused", "rediswheel_tasks"))
}

// Events this test cannot cause on demand yet are counted all the same.
func TestObserverCounts(t *testing.T) {
	m := New("ns")
	o := m.Observer()
	o.DeadTrimmed(rediswheel.TrimEvent{Shard: 3, Tasks: 5})
	o.DeadTrimmed(rediswheel.TrimEvent{Shard: 1, Tasks: 2})
	o.RetainedTrimmed(rediswheel.TrimEvent{Shard: 2, Tasks: 3})
	o.StoreError(rediswheel.StoreErrorEvent{Op: rediswheel.OpExtend, Err: errors.New("x")})
	o.Claimed(rediswheel.ClaimEvent{Shard: 1, Duration: time.Hour, Err: errors.New("x")})
	o.Settled(rediswheel.SettleEvent{Shard: 1, Tasks: 3, Duration: time.Hour, Err: errors.New("x")})
	o.Settled(rediswheel.SettleEvent{Shard: 1, Tasks: 4, Duration: time.Millisecond, Cancelled: 1, Released: 1, Postponed: 1, Rejected: 1})
	o.TasksAdded(rediswheel.AddEvent{Stored: 0, Skipped: 4})

	assert.Equal(t, 7.0, testutil.ToFloat64(m.trimmed))
	assert.Equal(t, 3.0, testutil.ToFloat64(m.kept))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.errors.WithLabelValues("extend")))
	assert.Equal(t, 0.0, testutil.ToFloat64(m.added.WithLabelValues("add")), "skipped adds are not added")
	for _, r := range []string{"cancelled", "released", "postponed", "rejected"} {
		assert.Equal(t, 1.0, testutil.ToFloat64(m.settled.WithLabelValues(r)), r)
	}
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(m))
	h := histograms(t, reg)
	assert.Zero(t, h["rediswheel_claim_duration_seconds"].GetSampleCount(), "failed claims are not timed")
	assert.EqualValues(t, 1, h["rediswheel_settle_duration_seconds"].GetSampleCount(), "failed settles are not timed")
}

// The Metrics of two namespaces share a registry: the namespace label tells
// them apart.
func TestNamespacesShareRegistry(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	a, b := New("a"), New("b")
	require.NoError(t, reg.Register(a))
	require.NoError(t, reg.Register(b))
	a.Observer().DeliveryStarted(rediswheel.StartEvent{})
	n, err := testutil.GatherAndCount(reg, "rediswheel_tasks_fired_total")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Equal(t, 1.0, testutil.ToFloat64(a.fired))
	assert.Equal(t, 0.0, testutil.ToFloat64(b.fired))
}

func TestOptionsPanic(t *testing.T) {
	assert.PanicsWithValue(t, "rwmetrics: StatsTimeout: duration must be positive", func() { StatsTimeout(0) })
	assert.PanicsWithValue(t, "rwmetrics: HandlerBuckets: buckets must increase", func() { HandlerBuckets([]float64{1, 1}) })
	assert.PanicsWithValue(t, "rwmetrics: WatchStats with nil Queue", func() { New("x").WatchStats(nil) })
	m := New("x", HandlerBuckets([]float64{1, 2}))
	m.Observer().HandlerFinished(rediswheel.FinishEvent{Outcome: "done", Duration: 1500 * time.Millisecond})
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(m))
	b := histograms(t, reg)[`rediswheel_handler_duration_seconds{outcome="done"}`].GetBucket()
	require.Len(t, b, 2)
	assert.EqualValues(t, 0, b[0].GetCumulativeCount(), "le=1")
	assert.EqualValues(t, 1, b[1].GetCumulativeCount(), "le=2")
}
