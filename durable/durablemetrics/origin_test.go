package durablemetrics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
)

func hook(t testing.TB, url string) durable.Task {
	t.Helper()
	p, err := durable.EncodeHTTPTask(durable.HTTPTask{Method: "POST", URL: url})
	require.NoError(t, err)
	return durable.Task{Key: "k", Type: durable.HTTPTaskType, Payload: p, Attempt: 1}
}

// Deliveries are counted by outcome, status class and origin: a 404 that
// died, a 500 retried, a 202 detached, a 200 done, a task that is not an
// HTTP task (origin "none"), a timeout (no status: "none").
func TestDeliveriesByOutcomeStatusOrigin(t *testing.T) {
	m := New("ns")
	reg := registry(t, m)
	o := m.Observer()
	a, b := hook(t, "https://a.example/x"), hook(t, "http://B.example:8080/y")
	o.HandlerFinished(durable.FinishEvent{Task: a, Outcome: "dead", Result: durable.Result{Code: 404}})
	o.HandlerFinished(durable.FinishEvent{Task: a, Outcome: "retry", Result: durable.Result{Code: 500}})
	o.HandlerFinished(durable.FinishEvent{Task: a, Outcome: "retry", Result: durable.Result{Code: 503}})
	o.HandlerFinished(durable.FinishEvent{Task: b, Outcome: "detach", Result: durable.Result{Code: 202}})
	o.HandlerFinished(durable.FinishEvent{Task: b, Outcome: "done", Result: durable.Result{Code: 200}})
	o.HandlerFinished(durable.FinishEvent{Task: b, Outcome: "retry"})
	o.HandlerFinished(durable.FinishEvent{Task: durable.Task{Key: "plain"}, Outcome: "done"})
	expected := `
# HELP durable_deliveries_total Finished deliveries by outcome, status class (2xx..5xx of the handler's Result code, none without one) and origin (MaxOrigins of them, then other; none for a task without one).
# TYPE durable_deliveries_total counter
durable_deliveries_total{namespace="ns",origin="http://b.example:8080",outcome="detach",status_class="2xx"} 1
durable_deliveries_total{namespace="ns",origin="http://b.example:8080",outcome="done",status_class="2xx"} 1
durable_deliveries_total{namespace="ns",origin="http://b.example:8080",outcome="retry",status_class="none"} 1
durable_deliveries_total{namespace="ns",origin="https://a.example:443",outcome="dead",status_class="4xx"} 1
durable_deliveries_total{namespace="ns",origin="https://a.example:443",outcome="retry",status_class="5xx"} 2
durable_deliveries_total{namespace="ns",origin="none",outcome="done",status_class="none"} 1
`
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected), "durable_deliveries_total"))
	problems, err := testutil.CollectAndLint(m)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// A breaker's gauge is 1 while open, 0 once closed; a failed probe's second
// open counts once.
func TestBreakerGauge(t *testing.T) {
	m := New("ns")
	reg := registry(t, m)
	o := m.Observer()
	o.BreakerChanged(durable.BreakerEvent{Key: "https://a.example:443", State: "open", Failures: 5})
	o.BreakerChanged(durable.BreakerEvent{Key: "https://a.example:443", State: "open", Failures: 1})
	o.BreakerChanged(durable.BreakerEvent{Key: "https://b.example:443", State: "open", Failures: 5})
	o.BreakerChanged(durable.BreakerEvent{Key: "https://b.example:443", State: "closed"})
	expected := `
# HELP durable_breakers_open Flow breakers open in this process, by origin (MaxOrigins of them, then other): 1 while open, 0 once closed.
# TYPE durable_breakers_open gauge
durable_breakers_open{namespace="ns",origin="https://a.example:443"} 1
durable_breakers_open{namespace="ns",origin="https://b.example:443"} 0
`
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected), "durable_breakers_open"))
}

// 10,000 distinct origins make at most MaxOrigins+1 series per outcome and
// status class, and per breaker gauge: the first MaxOrigins origins seen,
// then "other", which counts the rest.
func TestOriginCardinalityBounded(t *testing.T) {
	const k = 5
	m := New("ns", MaxOrigins(k))
	reg := registry(t, m)
	o := m.Observer()
	for i := range 10000 {
		origin := fmt.Sprintf("https://h%d.example:443", i) // as durable.HTTPOrigin spells it
		o.HandlerFinished(durable.FinishEvent{Task: hook(t, origin+"/hook"), Outcome: "retry", Result: durable.Result{Code: 500}})
		o.BreakerChanged(durable.BreakerEvent{Key: origin, State: "open"})
	}
	n, err := testutil.GatherAndCount(reg, "durable_deliveries_total")
	require.NoError(t, err)
	assert.Equal(t, k+1, n)
	n, err = testutil.GatherAndCount(reg, "durable_breakers_open")
	require.NoError(t, err)
	assert.Equal(t, k+1, n)
	assert.Equal(t, float64(10000-k), testutil.ToFloat64(m.deliveries.WithLabelValues("retry", "5xx", otherOrigin)))
	assert.Equal(t, float64(10000-k), testutil.ToFloat64(m.breakers.WithLabelValues(otherOrigin)))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.breakers.WithLabelValues("https://h0.example:443")))
}
