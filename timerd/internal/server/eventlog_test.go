package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
)

// lines is a slog.Handler that keeps every record, for counting lines.
type lines struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *lines) Enabled(context.Context, slog.Level) bool { return true }
func (l *lines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.recs = append(l.recs, r.Clone())
	l.mu.Unlock()
	return nil
}
func (l *lines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *lines) WithGroup(string) slog.Handler      { return l }

// count is the number of lines with message msg.
func (l *lines) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.recs {
		if r.Message == msg {
			n++
		}
	}
	return n
}

// last is the last line with message msg, its attributes by key.
func (l *lines) last(t *testing.T, msg string) (slog.Level, map[string]string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.recs) - 1; i >= 0; i-- {
		if r := l.recs[i]; r.Message == msg {
			attrs := map[string]string{}
			r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
			return r.Level, attrs
		}
	}
	t.Fatalf("no line %q", msg)
	return 0, nil
}

// fakeClock is a settable now.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newEventLogForTest() (*eventLog, *lines, *fakeClock) {
	rec := &lines{}
	clock := &fakeClock{t: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}
	return newEventLog(slog.New(rec), "postgres", clock.now), rec, clock
}

func httpTask(t *testing.T, key, url string, attempt int) durable.Task {
	t.Helper()
	p, err := durable.EncodeHTTPTask(durable.HTTPTask{Method: "POST", URL: url})
	require.NoError(t, err)
	return durable.Task{Key: key, Type: durable.HTTPTaskType, Payload: p, Attempt: attempt}
}

// A dead task is a WARN line with its key, origin, status, attempt and
// error; 1000 deaths at once write deathBurst lines, and the next allowed
// line says how many were left out.
func TestEventLogTaskDied(t *testing.T) {
	l, rec, clock := newEventLogForTest()
	die := func(i int) {
		l.HandlerFinished(durable.FinishEvent{Task: httpTask(t, "k", "http://Example.com/hook", 3), Outcome: "dead",
			Error: "404 Not Found", Result: durable.Result{Code: 404}})
	}
	die(0)
	level, a := rec.last(t, "task died")
	assert.Equal(t, slog.LevelWarn, level)
	assert.Equal(t, map[string]string{"key": "k", "origin": "http://example.com:80", "status": "404", "attempt": "3", "err": "404 Not Found"}, a)

	for i := range 999 {
		die(i)
	}
	assert.Equal(t, deathBurst, rec.count("task died"), "a burst, then nothing until a token comes")
	clock.advance(deathEvery)
	die(0)
	assert.Equal(t, deathBurst+1, rec.count("task died"))
	_, a = rec.last(t, "task died")
	assert.Equal(t, "990", a["suppressed"], "the lines left out since the last one")

	// Other outcomes are not deaths.
	l.HandlerFinished(durable.FinishEvent{Task: httpTask(t, "k", "http://example.com/", 1), Outcome: "retry"})
	assert.Equal(t, deathBurst+1, rec.count("task died"))
}

// A breaker that opens is a WARN line with the origin and why; one that
// closes a line too.
func TestEventLogBreaker(t *testing.T) {
	l, rec, clock := newEventLogForTest()
	until := clock.now().Add(30 * time.Second)
	l.BreakerChanged(durable.BreakerEvent{Key: "https://api.example.com:443", State: "open", Failures: 5, Error: "503 Service Unavailable", OpenUntil: until})
	level, a := rec.last(t, "breaker open")
	assert.Equal(t, slog.LevelWarn, level)
	assert.Equal(t, "https://api.example.com:443", a["origin"])
	assert.Equal(t, "5", a["failures"])
	assert.Equal(t, "503 Service Unavailable", a["err"])
	assert.Equal(t, "30s", a["for"])

	l.BreakerChanged(durable.BreakerEvent{Key: "https://api.example.com:443", State: "closed"})
	_, a = rec.last(t, "breaker closed")
	assert.Equal(t, "https://api.example.com:443", a["origin"])
	assert.Equal(t, "probe succeeded", a["why"])

	for range 1000 {
		l.BreakerChanged(durable.BreakerEvent{Key: "o", State: "open", Failures: 1})
	}
	assert.LessOrEqual(t, rec.count("breaker open")+rec.count("breaker closed"), breakerBurst, "bounded")
}

// A task that Complete kills (a receiver's /fail at the last attempt, or
// permanent) is a "task died" line like any other death, from the same
// budget: a storm of them through the API writes deathBurst lines, and a
// handler's death after it is refused too. Other completions are not
// deaths. Issue 31: these deaths were not logged at all.
func TestEventLogCompletedDeath(t *testing.T) {
	l, rec, _ := newEventLogForTest()
	l.Completed(durable.CompleteEvent{Key: "k", Attempt: 3, Outcome: "dead", Error: "the receiver reported a failure", Code: durable.SettleDead})
	level, a := rec.last(t, "task died")
	assert.Equal(t, slog.LevelWarn, level)
	assert.Equal(t, map[string]string{"key": "k", "attempt": "3", "err": "the receiver reported a failure", "via": "complete"}, a)

	for _, c := range []durable.SettleCode{durable.SettleDone, durable.SettleRetry, durable.SettlePostponed, durable.SettleCancelled} {
		l.Completed(durable.CompleteEvent{Key: "k", Attempt: 1, Outcome: "dead", Code: c})
	}
	assert.Equal(t, 1, rec.count("task died"), "only what the store made dead")

	for range 100 {
		l.Completed(durable.CompleteEvent{Key: "k", Attempt: 3, Outcome: "dead", Code: durable.SettleDead})
	}
	l.HandlerFinished(durable.FinishEvent{Task: httpTask(t, "h", "http://example.com/", 1), Outcome: "dead"})
	assert.Equal(t, deathBurst, rec.count("task died"), "one budget for every death")
}

// A 202 delivery is a line of its own: "No delivery yet" hid it.
func TestEventLogDetached(t *testing.T) {
	l, rec, _ := newEventLogForTest()
	l.HandlerFinished(durable.FinishEvent{Task: httpTask(t, "d", "http://example.com/", 1), Outcome: "detach",
		Result: durable.Result{Code: 202}, Duration: 2 * time.Millisecond})
	level, a := rec.last(t, "delivery detached")
	assert.Equal(t, slog.LevelInfo, level)
	assert.Equal(t, "d", a["key"])
	assert.Equal(t, "202", a["status"])
	assert.Equal(t, "2ms", a["took"])
}

// A store outage: the first failure is a line, the next ones only as the
// backoff allows (1s, 2s, 4s... up to storeLogMax between lines), and the
// first success after them one line saying the store is back. Issue 31: 6
// WARN lines a second while PostgreSQL was down.
func TestEventLogStoreOutage(t *testing.T) {
	l, rec, clock := newEventLogForTest()
	down := errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	// 4 failures a second (a claim every 250ms, as Run retries) for 10 minutes.
	for range 10 * 60 * 4 {
		l.storeFailed("claim", down)
		clock.advance(250 * time.Millisecond)
	}
	assert.Equal(t, 1, rec.count("store unavailable"))
	// Then at 1, 3, 7, 15, 31 and 63s, and every storeLogMax (60s) after:
	// 14 lines in 10 minutes, not 2400.
	assert.Equal(t, 14, rec.count("store still unavailable"))
	level, a := rec.last(t, "store still unavailable")
	assert.Equal(t, slog.LevelWarn, level)
	assert.Equal(t, "postgres", a["store"])
	assert.NotEmpty(t, a["failures"])

	assert.Zero(t, rec.count("store available again"))
	l.Claimed(durable.ClaimEvent{})
	l.Claimed(durable.ClaimEvent{})
	assert.Equal(t, 1, rec.count("store available again"), "one line when it is back")
	_, a = rec.last(t, "store available again")
	assert.Equal(t, "10m0s", a["down"])
	assert.Equal(t, "2400", a["failures"])

	// A failed claim event is not a success.
	l.storeFailed("claim", down)
	l.Claimed(durable.ClaimEvent{Err: down})
	assert.Equal(t, 1, rec.count("store available again"))
	l.Settled(durable.SettleEvent{})
	assert.Equal(t, 2, rec.count("store available again"))
}
