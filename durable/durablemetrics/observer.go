package durablemetrics

import (
	"github.com/go-timingwheel/timingwheel/durable"
)

// Observer returns the durable.Observer that feeds m: set it as the
// Options.Observer of the namespace's Queues. Each event costs a few atomic
// additions.
func (m *Metrics) Observer() durable.Observer { return observer{m} }

// observer is Metrics seen as a durable.Observer; a type of its own, so
// that the Observer methods are not part of Metrics' API.
type observer struct{ m *Metrics }

// opStats labels a failed read of the gauges, beside durable's StoreOps.
const opStats = "stats"

// The label values, created at New so that every series exists from the
// first scrape, at zero. handlerOutcomes are FinishEvent.Outcome's
// spellings; an outcome newer than this list still gets its series, at its
// first event.
var (
	addModes        = []string{"add", "replace"}
	settleResults   = []string{"done", "retried", "dead", "cancelled", "released", "postponed", "rejected"}
	errorOps        = []string{string(durable.OpAdd), string(durable.OpClaim), string(durable.OpSettle), string(durable.OpExtend), opStats}
	handlerOutcomes = []string{"done", "retry", "dead", "release", "later", "detach"}
)

func (o observer) TasksAdded(e durable.AddEvent) {
	mode := "add"
	if e.Replace {
		mode = "replace"
	}
	o.m.added.WithLabelValues(mode).Add(float64(e.Stored))
}

// Claimed times successful round trips only: a failed one is counted by
// StoreError, and its time (often a timeout) says nothing of the store's
// speed.
func (o observer) Claimed(e durable.ClaimEvent) {
	if e.Err == nil {
		o.m.claim.Observe(e.Duration.Seconds())
	}
}

func (o observer) DeliveryStarted(e durable.StartEvent) {
	o.m.fired.Inc()
	o.m.lateness.Observe(e.Lateness.Seconds())
}

func (o observer) HandlerFinished(e durable.FinishEvent) {
	h, ok := o.m.handlerBy[e.Outcome]
	if !ok { // an outcome newer than this package
		h = o.m.handler.WithLabelValues(e.Outcome)
	}
	h.Observe(e.Duration.Seconds())
	o.m.deliveries.WithLabelValues(e.Outcome, statusClass(e.Result.Code), o.m.origins.label(o.m.origins.key(e.Task))).Inc()
}

// BreakerChanged moves the breaker gauge of e's key, once per open and close.
func (o observer) BreakerChanged(e durable.BreakerEvent) {
	open := e.State == "open"
	if !o.m.open.set(e.Key, open) {
		return
	}
	g := o.m.breakers.WithLabelValues(o.m.origins.label(e.Key))
	if open {
		g.Inc()
	} else {
		g.Dec()
	}
}

func (o observer) Settled(e durable.SettleEvent) {
	if e.Err != nil {
		return // counted by StoreError
	}
	o.m.settle.Observe(e.Duration.Seconds())
	results := [...]struct {
		name string
		n    int
	}{{"done", e.Done}, {"retried", e.Retried}, {"dead", e.Dead}, {"cancelled", e.Cancelled}, {"released", e.Released}, {"postponed", e.Postponed}, {"rejected", e.Rejected}}
	for _, r := range results {
		if r.n > 0 {
			o.m.settled.WithLabelValues(r.name).Add(float64(r.n))
		}
	}
}

func (o observer) DeadTrimmed(e durable.TrimEvent) {
	o.m.trimmed.Add(float64(e.Tasks))
}

func (o observer) RetainedTrimmed(e durable.TrimEvent) {
	o.m.kept.Add(float64(e.Tasks))
}

func (o observer) StoreError(e durable.StoreErrorEvent) {
	o.m.errors.WithLabelValues(string(e.Op)).Inc()
}

// Completed counts nothing more: Complete's settle is counted by Settled,
// and its delivery by HandlerFinished (outcome "detach").
func (o observer) Completed(durable.CompleteEvent) {}
