package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// RetryAfter(0), like an HTTP Retry-After of 0 or of a past date, waits
// the normal backoff before the next delivery, never none: the deliveries
// of a task whose receiver always answers so are spaced by the backoff,
// and, as postponements, count no attempt.
func testRetryAfterZeroWaitsTheBackoff(t *testing.T, open func(t *testing.T) durable.Store) {
	const backoff = 150 * time.Millisecond
	q := newQueue(t, open(t), durable.Options{Backoff: func(int) time.Duration { return backoff }})
	type start struct {
		at      time.Time
		attempt int
	}
	starts := make(chan start, 16)
	run(t, q, func(_ context.Context, tk durable.Task) error {
		starts <- start{time.Now(), tk.Attempt}
		return durable.RetryAfter(0)
	})
	if _, err := q.Add(context.Background(), "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	prev := await(t, starts, "the first delivery")
	for i := range 3 {
		next := await(t, starts, "a delivery after RetryAfter(0)")
		if gap := next.at.Sub(prev.at); gap < backoff {
			t.Errorf("delivery %d came %v after the one before, want at least the backoff, %v", i+2, gap, backoff)
		}
		if next.attempt != 1 {
			t.Errorf("delivery %d is attempt %d, want 1: a postponement counts no attempt", i+2, next.attempt)
		}
		prev = next
	}
}
