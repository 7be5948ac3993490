package durable_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/durable/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var _ durable.Observer = durable.NoopObserver{}

// events is an durable.Observer that keeps every event.
type events struct {
	durable.NoopObserver // so that a new method does not break this test
	mu                   sync.Mutex
	added                []durable.AddEvent
	claims               []durable.ClaimEvent
	started              []durable.StartEvent
	finished             []durable.FinishEvent
	settles              []durable.SettleEvent
	errs                 []durable.StoreErrorEvent
	breakers             []durable.BreakerEvent
	completed            []durable.CompleteEvent
}

func (e *events) TasksAdded(x durable.AddEvent) {
	e.mu.Lock()
	e.added = append(e.added, x)
	e.mu.Unlock()
}
func (e *events) Claimed(x durable.ClaimEvent) {
	e.mu.Lock()
	e.claims = append(e.claims, x)
	e.mu.Unlock()
}
func (e *events) DeliveryStarted(x durable.StartEvent) {
	e.mu.Lock()
	e.started = append(e.started, x)
	e.mu.Unlock()
}
func (e *events) HandlerFinished(x durable.FinishEvent) {
	e.mu.Lock()
	e.finished = append(e.finished, x)
	e.mu.Unlock()
}
func (e *events) Settled(x durable.SettleEvent) {
	e.mu.Lock()
	e.settles = append(e.settles, x)
	e.mu.Unlock()
}
func (e *events) StoreError(x durable.StoreErrorEvent) {
	e.mu.Lock()
	e.errs = append(e.errs, x)
	e.mu.Unlock()
}

func (e *events) Completed(x durable.CompleteEvent) {
	e.mu.Lock()
	e.completed = append(e.completed, x)
	e.mu.Unlock()
}

// settled sums the settle events' results.
func (e *events) settled() durable.SettleEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	var s durable.SettleEvent
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
	ev := &events{}
	q := newQueue(t, 1, durable.Options{Observer: ev, Backoff: func(int) time.Duration { return 0 }})
	ctx := context.Background()
	now := time.Now() // memstore's clock

	// Added: three new tasks, one duplicate, one replace.
	added, err := q.AddBatch(ctx, []durable.Item{
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
	assert.Equal(t, []durable.AddEvent{{Stored: 3}, {Skipped: 1}, {Replace: true, Stored: 1}}, ev.added)
	ev.mu.Unlock()

	const work = 20 * time.Millisecond
	var flakyFailed atomic.Bool
	rec := &recorder{reply: func(ctx context.Context, tk durable.Task) error {
		time.Sleep(work)
		switch {
		case tk.Key == "bad":
			return durable.Permanent(errors.New("no"))
		case tk.Key == "flaky" && flakyFailed.CompareAndSwap(false, true):
			return errors.New("once")
		}
		return nil
	}}
	stop := run(t, q, rec.handle)
	eventually(t, "four deliveries settled", func() bool { return ev.settled().Tasks == 4 })
	stop()

	assert.Equal(t, durable.SettleEvent{Tasks: 4, Done: 2, Retried: 1, Dead: 1}, ev.settled())
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
	// "ok" was due 2s before the store's time it was added at: by the
	// store's clock it started at least that late, less a millisecond: Add
	// rounds a due time up, the store's clock reads rounded down.
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

// A handler that outlives its timeout is reported when the timeout settles
// its task, not when (if ever) it returns.
func TestObserverSeesHandlerTimeout(t *testing.T) {
	ev := &events{}
	q := newQueue(t, 1, durable.Options{Observer: ev, HandlerTimeout: 200 * time.Millisecond, MaxAttempts: 1})
	_, err := q.Add(context.Background(), "stuck", nil, time.Now())
	require.NoError(t, err)
	release := make(chan struct{})
	stop := run(t, q, func(context.Context, durable.Task) error {
		<-release // ignores its context
		return nil
	})
	defer stop()
	defer close(release)
	eventually(t, "the timed-out delivery settled", func() bool { return ev.settled().Dead == 1 })
	ev.mu.Lock()
	defer ev.mu.Unlock()
	require.Len(t, ev.finished, 1)
	f := ev.finished[0]
	assert.Equal(t, "dead", f.Outcome, "a failed last attempt")
	assert.Contains(t, f.Error, durable.ErrHandlerTimeout.Error())
	assert.GreaterOrEqual(t, f.Duration, 200*time.Millisecond)
}

// Each Complete the store accepts is reported with what it decided and
// what the store did, a death included (a failure at the last attempt, a
// Permanent one at any), which no HandlerFinished reports: issue 31, a task
// failed through timerd's /fail at its last attempt died unlogged. A stale
// Complete is not reported.
func TestObserverSeesCompletions(t *testing.T) {
	ev := &events{}
	q := newQueue(t, 1, durable.Options{Observer: ev, MaxAttempts: 2})
	ctx := context.Background()
	for _, k := range []string{"ok", "retried", "permanent"} {
		_, err := q.Add(ctx, k, nil, time.Now())
		require.NoError(t, err)
	}
	_, err := q.Add(ctx, "last", nil, time.Now(), durable.TaskMaxAttempts(1))
	require.NoError(t, err)
	tokens := make(chan durable.Task, 4)
	defer run(t, q, func(_ context.Context, task durable.Task) error {
		tokens <- task
		return durable.Detach(time.Hour)
	})()
	byKey := map[string]string{}
	for range 4 {
		task := await(t, tokens, "a detached delivery")
		byKey[task.Key] = task.Token
	}
	// Complete may come before the detach's Extend; either way it counts.
	for _, c := range []struct {
		key    string
		result error
		want   durable.CompleteEvent
	}{
		{"ok", nil, durable.CompleteEvent{Key: "ok", Outcome: "done", Code: durable.SettleDone}},
		{"retried", errors.New("busy"), durable.CompleteEvent{Key: "retried", Attempt: 1, Outcome: "retry", Error: "busy", Code: durable.SettleRetry}},
		{"last", errors.New("still busy"), durable.CompleteEvent{Key: "last", Attempt: 1, Outcome: "dead", Error: "still busy", Code: durable.SettleDead}},
		{"permanent", durable.Permanent(errors.New("no such order")), durable.CompleteEvent{Key: "permanent", Attempt: 1, Outcome: "dead", Error: "no such order", Code: durable.SettleDead}},
	} {
		code, err := q.Complete(ctx, c.key, byKey[c.key], c.result)
		require.NoError(t, err, c.key)
		require.Equal(t, c.want.Code, code, c.key)
		ev.mu.Lock()
		got := append([]durable.CompleteEvent(nil), ev.completed...)
		ev.mu.Unlock()
		require.NotEmpty(t, got, c.key)
		assert.Equal(t, c.want, got[len(got)-1], c.key)
	}
	_, err = q.Complete(ctx, "ok", byKey["ok"], nil)
	require.ErrorIs(t, err, durable.ErrStaleToken)
	ev.mu.Lock()
	defer ev.mu.Unlock()
	assert.Len(t, ev.completed, 4, "a stale Complete is not reported")
	for _, f := range ev.finished {
		assert.Equal(t, "detach", f.Outcome, "Complete's deaths are not HandlerFinished's")
	}
}

// trims is an durable.Observer that sums DeadTrimmed and RetainedTrimmed.
type trims struct {
	durable.NoopObserver
	n, kept atomic.Int64
}

func (tr *trims) DeadTrimmed(e durable.TrimEvent)     { tr.n.Add(int64(e.Tasks)) }
func (tr *trims) RetainedTrimmed(e durable.TrimEvent) { tr.kept.Add(int64(e.Tasks)) }

// Retained tasks forgotten by a settle or a Cancel, past MaxRetained or at
// the end of their retention, reach the durable.Observer, as doc.go says they are
// counted: a uniqueness window that ends early is not silent.
func TestRetainedTrimsReachTheObserver(t *testing.T) {
	tr := &trims{}
	q := newQueue(t, 1, durable.Options{Retention: time.Hour, MaxRetained: 1, Observer: tr})
	ctx := context.Background()
	for i := range 3 {
		_, err := q.Add(ctx, fmt.Sprint("k", i), nil, time.Now().Add(-time.Second))
		require.NoError(t, err)
	}
	stop := run(t, q, func(context.Context, durable.Task) error { return nil })
	eventually(t, "three tasks done", func() bool { return totals(t, q).Due == 0 && totals(t, q).InFlight == 0 })
	stop()
	assert.Equal(t, int64(2), tr.kept.Load(), "the settles pushed the oldest two out")
	_, err := q.Add(ctx, "c", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	ok, err := q.Cancel(ctx, "c") // retained as cancelled, the done one pushed out
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(3), tr.kept.Load())
	assert.Equal(t, durable.ShardStats{Retained: 1}, totals(t, q))
}

// downStore is a store every call of which fails, as one whose server is
// down: Add's requests carry the error, Claim returns it.
type downStore struct{ *memstore.Store }

var errDown = errors.New("store down")

func (downStore) Add(_ context.Context, reqs []*durable.AddRequest) int64 {
	for _, r := range reqs {
		r.Err = errDown
	}
	return -1
}

func (downStore) Claim(context.Context, int, int, time.Duration, durable.Limits) (durable.Claimed, error) {
	return durable.Claimed{}, errDown
}

// Failed store calls are reported with their operation, and a stopping
// Run's interrupted claim is not a store error.
func TestObserverSeesStoreErrors(t *testing.T) {
	ev := &events{}
	q, err := durable.New(downStore{memstore.New(memstore.Options{Partitions: 2})},
		durable.Options{Observer: ev, OnError: func(error) {}})
	require.NoError(t, err)
	_, err = q.Add(context.Background(), "k", nil, time.Now())
	require.ErrorIs(t, err, errDown)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	require.NoError(t, q.Run(ctx, func(context.Context, durable.Task) error { return nil }))

	ev.mu.Lock()
	defer ev.mu.Unlock()
	ops := map[durable.StoreOp]int{}
	for _, e := range ev.errs {
		ops[e.Op]++
		assert.ErrorIs(t, e.Err, errDown)
	}
	assert.Equal(t, 1, ops[durable.OpAdd])
	assert.GreaterOrEqual(t, ops[durable.OpClaim], 2, "each failed claim")
	assert.Equal(t, len(ev.errs), ops[durable.OpAdd]+ops[durable.OpClaim])
	assert.Empty(t, ev.added, "a failed add is an error, not an add")
	for _, cl := range ev.claims {
		assert.Error(t, cl.Err)
	}
	// One error per failed claim; the last may fail as Run stops, after the
	// Claimed event and before Run's report, which leaves it out.
	assert.InDelta(t, len(ev.claims), ops[durable.OpClaim], 1, "one error per failed claim")
}

// Dead tasks a claim's reaping drops past MaxDead reach the Observer too,
// not only a settle's: three leases run out on their last attempt in a
// partition that keeps one dead task.
func TestClaimReportsDeadTrimmed(t *testing.T) {
	tr := &trims{}
	q := newQueue(t, 1, durable.Options{MaxDead: 1, MaxAttempts: 1, Lease: durable.MinLease, Observer: tr})
	ctx := context.Background()
	for i := range 3 {
		_, err := q.Add(ctx, fmt.Sprint("k", i), nil, time.Now().Add(-time.Second))
		require.NoError(t, err)
	}
	// Claimed by a worker that then vanishes, its deliveries confirmed (as
	// by a heartbeat), so that their expiry counts the attempt.
	st := q.Store()
	got, err := st.Claim(ctx, 0, 3, durable.MinLease, q.Limits())
	require.NoError(t, err)
	require.Len(t, got.Tasks, 3)
	var leases []durable.Lease
	for _, ct := range got.Tasks {
		leases = append(leases, durable.Lease{Key: ct.Key, Token: ct.Token})
	}
	_, err = st.Extend(ctx, 0, durable.MinLease, leases)
	require.NoError(t, err)
	// A Run's claims reap the leases once they run out, and report what
	// the reaping trimmed.
	run(t, q, func(context.Context, durable.Task) error { return nil })
	eventually(t, "the leases reaped and the trims reported", func() bool {
		return totals(t, q).InFlight == 0 && tr.n.Load() == 2
	})
	assert.Equal(t, durable.ShardStats{Dead: 1}, totals(t, q))
	assert.Equal(t, int64(2), tr.n.Load())
}
