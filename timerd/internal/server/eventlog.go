package server

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// eventLog is the durable.Observer that writes the lines an operator needs
// (issue 31: in two minutes 29 tasks died and a breaker opened, and the log
// said nothing): a task that died (by its handler's result, or by Complete:
// a receiver's /fail), a breaker that opened or closed, a 202
// delivery, a store outage and its end. Every kind of line has a budget, so
// that a storm of events writes a bounded number of lines:
//
//   - deaths: a token bucket of deathBurst lines, one more every deathEvery;
//     the next line written says how many were left out ("suppressed");
//   - breakers: the same, with breakerBurst and breakerEvery, apart from the
//     deaths so that these cannot hide a breaker;
//   - 202 deliveries (info): detachBurst, one more every detachEvery;
//   - the store: one line at the first failure, then one as a backoff
//     allows (1s, doubling, at most storeLogMax apart) with the failures
//     counted, and one line at the first success after them.
//
// It is safe for concurrent use, as an Observer must be.
type eventLog struct {
	durable.NoopObserver
	log   *slog.Logger
	store string // the store's kind, for the store's lines
	now   func() time.Time

	mu                       sync.Mutex
	deaths, breakers, detach budget
	outage                   outage
}

// The budgets. 10 lines in a burst and 10 a minute after it keep a log
// readable through a storm (a breaker's cool-down is 30s by default, so one
// origin's flapping breaker stays well inside its budget).
const (
	deathBurst   = 10
	deathEvery   = 6 * time.Second
	breakerBurst = 10
	breakerEvery = 6 * time.Second
	detachBurst  = 20
	detachEvery  = time.Second
	// storeLogFirst is the pause after the first line of an outage; each
	// line doubles it, up to storeLogMax.
	storeLogFirst = time.Second
	storeLogMax   = time.Minute
)

func newEventLog(log *slog.Logger, store string, now func() time.Time) *eventLog {
	l := &eventLog{log: log, store: store, now: now}
	t := now()
	l.deaths = budget{burst: deathBurst, every: deathEvery, tokens: deathBurst, at: t}
	l.breakers = budget{burst: breakerBurst, every: breakerEvery, tokens: breakerBurst, at: t}
	l.detach = budget{burst: detachBurst, every: detachEvery, tokens: detachBurst, at: t}
	return l
}

// budget is a token bucket of lines: burst tokens, one more every every.
type budget struct {
	burst      int
	every      time.Duration
	tokens     int
	at         time.Time // when tokens was last brought up to date
	suppressed int       // lines refused since the last one allowed
}

// take reports whether a line may be written at now and, if so, how many
// were refused before it.
func (b *budget) take(now time.Time) (ok bool, suppressed int) {
	if n := int(now.Sub(b.at) / b.every); n > 0 {
		b.tokens = min(b.burst, b.tokens+n)
		b.at = b.at.Add(time.Duration(n) * b.every)
	}
	if b.tokens == 0 {
		b.suppressed++
		return false, 0
	}
	if b.tokens == b.burst {
		b.at = now // a full bucket does not save up time
	}
	b.tokens--
	suppressed, b.suppressed = b.suppressed, 0
	return true, suppressed
}

// outage is the state of a store outage: since when, how many failures,
// when the next line may be written and the pause after it.
type outage struct {
	down     bool
	since    time.Time
	failures int
	next     time.Time
	pause    time.Duration
}

// line writes msg at level if b allows, with the suppressed count.
func (l *eventLog) line(b *budget, level slog.Level, msg string, attrs ...slog.Attr) {
	l.mu.Lock()
	ok, suppressed := b.take(l.now())
	l.mu.Unlock()
	if !ok {
		return
	}
	if suppressed > 0 {
		attrs = append(attrs, slog.Int("suppressed", suppressed))
	}
	l.log.LogAttrs(context.Background(), level, msg, attrs...) // an Observer gets no context
}

func (l *eventLog) HandlerFinished(e durable.FinishEvent) {
	switch e.Outcome {
	case "dead":
		l.died(append(taskAttrs(e), slog.Int("attempt", e.Task.Attempt), slog.String("err", e.Error)))
	case "detach":
		l.line(&l.detach, slog.LevelInfo, "delivery detached", append(taskAttrs(e),
			slog.Int("attempt", e.Task.Attempt), slog.Duration("took", e.Duration))...)
	}
}

// Completed logs a task that Complete killed: a receiver that answered 202
// failed it through /fail at its last attempt, or for good. Complete reads
// no payload, so the line has no origin nor status (the delivery's was the
// 202 of its "delivery detached" line); via says where the death came from.
func (l *eventLog) Completed(e durable.CompleteEvent) {
	if e.Code == durable.SettleDead {
		l.died([]slog.Attr{slog.String("key", e.Key), slog.Int("attempt", e.Attempt),
			slog.String("err", e.Error), slog.String("via", "complete")})
	}
}

// died writes a "task died" line within the deaths' budget, whichever way
// the task died: every death shares one budget and one spelling.
func (l *eventLog) died(attrs []slog.Attr) {
	l.line(&l.deaths, slog.LevelWarn, "task died", attrs...)
}

// taskAttrs are the key, the origin of an HTTP task and its status code, if
// any.
func taskAttrs(e durable.FinishEvent) []slog.Attr {
	a := []slog.Attr{slog.String("key", e.Task.Key)}
	if o := durable.HTTPOrigin(e.Task); o != "" {
		a = append(a, slog.String("origin", o))
	}
	if e.Result.Code != 0 {
		a = append(a, slog.String("status", strconv.Itoa(e.Result.Code)))
	}
	return a
}

func (l *eventLog) BreakerChanged(e durable.BreakerEvent) {
	if e.State == "open" {
		l.line(&l.breakers, slog.LevelWarn, "breaker open", slog.String("origin", e.Key),
			slog.Int("failures", e.Failures), slog.String("err", e.Error),
			slog.Duration("for", e.OpenUntil.Sub(l.now()).Round(time.Millisecond)))
		return
	}
	l.line(&l.breakers, slog.LevelInfo, "breaker closed", slog.String("origin", e.Key),
		slog.String("why", "probe succeeded"))
}

// storeFailed counts a failed store call of op: Run's claims, settles and
// lease extensions (Options.OnError) and Add's (StoreError).
func (l *eventLog) storeFailed(op string, err error) {
	l.mu.Lock()
	now := l.now()
	o := &l.outage
	o.failures++
	first := !o.down
	if first {
		*o = outage{down: true, since: now, failures: 1, pause: storeLogFirst}
	} else if now.Before(o.next) {
		l.mu.Unlock()
		return
	}
	o.next = now.Add(o.pause)
	o.pause = min(2*o.pause, storeLogMax)
	failures, since := o.failures, now.Sub(o.since)
	l.mu.Unlock()
	if first {
		l.log.Warn("store unavailable", "store", l.store, "op", op, "err", err)
		return
	}
	l.log.Warn("store still unavailable", "store", l.store, "op", op, "err", err,
		"failures", failures, "for", since.Round(time.Second))
}

// storeAnswered ends an outage: a store call succeeded.
func (l *eventLog) storeAnswered() {
	l.mu.Lock()
	o := l.outage
	if !o.down {
		l.mu.Unlock()
		return
	}
	l.outage = outage{}
	down := l.now().Sub(o.since)
	l.mu.Unlock()
	l.log.Info("store available again", "store", l.store, "down", down.Round(time.Second), "failures", o.failures)
}

func (l *eventLog) StoreError(e durable.StoreErrorEvent) {
	if e.Op == durable.OpAdd { // Run's own failures come through OnError
		l.storeFailed(string(e.Op), e.Err)
	}
}

func (l *eventLog) Claimed(e durable.ClaimEvent) {
	if e.Err == nil {
		l.storeAnswered()
	}
}

func (l *eventLog) Settled(e durable.SettleEvent) {
	if e.Err == nil {
		l.storeAnswered()
	}
}

func (l *eventLog) TasksAdded(durable.AddEvent) { l.storeAnswered() }

// observers sends each event to every Observer in turn: durablemetrics',
// the eventLog and the dashboard's Throughput.
type observers []durable.Observer

func (os observers) TasksAdded(e durable.AddEvent) {
	for _, o := range os {
		o.TasksAdded(e)
	}
}

func (os observers) Claimed(e durable.ClaimEvent) {
	for _, o := range os {
		o.Claimed(e)
	}
}

func (os observers) DeliveryStarted(e durable.StartEvent) {
	for _, o := range os {
		o.DeliveryStarted(e)
	}
}

func (os observers) HandlerFinished(e durable.FinishEvent) {
	for _, o := range os {
		o.HandlerFinished(e)
	}
}

func (os observers) Settled(e durable.SettleEvent) {
	for _, o := range os {
		o.Settled(e)
	}
}

func (os observers) DeadTrimmed(e durable.TrimEvent) {
	for _, o := range os {
		o.DeadTrimmed(e)
	}
}

func (os observers) RetainedTrimmed(e durable.TrimEvent) {
	for _, o := range os {
		o.RetainedTrimmed(e)
	}
}

func (os observers) StoreError(e durable.StoreErrorEvent) {
	for _, o := range os {
		o.StoreError(e)
	}
}

func (os observers) BreakerChanged(e durable.BreakerEvent) {
	for _, o := range os {
		o.BreakerChanged(e)
	}
}

func (os observers) Completed(e durable.CompleteEvent) {
	for _, o := range os {
		o.Completed(e)
	}
}
