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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The poller never waits out its idle sleep (maxSleep) for work it can know
// of: a past-due backlog, an Add through its own Queue. The test makes that
// sleep (and its leases) an hour, so a missing wake-up shows as a delivery
// that does not come within patience (a loaded machine only adds seconds).
func TestPastDueFiresAtOnce(t *testing.T) {
	// Leases of an hour too: the poller also wakes when the earliest lease ends.
	q := newQueue(t, 4, durable.Options{PollInterval: time.Hour, Lease: time.Hour})
	ctx := context.Background()

	// A backlog from the distant past fires as soon as Run starts.
	for i := range 200 {
		_, err := q.Add(ctx, fmt.Sprint("old-", i), nil, time.Unix(int64(i), 0))
		require.NoError(t, err)
	}
	fired := make(chan string, 300)
	run(t, q, func(ctx context.Context, tk durable.Task) error {
		fired <- tk.Key
		return nil
	})
	for i := range 200 {
		await(t, fired, fmt.Sprintf("the past-due backlog (%d of 200 fired)", i))
	}

	// An idle poller sleeps; an Add through the same Queue wakes it, so a
	// past-due task does not wait out the sleep.
	for round := range 3 {
		eventually(t, "the poller to sleep", func() bool { return q.Idle() })
		_, err := q.Add(ctx, fmt.Sprint("now-", round), nil, time.Now().Add(-time.Hour))
		require.NoError(t, err)
		await(t, fired, "an Add to wake the sleeping poller")
	}
}

// An Add by another process (another Queue) is seen by the next poll, within
// maxSleep.
func TestPollSeesOtherProcessesAdds(t *testing.T) {
	q := newQueue(t, 4, durable.Options{})
	ctx := context.Background()
	fired := make(chan string, 1)
	run(t, q, func(ctx context.Context, tk durable.Task) error {
		fired <- tk.Key
		return nil
	})
	eventually(t, "the poller to sleep", func() bool { return q.Idle() })
	other := sameStore(t, q, durable.Options{})
	_, err := other.Add(ctx, "elsewhere", nil, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	assert.Equal(t, "elsewhere", await(t, fired, "the poll to find another Queue's task"))
}

func TestRetriesBackOffThenDeadThenRequeue(t *testing.T) {
	const backoff = 200 * time.Millisecond
	var backoffCalls atomic.Int64
	q := newQueue(t, 4, durable.Options{MaxAttempts: 3, Backoff: func(attempt int) time.Duration {
		backoffCalls.Add(1)
		return backoff
	}})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", []byte("payload"), time.Now())
	require.NoError(t, err)

	var succeed atomic.Bool
	var mu sync.Mutex
	var starts []time.Time
	var attempts []int
	run(t, q, func(ctx context.Context, tk durable.Task) error {
		mu.Lock()
		starts = append(starts, time.Now()) // memstore's clock
		attempts = append(attempts, tk.Attempt)
		mu.Unlock()
		if succeed.Load() {
			return nil
		}
		return fmt.Errorf("boom %d", tk.Attempt)
	})

	var dead []durable.DeadTask
	eventually(t, "the dead task", func() bool {
		dead, err = q.Dead(ctx, 10)
		require.NoError(t, err)
		return len(dead) == 1
	})
	mu.Lock()
	assert.Equal(t, []int{1, 2, 3}, attempts)
	for i := 1; i < len(starts); i++ {
		assert.GreaterOrEqual(t, starts[i].Sub(starts[i-1]), backoff, "retry %d came before its backoff", i)
	}
	mu.Unlock()
	assert.Equal(t, int64(2), backoffCalls.Load(), "backoff after attempts 1 and 2; attempt 3 dies")
	assert.Equal(t, "k", dead[0].Key)
	assert.Equal(t, "payload", string(dead[0].Payload))
	assert.Equal(t, 3, dead[0].Attempts)
	assert.Equal(t, "boom 3", dead[0].LastError)
	assert.False(t, dead[0].Died.Before(starts[2].Truncate(time.Millisecond)))
	assert.Equal(t, durable.ShardStats{Dead: 1}, totals(t, q))

	added, err := q.Add(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	assert.False(t, added, "a dead key is taken until requeued or cancelled")

	succeed.Store(true)
	ok, err := q.Requeue(ctx, "k")
	require.NoError(t, err)
	assert.True(t, ok)
	eventually(t, "the requeued task", func() bool { return totals(t, q) == durable.ShardStats{} })
	mu.Lock()
	assert.Equal(t, []int{1, 2, 3, 1}, attempts, "a requeued task starts its attempts over")
	mu.Unlock()
	ok, err = q.Requeue(ctx, "k")
	require.NoError(t, err)
	assert.False(t, ok, "nothing dead to requeue")
}

func TestPermanentErrorAndPanic(t *testing.T) {
	q := newQueue(t, 4, durable.Options{MaxAttempts: 2, Backoff: func(int) time.Duration { return 0 }})
	ctx := context.Background()
	var rec recorder
	rec.reply = func(ctx context.Context, tk durable.Task) error {
		switch tk.Key {
		case "permanent":
			return fmt.Errorf("wrapped: %w", durable.Permanent(errors.New("404 not found")))
		case "panic":
			panic("handler bug")
		}
		return nil
	}
	run(t, q, rec.handle)
	_, err := q.Add(ctx, "permanent", nil, time.Now())
	require.NoError(t, err)
	_, err = q.Add(ctx, "panic", nil, time.Now())
	require.NoError(t, err)

	var dead []durable.DeadTask
	eventually(t, "two dead tasks", func() bool {
		dead, err = q.Dead(ctx, 10)
		require.NoError(t, err)
		return len(dead) == 2
	})
	byKey := map[string]durable.DeadTask{dead[0].Key: dead[0], dead[1].Key: dead[1]}
	assert.Equal(t, 1, byKey["permanent"].Attempts, "a permanent error is not retried")
	assert.Equal(t, "wrapped: 404 not found", byKey["permanent"].LastError)
	assert.Equal(t, 2, byKey["panic"].Attempts, "a panic is a failed attempt")
	assert.Equal(t, "durable: handler panic: handler bug", byKey["panic"].LastError)
	assert.Equal(t, 3, rec.count())

	assert.Nil(t, durable.Permanent(nil))
	assert.True(t, durable.IsPermanent(fmt.Errorf("x: %w", durable.Permanent(context.Canceled))))
	assert.ErrorIs(t, durable.Permanent(context.Canceled), context.Canceled)
	assert.False(t, durable.IsPermanent(errors.New("plain")))

	// Cancel removes a dead task.
	ok, err := q.Cancel(ctx, "panic")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, durable.ShardStats{Dead: 1}, totals(t, q))
}

// A handler slower than the lease keeps its task: the heartbeat extends the
// lease, so a second worker on the namespace never gets it.
func TestHeartbeatKeepsSlowHandlerLease(t *testing.T) {
	const lease = 500 * time.Millisecond
	q1 := newQueue(t, 4, durable.Options{Lease: lease})
	q2 := sameStore(t, q1, durable.Options{Lease: lease})
	var rec recorder
	rec.reply = func(ctx context.Context, tk durable.Task) error {
		select {
		case <-time.After(4 * lease):
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	run(t, q1, rec.handle)
	run(t, q2, rec.handle)
	_, err := q1.Add(context.Background(), "slow", nil, time.Now())
	require.NoError(t, err)
	eventually(t, "the slow task to finish", func() bool { return rec.count() >= 1 && totals(t, q1) == durable.ShardStats{} })
	assert.Equal(t, 1, rec.count(), "the task was delivered again while its handler ran")
}

// Cancel of a task in flight cancels its handler's context and stops its
// retries; the key is then free for a new task.
func TestCancelInFlight(t *testing.T) {
	q := newQueue(t, 4, durable.Options{Lease: 300 * time.Millisecond, Backoff: func(int) time.Duration { return 0 }})
	ctx := context.Background()
	causes := make(chan error, 10)
	var rec recorder
	rec.reply = func(ctx context.Context, tk durable.Task) error {
		if string(tk.Payload) == "new" {
			return nil
		}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return errors.New("would retry")
	}
	run(t, q, rec.handle)
	_, err := q.Add(ctx, "k", []byte("old"), time.Now())
	require.NoError(t, err)
	eventually(t, "the delivery", func() bool { return rec.count() == 1 })

	ok, err := q.Cancel(ctx, "k")
	require.NoError(t, err)
	assert.True(t, ok)
	select {
	case cause := <-causes:
		assert.ErrorIs(t, cause, durable.ErrCanceled)
	case <-time.After(patience):
		t.Fatal("the handler's context was not cancelled")
	}
	eventually(t, "the cancelled task to go", func() bool { return totals(t, q) == durable.ShardStats{} })
	time.Sleep(300 * time.Millisecond)
	assert.Equal(t, 1, rec.count(), "a cancelled task is never retried")

	added, err := q.Add(ctx, "k", []byte("new"), time.Now())
	require.NoError(t, err)
	assert.True(t, added)
	eventually(t, "the new task", func() bool { return rec.count() == 2 && totals(t, q) == durable.ShardStats{} })
}

// Run claims no more tasks than it has free handlers, so a busy worker
// leaves the rest to other workers.
func TestClaimsOnlyFreeSlots(t *testing.T) {
	const slots = 4
	q := newQueue(t, 1, durable.Options{Concurrency: slots}) // one shard: Stats is one snapshot
	ctx := context.Background()
	for i := range 40 {
		_, err := q.Add(ctx, fmt.Sprint("k", i), nil, time.Now())
		require.NoError(t, err)
	}
	var running, peak, peakInFlight atomic.Int64
	run(t, q, func(ctx context.Context, tk durable.Task) error {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		return nil
	})
	eventually(t, "every task", func() bool {
		s := totals(t, q)
		peakInFlight.Store(max(peakInFlight.Load(), s.InFlight))
		return totals(t, q) == durable.ShardStats{}
	})
	assert.LessOrEqual(t, peak.Load(), int64(slots))
	assert.LessOrEqual(t, peakInFlight.Load(), int64(slots), "claimed more than its free slots")
}

// When Run's context ends, handlers see it, Run waits for them, and tasks
// they abandon are released for another delivery at the same attempt.
func TestRunStopsAndReleases(t *testing.T) {
	q := newQueue(t, 4, durable.Options{})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	before := goleak.IgnoreCurrent()

	started := make(chan struct{})
	var finished atomic.Bool
	stop := run(t, q, func(ctx context.Context, tk durable.Task) error {
		close(started)
		<-ctx.Done()
		time.Sleep(100 * time.Millisecond) // Run must wait for this
		finished.Store(true)
		return ctx.Err()
	})
	await(t, started, "the delivery")
	stop()
	assert.True(t, finished.Load(), "Run returned before its handler")
	goleak.VerifyNone(t, before) // nothing of Run's outlives it
	assert.Equal(t, durable.ShardStats{Due: 1}, totals(t, q), "released at once, not left to its lease")

	var rec recorder
	run(t, q, rec.handle)
	eventually(t, "the released task", func() bool { return rec.count() == 1 })
	assert.Equal(t, 1, rec.tasks()[0].Attempt, "a release does not count as an attempt")
}

// A retry the worker schedules itself must not wait out the idle poll
// (maxSleep): after settling, Run sleeps only until the shard's next due time.
func TestShortBackoffRetriesPromptly(t *testing.T) {
	const backoff = 20 * time.Millisecond
	// PollInterval an hour (and leases of an hour, whose end also wakes the poller): a
	// retry that waited out the idle sleep would not come within patience.
	q := newQueue(t, 4, durable.Options{PollInterval: time.Hour, Lease: time.Hour, Backoff: func(int) time.Duration { return backoff }})
	ctx := context.Background()
	var mu sync.Mutex
	var starts []time.Time
	done := make(chan struct{})
	run(t, q, func(ctx context.Context, tk durable.Task) error {
		mu.Lock()
		defer mu.Unlock()
		starts = append(starts, time.Now())
		if tk.Attempt < 3 {
			return fmt.Errorf("boom %d", tk.Attempt)
		}
		close(done)
		return nil
	})
	// Let the poller go idle first, so that only its own settle can wake it.
	eventually(t, "the poller to sleep", func() bool { return q.Idle() })
	_, err := q.Add(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	await(t, done, "the third attempt, two 20ms backoffs after the first")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, starts, 3)
	for i := 1; i < 3; i++ {
		assert.GreaterOrEqual(t, starts[i].Sub(starts[i-1]), backoff-time.Millisecond, "retry %d came before its backoff", i)
	}
}

// A Replace or Requeue through the worker's own Queue that makes a task due
// sooner than the worker knows wakes it, as an Add does, and so does a
// Resume of a paused namespace with due tasks (Reschedule:
// TestRescheduleWakesTheWorker).
func TestReplaceRequeueAndResumeWakeTheWorker(t *testing.T) {
	// PollInterval an hour (and leases of an hour, whose end also wakes the poller): a task
	// the poller was not woken for would not come within patience.
	q := newQueue(t, 4, durable.Options{PollInterval: time.Hour, MaxAttempts: 1, Lease: time.Hour})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	fired := make(chan durable.Task, 4)
	run(t, q, func(ctx context.Context, tk durable.Task) error {
		fired <- tk
		return durable.Permanent(errors.New("dies at once"))
	})
	for _, op := range []struct {
		name    string
		prepare func()
		do      func() error
	}{
		{"Replace", func() {}, func() error { return q.Replace(ctx, "k", nil, time.Now()) }},
		{"Requeue", func() {
			eventually(t, "the dead task", func() bool { return totals(t, q).Dead == 1 })
		}, func() error {
			ok, err := q.Requeue(ctx, "k")
			if err == nil && !ok {
				err = errors.New("nothing to requeue")
			}
			return err
		}},
		{"Resume", func() {
			eventually(t, "the dead task", func() bool { return totals(t, q).Dead == 1 })
			require.NoError(t, q.Pause(ctx))
			// Added by another process, which does not wake this one's poller.
			other := sameStore(t, q, durable.Options{})
			_, err := other.Add(ctx, "while paused", nil, time.Now())
			require.NoError(t, err)
		}, func() error { return q.Resume(ctx) }},
	} {
		op.prepare()
		eventually(t, "the poller to sleep", func() bool { return q.Idle() })
		require.NoError(t, op.do(), op.name)
		await(t, fired, op.name+" to wake the sleeping poller")
	}
}
