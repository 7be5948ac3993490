package durable_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression: a handler that ignores its context used to keep its lease
// forever, the heartbeat extending it. With a timeout its context is
// cancelled with durable.ErrHandlerTimeout and the delivery counts as a failed
// attempt at once, whatever the handler does after; its late result is
// ignored.
func TestHandlerTimeoutSettlesAHandlerThatIgnoresIt(t *testing.T) {
	const timeout = 300 * time.Millisecond
	q := newQueue(t, 1, durable.Options{
		HandlerTimeout: timeout,
		Lease:          300 * time.Millisecond, // heartbeats every 100ms: the lease would be kept
		MaxAttempts:    2,
		Backoff:        func(int) time.Duration { return 0 },
	})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", nil, time.Now())
	require.NoError(t, err)

	hung := make(chan struct{}) // closed at the end: until then handlers hang
	causes := make(chan error, 2)
	var rec recorder
	rec.reply = func(ctx context.Context, tk durable.Task) error {
		go func() {
			<-ctx.Done()
			causes <- context.Cause(ctx)
		}()
		<-hung
		return nil // a success too late to count
	}
	stop := run(t, q, rec.handle)
	release := sync.OnceFunc(func() { close(hung) })
	t.Cleanup(release) // before run's cleanup, which waits for the handlers

	eventually(t, "the second attempt", func() bool { return rec.count() == 2 })
	assert.ErrorIs(t, await(t, causes, "the handler's cancellation"), durable.ErrHandlerTimeout)
	eventually(t, "the task to die", func() bool { return totals(t, q) == durable.ShardStats{Dead: 1} })
	assert.ErrorIs(t, await(t, causes, "the handler's cancellation"), durable.ErrHandlerTimeout)
	dead, err := q.Dead(ctx, 10)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Contains(t, dead[0].LastError, durable.ErrHandlerTimeout.Error())
	assert.Equal(t, 2, rec.tasks()[1].Attempt)

	release()
	stop()
	assert.Equal(t, durable.ShardStats{Dead: 1}, totals(t, q), "a late success was acked")
	assert.Equal(t, 2, rec.count())
}

// A handler that outlives its timeout keeps its place among Run's
// Concurrency until it returns, so a Run whose handlers hang claims less
// instead of piling up goroutines.
func TestTimedOutHandlerKeepsItsSlot(t *testing.T) {
	q := newQueue(t, 1, durable.Options{
		Concurrency:    1,
		HandlerTimeout: 200 * time.Millisecond,
		Backoff:        func(int) time.Duration { return time.Hour },
	})
	ctx := context.Background()
	_, err := q.Add(ctx, "hangs", nil, time.Now())
	require.NoError(t, err)

	hung := make(chan struct{})
	var rec recorder
	rec.reply = func(ctx context.Context, tk durable.Task) error {
		if tk.Key == "hangs" {
			<-hung
		}
		return nil
	}
	run(t, q, rec.handle)
	release := sync.OnceFunc(func() { close(hung) })
	t.Cleanup(release)
	eventually(t, "the timeout to retry it", func() bool { return totals(t, q).Scheduled == 1 })
	_, err = q.Add(ctx, "next", nil, time.Now())
	require.NoError(t, err)
	time.Sleep(maxSleep + 500*time.Millisecond)
	assert.Equal(t, 1, rec.count(), "claimed while its only handler still ran")
	release()
	eventually(t, "the next task once the handler returned", func() bool { return rec.count() == 2 })
	assert.Equal(t, "next", rec.tasks()[1].Key)
}

// A handler that returns before its timeout is settled by its own result,
// and one cancelled for another cause (here Cancel) is not settled as timed
// out.
func TestHandlerTimeoutNotHit(t *testing.T) {
	q := newQueue(t, 1, durable.Options{HandlerTimeout: time.Minute, Lease: 300 * time.Millisecond})
	ctx := context.Background()
	var calls atomic.Int64
	causes := make(chan error, 1)
	run(t, q, func(ctx context.Context, tk durable.Task) error {
		calls.Add(1)
		if tk.Key == "fast" {
			return nil
		}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return fmt.Errorf("cancelled: %w", context.Cause(ctx))
	})
	_, err := q.Add(ctx, "fast", nil, time.Now())
	require.NoError(t, err)
	eventually(t, "the fast task", func() bool { return calls.Load() == 1 && totals(t, q) == durable.ShardStats{} })

	_, err = q.Add(ctx, "slow", nil, time.Now())
	require.NoError(t, err)
	eventually(t, "the slow task", func() bool { return calls.Load() == 2 })
	ok, err := q.Cancel(ctx, "slow")
	require.NoError(t, err)
	require.True(t, ok)
	assert.ErrorIs(t, await(t, causes, "the handler's cancellation"), durable.ErrCanceled)
	eventually(t, "the cancelled task to go", func() bool { return totals(t, q) == durable.ShardStats{} })
}
