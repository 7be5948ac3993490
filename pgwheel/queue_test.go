package pgwheel

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/durable/storetest"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// Helpers of the tests that drive pgwheel through durable.Queue.

// newQueue is a durable.Queue on s with opts; Run's retried errors go to
// t.Log unless opts.OnError is set.
func newQueue(t *testing.T, s *Store, opts durable.Options) *durable.Queue {
	t.Helper()
	if opts.OnError == nil {
		opts.OnError = func(err error) { t.Log("OnError:", err) }
	}
	q, err := durable.New(s, opts)
	require.NoError(t, err)
	return q
}

// runQueue runs q.Run(h) until t ends; the cleanup waits for Run to return,
// at most patience.
func runQueue(t *testing.T, q *durable.Queue, h durable.Handler) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx, h) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err, "Run")
		case <-time.After(patience):
			t.Errorf("Run did not return within %v of its context ending", patience)
		}
	})
}

// otherProcess is a Store on namespace ns through a pool of its own: what
// another process sharing the namespace would hold.
func otherProcess(t *testing.T, ns string) *Store {
	t.Helper()
	pool := testPool(t, MinPoolConns)
	s, err := New(pool, ns)
	require.NoError(t, err)
	return s
}

// testPool is a pool on the run's schema, closed when t ends.
func testPool(t *testing.T, size int32) *pgxpool.Pool {
	t.Helper()
	pool, err := poolIn(testCtx(t), testSchema, size, "")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// eventually is storetest's, the one wait helper of the stores' tests.
var eventually = storetest.Eventually

// await receives from ch, failing t if nothing comes within patience.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("timed out after %v waiting for %s", patience, what)
		panic("unreachable")
	}
}

// recorder is a Handler that records each delivery with its local start
// time.
type recorder struct {
	mu      sync.Mutex
	started map[string][]started
	each    chan durable.Task // each delivery, if not nil (never blocks: buffer it)
}

type started struct {
	task durable.Task
	at   time.Time
}

func (r *recorder) handle(_ context.Context, tk durable.Task) error {
	now := time.Now()
	r.mu.Lock()
	if r.started == nil {
		r.started = map[string][]started{}
	}
	r.started[tk.Key] = append(r.started[tk.Key], started{tk, now})
	r.mu.Unlock()
	if r.each != nil {
		r.each <- tk
	}
	return nil
}

// deliveries returns the deliveries of key so far.
func (r *recorder) deliveries(key string) []started {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]started(nil), r.started[key]...)
}

// count returns how many keys were delivered at least once.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.started)
}
