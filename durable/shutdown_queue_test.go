package durable_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// When Run's context ends, Run claims nothing more, and a handler that
// finishes within ShutdownGrace runs with its context intact and is acked:
// the task is done, never delivered again.
func TestShutdownGraceLetsHandlersFinish(t *testing.T) {
	// A poller that went on after ctx ended would claim within 50ms.
	q := newQueue(t, 1, durable.Options{PollInterval: 50 * time.Millisecond, ShutdownGrace: time.Minute})
	ctx := context.Background()
	_, err := q.Add(ctx, "a", nil, time.Now())
	require.NoError(t, err)

	started := make(chan struct{})
	proceed := make(chan struct{})
	seen := make(chan error, 1) // the handler's ctx.Err() as it returns
	var others atomic.Int64
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- q.Run(runCtx, func(ctx context.Context, tk durable.Task) error {
			if tk.Key != "a" {
				others.Add(1)
				return nil
			}
			close(started)
			<-proceed
			seen <- ctx.Err()
			return nil
		})
	}()
	await(t, started, "the delivery")
	cancel()

	// A task due now, added after ctx ended, is left alone while the handler
	// runs on: many times PollInterval, so a poller still claiming would have
	// taken it.
	_, err = q.Add(ctx, "b", nil, time.Now())
	require.NoError(t, err)
	time.Sleep(maxSleep + 500*time.Millisecond)
	assert.Equal(t, durable.ShardStats{Due: 1, InFlight: 1}, totals(t, q), "claimed after ctx ended")
	assert.Zero(t, others.Load(), "a handler started after ctx ended")
	select {
	case <-done:
		t.Fatal("Run returned before its handler")
	default:
	}

	close(proceed)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its handler")
	}
	assert.NoError(t, await(t, seen, "the handler's return"), "the handler's context was cancelled within the grace")
	assert.Equal(t, durable.ShardStats{Due: 1}, totals(t, q), "a finished within the grace: acked, not released")

	var rec recorder
	run(t, q, rec.handle)
	eventually(t, "b", func() bool { return totals(t, q) == durable.ShardStats{} })
	time.Sleep(100 * time.Millisecond)
	require.Len(t, rec.tasks(), 1)
	assert.Equal(t, "b", rec.tasks()[0].Key, "a was delivered again")
}

// A handler still running when ShutdownGrace is over has its context
// cancelled, with the cause of Run's context; its task is released: due at
// once for another Run, its attempt not counted.
func TestShutdownGraceThenRelease(t *testing.T) {
	const grace = 300 * time.Millisecond
	q := newQueue(t, 1, durable.Options{ShutdownGrace: grace}) // Lease 30s: a release is not a lease running out
	ctx := context.Background()
	_, err := q.Add(ctx, "k", nil, time.Now())
	require.NoError(t, err)

	started := make(chan struct{})
	var cancelledAfter atomic.Int64
	var cause atomic.Value
	var stopped time.Time
	runCtx, cancel := context.WithCancelCause(ctx)
	done := make(chan error, 1)
	go func() {
		done <- q.Run(runCtx, func(ctx context.Context, tk durable.Task) error {
			close(started)
			<-ctx.Done()
			cancelledAfter.Store(int64(time.Since(stopped)))
			cause.Store(context.Cause(ctx))
			return ctx.Err()
		})
	}()
	await(t, started, "the delivery")
	stopped = time.Now()
	stopCause := errors.New("deploy")
	cancel(stopCause)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
	assert.GreaterOrEqual(t, time.Duration(cancelledAfter.Load()), grace, "cancelled before the grace was over")
	assert.Equal(t, stopCause, cause.Load())
	assert.Equal(t, durable.ShardStats{Due: 1}, totals(t, q), "released, not left to its lease")

	// Due, not in flight (above): the next Run takes it at once, not when a
	// lease runs out.
	var rec recorder
	run(t, q, rec.handle)
	eventually(t, "the released task", func() bool { return rec.count() == 1 })
	assert.Equal(t, 1, rec.tasks()[0].Attempt, "a release does not count as an attempt")
}
