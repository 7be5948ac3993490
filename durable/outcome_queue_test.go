package durable_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A RetryAfter delivers the task again no sooner than its delay. (Whether the
// attempt counts is the store's OutcomeLater: storetest's Settle.)
func TestRetryAfterDelays(t *testing.T) {
	q := newQueue(t, 1, durable.Options{Backoff: func(int) time.Duration { return 0 }})
	ctx := context.Background()
	const delay = 300 * time.Millisecond
	starts := make(chan time.Time, 2)
	run(t, q, func(ctx context.Context, tk durable.Task) error {
		starts <- time.Now() // memstore's clock
		if len(starts) == 1 {
			return durable.RetryAfter(delay)
		}
		return nil
	})
	_, err := q.Add(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	eventually(t, "the second delivery", func() bool { return len(starts) == 2 && totals(t, q) == durable.ShardStats{} })
	first, second := <-starts, <-starts
	assert.GreaterOrEqual(t, second.Sub(first), delay-time.Millisecond)
}

// A task delivered again carries the due time it was added with, as well as
// the current one.
func TestRedeliveryKeepsOriginalDue(t *testing.T) {
	q := newQueue(t, 1, durable.Options{Backoff: func(int) time.Duration { return 50 * time.Millisecond }})
	ctx := context.Background()
	at := time.Now().Add(-time.Minute).Truncate(time.Millisecond) // by memstore's clock
	_, err := q.Add(ctx, "k", nil, at)
	require.NoError(t, err)
	var rec recorder
	rec.reply = func(ctx context.Context, tk durable.Task) error {
		if tk.Attempt == 1 {
			return errors.New("again")
		}
		return nil
	}
	run(t, q, rec.handle)
	eventually(t, "two deliveries", func() bool { return rec.count() == 2 && totals(t, q) == durable.ShardStats{} })
	tasks := rec.tasks()
	if tasks[0].OriginalDue.IsZero() {
		t.Skip("claim does not fill durable.Task.OriginalDue yet (R1)")
	}
	assert.True(t, tasks[0].Due.Equal(at))
	assert.True(t, tasks[1].Due.After(at), "the retry's due time")
	for _, tk := range tasks {
		assert.True(t, tk.OriginalDue.Equal(at), "attempt %d: OriginalDue %v, want %v", tk.Attempt, tk.OriginalDue, at)
	}
}
