package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var _ Observer = NoopObserver{}

// events is an Observer that keeps every event.
type events struct {
	NoopObserver // so that a new method does not break this test
	mu           sync.Mutex
	added        []AddEvent
	claims       []ClaimEvent
	started      []StartEvent
	finished     []FinishEvent
	settles      []SettleEvent
	errs         []StoreErrorEvent
}

func (e *events) TasksAdded(x AddEvent) { e.mu.Lock(); e.added = append(e.added, x); e.mu.Unlock() }
func (e *events) Claimed(x ClaimEvent)  { e.mu.Lock(); e.claims = append(e.claims, x); e.mu.Unlock() }
func (e *events) DeliveryStarted(x StartEvent) {
	e.mu.Lock()
	e.started = append(e.started, x)
	e.mu.Unlock()
}
func (e *events) HandlerFinished(x FinishEvent) {
	e.mu.Lock()
	e.finished = append(e.finished, x)
	e.mu.Unlock()
}
func (e *events) Settled(x SettleEvent) { e.mu.Lock(); e.settles = append(e.settles, x); e.mu.Unlock() }
func (e *events) StoreError(x StoreErrorEvent) {
	e.mu.Lock()
	e.errs = append(e.errs, x)
	e.mu.Unlock()
}

// settled sums the settle events' results.
func (e *events) settled() SettleEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	var s SettleEvent
	for _, x := range e.settles {
		s.Tasks += x.Tasks
		s.Done += x.Done
		s.Retried += x.Retried
		s.Dead += x.Dead
		s.Cancelled += x.Cancelled
		s.Released += x.Released
		s.Rejected += x.Rejected
	}
	return s
}

// One task of each fate, with every event checked: what was added, each
// delivery's start and lateness, each handler's outcome and time, and each
// settle's results.
func TestObserverSeesEveryDelivery(t *testing.T) {
	c := standalone(t)
	ev := &events{}
	q := newQueue(t, c, Options{Observer: ev, Backoff: func(int) time.Duration { return 0 }})
	ctx := context.Background()
	now := redisTime(t, c)

	// Added: three new tasks, one duplicate, one replace.
	added, err := q.AddBatch(ctx, []Item{
		{Key: "ok", At: now.Add(-2 * time.Second)},
		{Key: "flaky", At: now},
		{Key: "bad", At: now},
	})
	require.NoError(t, err)
	require.Equal(t, []bool{true, true, true}, added)
	_, err = q.Add(ctx, "ok", nil, now)
	require.NoError(t, err)
	require.NoError(t, q.Replace(ctx, "bad", []byte("x"), now))
	ev.mu.Lock()
	assert.Equal(t, []AddEvent{{Stored: 3}, {Skipped: 1}, {Replace: true, Stored: 1}}, ev.added)
	ev.mu.Unlock()

	const work = 20 * time.Millisecond
	var flakyFailed atomic.Bool
	rec := &recorder{reply: func(ctx context.Context, tk Task) error {
		time.Sleep(work)
		switch {
		case tk.Key == "bad":
			return Permanent(errors.New("no"))
		case tk.Key == "flaky" && flakyFailed.CompareAndSwap(false, true):
			return errors.New("once")
		}
		return nil
	}}
	stop := run(t, q, rec.handle)
	eventually(t, patience, "four deliveries settled", func() bool { return ev.settled().Tasks == 4 })
	stop()

	assert.Equal(t, SettleEvent{Tasks: 4, Done: 2, Retried: 1, Dead: 1}, ev.settled())
	ev.mu.Lock()
	defer ev.mu.Unlock()
	assert.Empty(t, ev.errs)

	require.Len(t, ev.started, 4)
	lateness := map[string]time.Duration{}
	for _, s := range ev.started {
		if s.Task.Attempt == 1 {
			lateness[s.Task.Key] = s.Lateness
		}
	}
	// "ok" was due 2s before the Redis time it was added at: by the Redis
	// clock it started at least that late, less a millisecond: Add rounds a
	// due time up, Redis's clock reads rounded down.
	assert.GreaterOrEqual(t, lateness["ok"], 2*time.Second-time.Millisecond)
	assert.GreaterOrEqual(t, lateness["bad"], time.Duration(0), "never early")

	outcomes := map[string][]string{}
	for _, f := range ev.finished {
		outcomes[f.Task.Key] = append(outcomes[f.Task.Key], f.Outcome)
		assert.GreaterOrEqual(t, f.Duration, work, "handler time of %s", f.Task.Key)
	}
	assert.Equal(t, map[string][]string{"ok": {"done"}, "flaky": {"retry", "done"}, "bad": {"dead"}}, outcomes)

	tasks := 0
	for _, cl := range ev.claims {
		assert.NoError(t, cl.Err)
		assert.Positive(t, cl.Duration)
		tasks += cl.Tasks
	}
	assert.Equal(t, 4, tasks, "claims leased the four deliveries")
}

// Failed Redis calls are reported with their operation, and a stopping Run's
// interrupted claim is not a Redis error.
func TestObserverSeesRedisErrors(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	ev := &events{}
	q, err := newTQ(c, Options{Namespace: "unreachable", Shards: 2, Observer: ev, OnError: func(error) {}})
	require.NoError(t, err)
	_, err = q.Add(context.Background(), "k", nil, time.Now())
	require.Error(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	require.NoError(t, q.Run(ctx, func(context.Context, Task) error { return nil }))

	ev.mu.Lock()
	defer ev.mu.Unlock()
	ops := map[StoreOp]int{}
	for _, e := range ev.errs {
		ops[e.Op]++
		assert.Error(t, e.Err)
	}
	assert.Equal(t, 1, ops[OpAdd])
	assert.GreaterOrEqual(t, ops[OpClaim], 2, "each failed claim")
	assert.Equal(t, len(ev.errs), ops[OpAdd]+ops[OpClaim])
	assert.Empty(t, ev.added, "a failed add is an error, not an add")
	for _, cl := range ev.claims {
		assert.Error(t, cl.Err)
	}
	// One error per failed claim; the last may fail as Run stops, after the
	// Claimed event and before Run's report, which leaves it out.
	assert.InDelta(t, len(ev.claims), ops[OpClaim], 1, "one error per failed claim")
}

// A handler that outlives its timeout is reported when the timeout settles
// its task, not when (if ever) it returns.
func TestObserverSeesHandlerTimeout(t *testing.T) {
	c := standalone(t)
	ev := &events{}
	q := newQueue(t, c, Options{Observer: ev, HandlerTimeout: 200 * time.Millisecond, MaxAttempts: 1})
	_, err := q.Add(context.Background(), "stuck", nil, time.Now())
	require.NoError(t, err)
	release := make(chan struct{})
	stop := run(t, q, func(context.Context, Task) error {
		<-release // ignores its context
		return nil
	})
	defer stop()
	defer close(release)
	eventually(t, patience, "the timed-out delivery settled", func() bool { return ev.settled().Dead == 1 })
	ev.mu.Lock()
	defer ev.mu.Unlock()
	require.Len(t, ev.finished, 1)
	f := ev.finished[0]
	assert.Equal(t, "dead", f.Outcome, "a failed last attempt")
	assert.Contains(t, f.Error, ErrHandlerTimeout.Error())
	assert.GreaterOrEqual(t, f.Duration, 200*time.Millisecond)
}

// trims is an Observer that sums DeadTrimmed and RetainedTrimmed.
type trims struct {
	NoopObserver
	n, kept atomic.Int64
}

func (tr *trims) DeadTrimmed(e TrimEvent)     { tr.n.Add(int64(e.Tasks)) }
func (tr *trims) RetainedTrimmed(e TrimEvent) { tr.kept.Add(int64(e.Tasks)) }

// Dead tasks a claim's reaping drops past MaxDead reach the Observer too,
// not only a settle's: three leases run out on their last attempt in a
// shard that keeps one dead task.
func TestClaimReportsDeadTrimmed(t *testing.T) {
	tr := &trims{}
	q := newQueue(t, standalone(t), Options{Shards: 1, MaxDead: 1, MaxAttempts: 1, Lease: MinLease, Observer: tr})
	ctx := context.Background()
	for i := range 3 {
		_, err := q.Add(ctx, fmt.Sprint("k", i), nil, time.Now().Add(-time.Second))
		require.NoError(t, err)
	}
	got, err := q.claim(ctx, 0, 3, MinLease)
	require.NoError(t, err)
	require.Len(t, got.tasks, 3)
	for _, d := range got.tasks {
		// Confirmed, as by a heartbeat: their expiry counts the attempt.
		require.NoError(t, q.client.HDel(ctx, q.keys[0][4], "u|"+d.task.Key).Err())
	}
	// A Run's claims reap the leases once they run out, and report what
	// the reaping trimmed.
	run(t, q, func(context.Context, Task) error { return nil })
	eventually(t, patience, "the leases reaped and the trims reported", func() bool {
		return totals(t, q).InFlight == 0 && tr.n.Load() == 2
	})
	assert.Equal(t, ShardStats{Dead: 1}, totals(t, q))
	assert.Equal(t, int64(2), tr.n.Load())
}

// Retained tasks forgotten by a settle or a Cancel, past MaxRetained or at
// the end of their retention, reach the Observer, as doc.go says they are
// counted: a uniqueness window that ends early is not silent.
func TestRetainedTrimsReachTheObserver(t *testing.T) {
	tr := &trims{}
	q := newQueue(t, standalone(t), Options{Shards: 1, Retention: time.Hour, MaxRetained: 1, Observer: tr})
	ctx := context.Background()
	for i := range 3 {
		_, err := q.Add(ctx, fmt.Sprint("k", i), nil, time.Now().Add(-time.Second))
		require.NoError(t, err)
	}
	stop := run(t, q, func(context.Context, Task) error { return nil })
	eventually(t, patience, "three tasks done", func() bool { return totals(t, q).Due == 0 && totals(t, q).InFlight == 0 })
	stop()
	assert.Equal(t, int64(2), tr.kept.Load(), "the settles pushed the oldest two out")
	_, err := q.Add(ctx, "c", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	ok, err := q.Cancel(ctx, "c") // retained as cancelled, the done one pushed out
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(3), tr.kept.Load())
	assert.Equal(t, ShardStats{Retained: 1}, totals(t, q))
}
