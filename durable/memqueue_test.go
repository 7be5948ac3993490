package durable_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/durable/memstore"
	"github.com/go-timingwheel/timingwheel/durable/storetest"
	"github.com/stretchr/testify/require"
)

// The harness of the Queue's feature tests (package durable_test): a Queue
// on a memstore, no server needed. What a store must do is storetest's, run
// on every store; what these tests check is the Queue's (Mux, HTTP tasks,
// flow control, RetryAfter, the Observer), the same on any store.

// patience and eventually are storetest's, the one wait of every test.
const patience = storetest.Patience

var eventually = storetest.Eventually

// maxSleep is an idle Run's longest sleep without Options.PollInterval: a
// test that waits for a claim that must not come waits longer.
const maxSleep = durable.DefaultPollInterval

// newQueue returns a Queue with opts on a fresh memstore of parts partitions.
func newQueue(t testing.TB, parts int, opts durable.Options) *durable.Queue {
	t.Helper()
	q, err := durable.New(memstore.New(memstore.Options{Partitions: parts}), opts)
	require.NoError(t, err)
	return q
}

// sameStore returns another Queue, with opts, on q's store: another
// process's, which shares the tasks but not q's wake-ups.
func sameStore(t testing.TB, q *durable.Queue, opts durable.Options) *durable.Queue {
	t.Helper()
	other, err := durable.New(q.Store(), opts)
	require.NoError(t, err)
	return other
}

// run runs q.Run(h) until t ends or the returned stop is called; stop waits
// for Run to return, at most patience.
func run(t testing.TB, q *durable.Queue, h durable.Handler) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx, h) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, await(t, done, "Run to return"))
		})
	}
	t.Cleanup(stop)
	return stop
}

// await receives from ch, failing t if nothing comes within patience.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("timed out after %v waiting for %s", patience, what)
		panic("unreachable")
	}
}

// totals is Stats.Total with only the counts by place, for comparing with a
// literal.
func totals(t testing.TB, q *durable.Queue) durable.ShardStats {
	t.Helper()
	st, err := q.Stats(context.Background())
	require.NoError(t, err)
	s := st.Total
	s.Shard, s.OldestDue, s.Paused, s.States = 0, 0, false, durable.StateCounts{}
	return s
}

// recorder is a Handler that records deliveries and answers with reply.
type recorder struct {
	mu    sync.Mutex
	seen  []durable.Task
	reply func(ctx context.Context, t durable.Task) error
}

func (r *recorder) handle(ctx context.Context, t durable.Task) error {
	r.mu.Lock()
	r.seen = append(r.seen, t)
	r.mu.Unlock()
	if r.reply == nil {
		return nil
	}
	return r.reply(ctx, t)
}

func (r *recorder) tasks() []durable.Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]durable.Task(nil), r.seen...)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}
