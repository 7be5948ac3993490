package durablemetrics

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
)

// knownStats is a namespace of two partitions: one dead, three waiting an
// hour, two retrying of which one is due, one in flight, four done (one
// cancelled), the second partition paused.
var knownStats = durable.Stats{
	Total: durable.ShardStats{Shard: -1, Due: 1, Scheduled: 4, InFlight: 1, Dead: 1, Retained: 5,
		States:    durable.StateCounts{Scheduled: 3, Retrying: 2, InFlight: 1, Dead: 1, Done: 4, Cancelled: 1},
		OldestDue: 1500 * time.Millisecond, Paused: true},
	Paused: true,
}

// After the events a Queue sends for known work, and a scrape of known
// stats, every metric says exactly what happened: 15 tasks added and one
// replaced; 13 deliveries, ten done, one retried then done, one dead.
func TestMetricsAfterKnownWork(t *testing.T) {
	m := New("orders")
	reg := prometheus.NewPedanticRegistry() // checks Collect against Describe
	require.NoError(t, reg.Register(m))
	m.WatchStats(fixedStats{st: knownStats})
	o := m.Observer()

	o.TasksAdded(durable.AddEvent{Stored: 15, Skipped: 1})
	o.TasksAdded(durable.AddEvent{Replace: true, Stored: 1})
	for i := range 4 {
		o.Claimed(durable.ClaimEvent{Shard: i, Tasks: 3, Duration: time.Millisecond})
	}
	outcomes := []string{"done", "done", "done", "done", "done", "done", "done", "done", "done", "done", "retry", "done", "dead"}
	for i, outcome := range outcomes {
		task := durable.Task{Key: fmt.Sprint("k", i), Attempt: 1}
		late := time.Duration(0)
		if outcome == "dead" {
			late = 2 * time.Second
		}
		o.DeliveryStarted(durable.StartEvent{Task: task, Lateness: late})
		o.HandlerFinished(durable.FinishEvent{Task: task, Outcome: outcome, Duration: 20 * time.Millisecond})
	}
	o.Settled(durable.SettleEvent{Shard: 0, Tasks: 12, Duration: time.Millisecond, Done: 10, Retried: 1, Dead: 1})
	o.Settled(durable.SettleEvent{Shard: 1, Tasks: 1, Duration: time.Millisecond, Done: 1})

	assert.Equal(t, 13.0, testutil.ToFloat64(m.fired), "ten, the retried one twice, the dead one once")
	expected := `
# HELP durable_tasks_added_total Tasks stored by Add, AddAfter, AddBatch (mode add) or Replace (mode replace).
# TYPE durable_tasks_added_total counter
durable_tasks_added_total{mode="add",namespace="orders"} 15
durable_tasks_added_total{mode="replace",namespace="orders"} 1
# HELP durable_tasks_fired_total Deliveries started: handlers started by Run, once per attempt.
# TYPE durable_tasks_fired_total counter
durable_tasks_fired_total{namespace="orders"} 13
# HELP durable_tasks_settled_total Finished deliveries by what became of the task.
# TYPE durable_tasks_settled_total counter
durable_tasks_settled_total{namespace="orders",result="cancelled"} 0
durable_tasks_settled_total{namespace="orders",result="dead"} 1
durable_tasks_settled_total{namespace="orders",result="done"} 11
durable_tasks_settled_total{namespace="orders",result="postponed"} 0
durable_tasks_settled_total{namespace="orders",result="rejected"} 0
durable_tasks_settled_total{namespace="orders",result="released"} 0
durable_tasks_settled_total{namespace="orders",result="retried"} 1
# HELP durable_dead_tasks_trimmed_total Dead tasks dropped because their partition held more than MaxDead.
# TYPE durable_dead_tasks_trimmed_total counter
durable_dead_tasks_trimmed_total{namespace="orders"} 0
# HELP durable_store_errors_total Failed store calls by operation.
# TYPE durable_store_errors_total counter
durable_store_errors_total{namespace="orders",op="add"} 0
durable_store_errors_total{namespace="orders",op="claim"} 0
durable_store_errors_total{namespace="orders",op="extend"} 0
durable_store_errors_total{namespace="orders",op="settle"} 0
durable_store_errors_total{namespace="orders",op="stats"} 0
# HELP durable_tasks Tasks per state at scrape time, read from the store.
# TYPE durable_tasks gauge
durable_tasks{namespace="orders",state="cancelled"} 1
durable_tasks{namespace="orders",state="dead"} 1
durable_tasks{namespace="orders",state="done"} 4
durable_tasks{namespace="orders",state="in_flight"} 1
durable_tasks{namespace="orders",state="retrying"} 2
durable_tasks{namespace="orders",state="scheduled"} 3
# HELP durable_tasks_due Scheduled and retrying tasks due now and waiting for a worker, read from the store at scrape time.
# TYPE durable_tasks_due gauge
durable_tasks_due{namespace="orders"} 1
# HELP durable_oldest_due_seconds How long the oldest due task has waited past its due time, read from the store at scrape time.
# TYPE durable_oldest_due_seconds gauge
durable_oldest_due_seconds{namespace="orders"} 1.5
# HELP durable_paused 1 while claims are stopped on any partition (Pause), else 0, read from the store at scrape time.
# TYPE durable_paused gauge
durable_paused{namespace="orders"} 1
`
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected),
		"durable_tasks_added_total", "durable_tasks_fired_total", "durable_tasks_settled_total",
		"durable_dead_tasks_trimmed_total", "durable_store_errors_total",
		"durable_tasks", "durable_tasks_due", "durable_oldest_due_seconds", "durable_paused"))

	h := histograms(t, reg)
	assert.EqualValues(t, 13, h["durable_lateness_seconds"].GetSampleCount())
	assert.InDelta(t, 2.0, h["durable_lateness_seconds"].GetSampleSum(), 1e-9)
	assert.EqualValues(t, 11, h[`durable_handler_duration_seconds{outcome="done"}`].GetSampleCount())
	assert.EqualValues(t, 1, h[`durable_handler_duration_seconds{outcome="retry"}`].GetSampleCount())
	assert.EqualValues(t, 1, h[`durable_handler_duration_seconds{outcome="dead"}`].GetSampleCount())
	assert.EqualValues(t, 0, h[`durable_handler_duration_seconds{outcome="detach"}`].GetSampleCount())
	assert.EqualValues(t, 4, h["durable_claim_duration_seconds"].GetSampleCount())
	assert.EqualValues(t, 2, h["durable_settle_duration_seconds"].GetSampleCount())

	problems, err := testutil.CollectAndLint(m)
	require.NoError(t, err)
	assert.Empty(t, problems, "Prometheus naming rules")
}

// The series speak the API's vocabulary on every store: no name, label,
// label value or help text names Redis, a shard, a script or Lua (they
// did, as rediswheel_*, with states due and retained that durable does not
// have), and the tasks gauge has exactly durable's six states.
func TestSeriesSayNothingOfAStore(t *testing.T) {
	m := New("ns")
	m.WatchStats(fixedStats{st: knownStats})
	o := m.Observer()
	o.DeliveryStarted(durable.StartEvent{})
	o.HandlerFinished(durable.FinishEvent{Outcome: "done"})
	o.Claimed(durable.ClaimEvent{})
	o.Settled(durable.SettleEvent{Done: 1})
	o.DeadTrimmed(durable.TrimEvent{Tasks: 1})
	o.RetainedTrimmed(durable.TrimEvent{Tasks: 1})
	o.BreakerChanged(durable.BreakerEvent{Key: "https://a.example:443", State: "open"})
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(m))
	families, err := reg.Gather()
	require.NoError(t, err)
	require.Len(t, families, 16, "every metric of the package doc's table")

	storeWords := regexp.MustCompile(`(?i)redis|shard|script|lua|postgres|sqlite`)
	var states []string
	for _, f := range families {
		assert.True(t, strings.HasPrefix(f.GetName(), "durable_"), f.GetName())
		assert.NotRegexp(t, storeWords, f.GetName())
		assert.NotRegexp(t, storeWords, f.GetHelp(), f.GetName())
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				assert.NotRegexp(t, storeWords, l.GetName(), f.GetName())
				assert.NotRegexp(t, storeWords, l.GetValue(), f.GetName())
				if f.GetName() == "durable_tasks" && l.GetName() == "state" {
					states = append(states, l.GetValue())
				}
			}
		}
	}
	var want []string
	for _, s := range []durable.State{durable.StateScheduled, durable.StateRetrying, durable.StateInFlight,
		durable.StateDead, durable.StateDone, durable.StateCancelled} {
		want = append(want, strings.ReplaceAll(string(s), " ", "_"))
	}
	assert.ElementsMatch(t, want, states)
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

// A scrape while the store does not answer gives up on the tasks per state
// after StatsTimeout, counts the failure, and still reports everything else.
func TestStatsFailureKeepsScrape(t *testing.T) {
	for name, src := range map[string]StatsSource{
		"no reply": stuckStats{},
		"error":    fixedStats{err: errors.New("store down")},
	} {
		t.Run(name, func(t *testing.T) {
			m := New("unreachable", StatsTimeout(100*time.Millisecond))
			m.WatchStats(src)
			reg := prometheus.NewPedanticRegistry()
			require.NoError(t, reg.Register(m))
			gathered := make(chan error, 1)
			var families []*dto.MetricFamily
			go func() {
				var err error
				families, err = reg.Gather()
				gathered <- err
			}()
			require.NoError(t, await(t, gathered, "the scrape to give up on the store"))
			names := map[string]bool{}
			for _, f := range families {
				names[f.GetName()] = true
			}
			for _, gauge := range []string{"durable_tasks", "durable_tasks_due", "durable_oldest_due_seconds", "durable_paused"} {
				assert.False(t, names[gauge], gauge)
			}
			assert.True(t, names["durable_tasks_fired_total"])
			assert.True(t, names["durable_lateness_seconds"])
			assert.Equal(t, 1.0, testutil.ToFloat64(m.errors.WithLabelValues("stats")))
		})
	}
}

// Without WatchStats the gauges are missing, not zero: a zero would read as
// an empty namespace.
func TestNoGaugesWithoutWatchStats(t *testing.T) {
	m := New("ns")
	n, err := testutil.GatherAndCount(registry(t, m), "durable_tasks", "durable_tasks_due", "durable_oldest_due_seconds", "durable_paused")
	require.NoError(t, err)
	assert.Zero(t, n)
}

func registry(t *testing.T, cs ...prometheus.Collector) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	for _, c := range cs {
		require.NoError(t, reg.Register(c))
	}
	return reg
}

// Events that a run rarely causes are counted all the same; failed round
// trips are counted by StoreError, not timed.
func TestObserverCounts(t *testing.T) {
	m := New("ns")
	o := m.Observer()
	o.DeadTrimmed(durable.TrimEvent{Shard: 3, Tasks: 5})
	o.DeadTrimmed(durable.TrimEvent{Shard: 1, Tasks: 2})
	o.RetainedTrimmed(durable.TrimEvent{Shard: 2, Tasks: 3})
	o.StoreError(durable.StoreErrorEvent{Op: durable.OpExtend, Err: errors.New("x")})
	o.Claimed(durable.ClaimEvent{Shard: 1, Duration: time.Hour, Err: errors.New("x")})
	o.Settled(durable.SettleEvent{Shard: 1, Tasks: 3, Duration: time.Hour, Err: errors.New("x")})
	o.Settled(durable.SettleEvent{Shard: 1, Tasks: 4, Duration: time.Millisecond, Cancelled: 1, Released: 1, Postponed: 1, Rejected: 1})
	o.TasksAdded(durable.AddEvent{Stored: 0, Skipped: 4})
	o.HandlerFinished(durable.FinishEvent{Outcome: "newer", Duration: time.Second})

	assert.Equal(t, 7.0, testutil.ToFloat64(m.trimmed))
	assert.Equal(t, 3.0, testutil.ToFloat64(m.kept))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.errors.WithLabelValues("extend")))
	assert.Equal(t, 0.0, testutil.ToFloat64(m.added.WithLabelValues("add")), "skipped adds are not added")
	for _, r := range []string{"cancelled", "released", "postponed", "rejected"} {
		assert.Equal(t, 1.0, testutil.ToFloat64(m.settled.WithLabelValues(r)), r)
	}
	h := histograms(t, registry(t, m))
	assert.Zero(t, h["durable_claim_duration_seconds"].GetSampleCount(), "failed claims are not timed")
	assert.EqualValues(t, 1, h["durable_settle_duration_seconds"].GetSampleCount(), "failed settles are not timed")
	assert.EqualValues(t, 1, h[`durable_handler_duration_seconds{outcome="newer"}`].GetSampleCount(), "an outcome newer than the package")
}

// The Metrics of two namespaces share a registry: the namespace label tells
// them apart.
func TestNamespacesShareRegistry(t *testing.T) {
	a, b := New("a"), New("b")
	reg := registry(t, a, b)
	a.Observer().DeliveryStarted(durable.StartEvent{})
	n, err := testutil.GatherAndCount(reg, "durable_tasks_fired_total")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Equal(t, 1.0, testutil.ToFloat64(a.fired))
	assert.Equal(t, 0.0, testutil.ToFloat64(b.fired))
}

func TestOptionsPanic(t *testing.T) {
	assert.PanicsWithValue(t, "durablemetrics: StatsTimeout: duration must be positive", func() { StatsTimeout(0) })
	assert.PanicsWithValue(t, "durablemetrics: HandlerBuckets: buckets must increase", func() { HandlerBuckets([]float64{1, 1}) })
	assert.PanicsWithValue(t, "durablemetrics: WatchStats with nil StatsSource", func() { New("x").WatchStats(nil) })
	assert.PanicsWithValue(t, "durablemetrics: MaxOrigins: want a positive count", func() { MaxOrigins(0) })
	assert.PanicsWithValue(t, "durablemetrics: OriginKey with nil func", func() { OriginKey(nil) })
	m := New("x", HandlerBuckets([]float64{1, 2}))
	m.Observer().HandlerFinished(durable.FinishEvent{Outcome: "done", Duration: 1500 * time.Millisecond})
	b := histograms(t, registry(t, m))[`durable_handler_duration_seconds{outcome="done"}`].GetBucket()
	require.Len(t, b, 2)
	assert.EqualValues(t, 0, b[0].GetCumulativeCount(), "le=1")
	assert.EqualValues(t, 1, b[1].GetCumulativeCount(), "le=2")
}
