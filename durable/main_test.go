package durable

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// patience bounds every wait of a test on something that should happen soon
// (a delivery, a callback, a goroutine): generous, so that a loaded machine
// never trips it, and finite, so that a broken feature fails the test with
// a message instead of hanging it.
const patience = 30 * time.Second

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

// awaitDone calls wait (a WaitGroup's Wait, say) and fails t if it has not
// returned within patience.
func awaitDone(t testing.TB, what string, wait func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	await(t, done, what)
}

// recorder is a Handler that records deliveries and answers with reply.
type recorder struct {
	mu    sync.Mutex
	seen  []Task
	reply func(ctx context.Context, t Task) error
}

func (r *recorder) handle(ctx context.Context, t Task) error {
	r.mu.Lock()
	r.seen = append(r.seen, t)
	r.mu.Unlock()
	if r.reply == nil {
		return nil
	}
	return r.reply(ctx, t)
}

func (r *recorder) tasks() []Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Task(nil), r.seen...)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}
