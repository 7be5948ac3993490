package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The poller never waits out its idle sleep (maxSleep) for work it can know
// of: a past-due backlog, an Add through its own Queue. The test makes that
// sleep (and its leases) an hour, so a missing wake-up shows as a delivery
// that does not come within patience (a loaded machine only adds seconds).
func TestPastDueFiresAtOnce(t *testing.T) {
	c := standalone(t)
	// Leases of an hour too: the poller also wakes when the earliest lease ends.
	q := newQueue(t, c, Options{PollInterval: time.Hour, Lease: time.Hour})
	ctx := context.Background()

	// A backlog from the distant past fires as soon as Run starts.
	for i := range 200 {
		_, err := q.Add(ctx, fmt.Sprint("old-", i), nil, time.Unix(int64(i), 0))
		require.NoError(t, err)
	}
	fired := make(chan string, 300)
	run(t, q, func(ctx context.Context, tk Task) error {
		fired <- tk.Key
		return nil
	})
	for i := range 200 {
		await(t, fired, fmt.Sprintf("the past-due backlog (%d of 200 fired)", i))
	}

	// An idle poller sleeps; an Add through the same Queue wakes it, so a
	// past-due task does not wait out the sleep.
	for round := range 3 {
		eventually(t, patience, "the poller to sleep", func() bool { return q.Idle() })
		_, err := q.Add(ctx, fmt.Sprint("now-", round), nil, time.Now().Add(-time.Hour))
		require.NoError(t, err)
		await(t, fired, "an Add to wake the sleeping poller")
	}
}

// An Add by another process (another Queue) is seen by the next poll, within
// maxSleep.
func TestPollSeesOtherProcessesAdds(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{})
	ctx := context.Background()
	fired := make(chan string, 1)
	run(t, q, func(ctx context.Context, tk Task) error {
		fired <- tk.Key
		return nil
	})
	eventually(t, patience, "the poller to sleep", func() bool { return q.Idle() })
	other := newQueue(t, c, Options{Namespace: q.opts.Namespace})
	_, err := other.Add(ctx, "elsewhere", nil, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	assert.Equal(t, "elsewhere", await(t, fired, "the poll to find another Queue's task"))
}

// Each handler reads the Redis clock as it starts: it must never be before
// the task's time, which is also Task.Due.
func TestNeverEarly(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 4})
	ctx := context.Background()
	const n = 300
	base := redisTime(t, c)
	want := map[string]time.Time{}
	for i := range n {
		at := base.Add(time.Duration(rand.N(900_000)) * time.Microsecond) // sub-ms times round up
		key := fmt.Sprint("k", i)
		want[key] = at
		_, err := q.Add(ctx, key, nil, at)
		require.NoError(t, err)
	}

	type firing struct {
		task Task
		now  time.Time
	}
	var mu sync.Mutex
	var got []firing
	run(t, q, func(ctx context.Context, tk Task) error {
		now := redisTime(t, c)
		mu.Lock()
		got = append(got, firing{tk, now})
		mu.Unlock()
		return nil
	})
	eventually(t, patience, "every task", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == n
	})
	var late []time.Duration
	for _, f := range got {
		at := want[f.task.Key]
		require.Equal(t, time.UnixMilli(unixMilliCeil(at)), f.task.Due, "Due is the task's time, rounded up")
		require.False(t, f.now.Before(at), "%s fired at %v, before its time %v", f.task.Key, f.now, at)
		late = append(late, f.now.Sub(at))
	}
	slices.Sort(late)
	t.Logf("lateness by the Redis clock over %d tasks: p50 %v p99 %v max %v", n, late[n/2], late[n*99/100], late[n-1])
}

func TestRetriesBackOffThenDeadThenRequeue(t *testing.T) {
	c := standalone(t)
	const backoff = 200 * time.Millisecond
	var backoffCalls atomic.Int64
	q := newQueue(t, c, Options{MaxAttempts: 3, Backoff: func(attempt int) time.Duration {
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
	run(t, q, func(ctx context.Context, tk Task) error {
		mu.Lock()
		starts = append(starts, redisTime(t, c))
		attempts = append(attempts, tk.Attempt)
		mu.Unlock()
		if succeed.Load() {
			return nil
		}
		return fmt.Errorf("boom %d", tk.Attempt)
	})

	var dead []DeadTask
	eventually(t, patience, "the dead task", func() bool {
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
	assert.Equal(t, ShardStats{Dead: 1}, totals(t, q))

	added, err := q.Add(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	assert.False(t, added, "a dead key is taken until requeued or cancelled")

	succeed.Store(true)
	ok, err := q.Requeue(ctx, "k")
	require.NoError(t, err)
	assert.True(t, ok)
	eventually(t, patience, "the requeued task", func() bool { return leftovers(t, q) == 0 })
	mu.Lock()
	assert.Equal(t, []int{1, 2, 3, 1}, attempts, "a requeued task starts its attempts over")
	mu.Unlock()
	ok, err = q.Requeue(ctx, "k")
	require.NoError(t, err)
	assert.False(t, ok, "nothing dead to requeue")
}

func TestPermanentErrorAndPanic(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{MaxAttempts: 2, Backoff: func(int) time.Duration { return 0 }})
	ctx := context.Background()
	var rec recorder
	rec.reply = func(ctx context.Context, tk Task) error {
		switch tk.Key {
		case "permanent":
			return fmt.Errorf("wrapped: %w", Permanent(errors.New("404 not found")))
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

	var dead []DeadTask
	eventually(t, patience, "two dead tasks", func() bool {
		dead, err = q.Dead(ctx, 10)
		require.NoError(t, err)
		return len(dead) == 2
	})
	byKey := map[string]DeadTask{dead[0].Key: dead[0], dead[1].Key: dead[1]}
	assert.Equal(t, 1, byKey["permanent"].Attempts, "a permanent error is not retried")
	assert.Equal(t, "wrapped: 404 not found", byKey["permanent"].LastError)
	assert.Equal(t, 2, byKey["panic"].Attempts, "a panic is a failed attempt")
	assert.Equal(t, "durable: handler panic: handler bug", byKey["panic"].LastError)
	assert.Equal(t, 3, rec.count())

	assert.Nil(t, Permanent(nil))
	assert.True(t, IsPermanent(fmt.Errorf("x: %w", Permanent(context.Canceled))))
	assert.ErrorIs(t, Permanent(context.Canceled), context.Canceled)
	assert.False(t, IsPermanent(errors.New("plain")))

	// Cancel removes a dead task.
	ok, err := q.Cancel(ctx, "panic")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, ShardStats{Dead: 1}, totals(t, q))
}

// A worker whose lease ran out (it stalled) must not be able to finish a
// task another worker now owns: the fencing token settles it.
func TestStaleTokenIsRejected(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", []byte("p"), time.Now().Add(-time.Second))
	require.NoError(t, err)

	first, err := q.claim(ctx, 0, 10, MinLease)
	require.NoError(t, err)
	require.Len(t, first.tasks, 1)
	stale := first.tasks[0]
	assert.Equal(t, 1, stale.task.Attempt)

	// The first worker heartbeats once, so its delivery counts (an
	// unconfirmed one may be a lost claim reply: see maxUnconfirmed), then
	// stalls past its lease.
	codes, err := q.extend(ctx, 0, []*delivery{stale}, MinLease)
	require.NoError(t, err)
	require.Equal(t, []int64{1}, codes)
	time.Sleep(MinLease + 50*time.Millisecond)
	second, err := q.claim(ctx, 0, 10, time.Minute)
	require.NoError(t, err)
	require.Len(t, second.tasks, 1, "the expired lease is reaped and the task claimed again")
	owner := second.tasks[0]
	assert.Equal(t, 2, owner.task.Attempt)
	assert.NotEqual(t, stale.token, owner.token)

	codes, err = q.extend(ctx, 0, []*delivery{stale}, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, []int64{0}, codes, "a stale heartbeat is refused")
	for _, kind := range []outcomeKind{outcomeDone, outcomeRetry, outcomeDead, outcomeRelease} {
		res, err := q.settle(ctx, 0, []outcome{{d: stale, kind: kind, err: "late"}})
		require.NoError(t, err)
		assert.Equal(t, []int64{settleRejected}, res.codes, "a stale %s is refused", kind)
	}
	assert.Equal(t, ShardStats{InFlight: 1}, totals(t, q), "the owner's lease is untouched")

	res, err := q.settle(ctx, 0, []outcome{{d: owner, kind: outcomeDone}})
	require.NoError(t, err)
	assert.Equal(t, []int64{settleDone}, res.codes)
	res, err = q.settle(ctx, 0, []outcome{{d: owner, kind: outcomeDone}})
	require.NoError(t, err)
	assert.Equal(t, []int64{settleRejected}, res.codes, "an ack is applied once")
	assert.Zero(t, leftovers(t, q))
}

// A handler slower than the lease keeps its task: the heartbeat extends the
// lease, so a second worker on the namespace never gets it.
func TestHeartbeatKeepsSlowHandlerLease(t *testing.T) {
	c := standalone(t)
	const lease = 500 * time.Millisecond
	q1 := newQueue(t, c, Options{Lease: lease})
	q2 := newQueue(t, c, Options{Namespace: q1.opts.Namespace, Lease: lease})
	var rec recorder
	rec.reply = func(ctx context.Context, tk Task) error {
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
	eventually(t, patience, "the slow task to finish", func() bool { return rec.count() >= 1 && leftovers(t, q1) == 0 })
	assert.Equal(t, 1, rec.count(), "the task was delivered again while its handler ran")
}

// Cancel of a task in flight cancels its handler's context and stops its
// retries; the key is then free for a new task.
func TestCancelInFlight(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Lease: 300 * time.Millisecond, Backoff: func(int) time.Duration { return 0 }})
	ctx := context.Background()
	causes := make(chan error, 10)
	var rec recorder
	rec.reply = func(ctx context.Context, tk Task) error {
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
	eventually(t, patience, "the delivery", func() bool { return rec.count() == 1 })

	ok, err := q.Cancel(ctx, "k")
	require.NoError(t, err)
	assert.True(t, ok)
	select {
	case cause := <-causes:
		assert.ErrorIs(t, cause, ErrCanceled)
	case <-time.After(patience):
		t.Fatal("the handler's context was not cancelled")
	}
	eventually(t, patience, "the cancelled task to go", func() bool { return leftovers(t, q) == 0 })
	time.Sleep(300 * time.Millisecond)
	assert.Equal(t, 1, rec.count(), "a cancelled task is never retried")

	added, err := q.Add(ctx, "k", []byte("new"), time.Now())
	require.NoError(t, err)
	assert.True(t, added)
	eventually(t, patience, "the new task", func() bool { return rec.count() == 2 && leftovers(t, q) == 0 })
}

// Run claims no more tasks than it has free handlers, so a busy worker
// leaves the rest to other workers.
func TestClaimsOnlyFreeSlots(t *testing.T) {
	c := standalone(t)
	const slots = 4
	q := newQueue(t, c, Options{Concurrency: slots, Shards: 1}) // one shard: Stats is one snapshot
	ctx := context.Background()
	for i := range 40 {
		_, err := q.Add(ctx, fmt.Sprint("k", i), nil, time.Now())
		require.NoError(t, err)
	}
	var running, peak, peakInFlight atomic.Int64
	run(t, q, func(ctx context.Context, tk Task) error {
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
	eventually(t, patience, "every task", func() bool {
		s := totals(t, q)
		peakInFlight.Store(max(peakInFlight.Load(), s.InFlight))
		return leftovers(t, q) == 0
	})
	assert.LessOrEqual(t, peak.Load(), int64(slots))
	assert.LessOrEqual(t, peakInFlight.Load(), int64(slots), "claimed more than its free slots")
}

// When Run's context ends, handlers see it, Run waits for them, and tasks
// they abandon are released for another delivery at the same attempt.
func TestRunStopsAndReleases(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	before := goleak.IgnoreCurrent()

	started := make(chan struct{})
	var finished atomic.Bool
	stop := run(t, q, func(ctx context.Context, tk Task) error {
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
	assert.Equal(t, ShardStats{Due: 1}, totals(t, q), "released at once, not left to its lease")

	var rec recorder
	run(t, q, rec.handle)
	eventually(t, patience, "the released task", func() bool { return rec.count() == 1 })
	assert.Equal(t, 1, rec.tasks()[0].Attempt, "a release does not count as an attempt")
}

// Each shard keeps at most MaxDead dead tasks; the oldest go, with every
// trace of them.
func TestDeadSetIsCapped(t *testing.T) {
	c := standalone(t)
	const capped = 5
	q := newQueue(t, c, Options{Shards: 1, MaxDead: capped})
	ctx := context.Background()
	for i := range 20 {
		_, err := q.Add(ctx, fmt.Sprint("k", i), []byte("p"), time.Now().Add(-time.Second))
		require.NoError(t, err)
	}
	got, err := q.claim(ctx, 0, 20, time.Minute)
	require.NoError(t, err)
	require.Len(t, got.tasks, 20)
	for _, d := range got.tasks {
		res, err := q.settle(ctx, 0, []outcome{{d: d, kind: "dead", err: "no"}})
		require.NoError(t, err)
		require.Equal(t, []int64{settleDead}, res.codes)
	}
	dead, err := q.Dead(ctx, 100)
	require.NoError(t, err)
	require.Len(t, dead, capped)
	assert.Equal(t, ShardStats{Dead: capped}, totals(t, q))
	assert.Equal(t, int64(capped), c.HLen(ctx, q.keys[0][3]).Val(), "payloads of trimmed tasks are deleted")
	assert.Equal(t, int64(7*capped), leftovers(t, q), "per dead task: a member, a payload, attempts, last error, record, last delivery and history")
}

// With Redis unreachable, Run keeps trying, reports the errors through
// OnError, and still returns when its context ends.
func TestRunWithoutRedis(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	var errs atomic.Int64
	q, err := newTQ(c, Options{Namespace: "unreachable", OnError: func(error) { errs.Add(1) }})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	returned := make(chan error, 1)
	go func() { returned <- q.Run(ctx, func(context.Context, Task) error { return nil }) }()
	eventually(t, patience, "each shard's failed claim to be reported", func() bool { return errs.Load() >= 2*DefaultShards })
	cancel()
	require.NoError(t, await(t, returned, "Run to return once its context ended"))
	_, err = q.Add(context.Background(), "k", nil, time.Now())
	assert.Error(t, err)
}

// A handler whose task was taken over (here: its token replaced, as if its
// lease had been reaped and the task claimed again) learns so at the next
// heartbeat, and its late result is rejected.
func TestLostLeaseCancelsHandler(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Lease: 300 * time.Millisecond})
	ctx := context.Background()
	causes := make(chan error, 1)
	started := make(chan struct{})
	run(t, q, func(ctx context.Context, tk Task) error {
		close(started)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil // a success that must not count
	})
	_, err := q.Add(ctx, "k", nil, time.Now().Add(-time.Second))
	require.NoError(t, err)
	await(t, started, "the delivery")
	keys := q.keys[q.shard("k")]
	require.NoError(t, c.HSet(ctx, keys[4], "t|k", "another-owner").Err())
	select {
	case cause := <-causes:
		assert.ErrorIs(t, cause, ErrLeaseLost)
	case <-time.After(patience):
		t.Fatal("the handler was not told")
	}
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, ShardStats{InFlight: 1}, totals(t, q), "the stale ack was rejected")
}

// A retry the worker schedules itself must not wait out the idle poll
// (maxSleep): after settling, Run sleeps only until the shard's next due time.
func TestShortBackoffRetriesPromptly(t *testing.T) {
	c := standalone(t)
	const backoff = 20 * time.Millisecond
	// PollInterval an hour (and leases of an hour, whose end also wakes the poller): a
	// retry that waited out the idle sleep would not come within patience.
	q := newQueue(t, c, Options{PollInterval: time.Hour, Lease: time.Hour, Backoff: func(int) time.Duration { return backoff }})
	ctx := context.Background()
	var mu sync.Mutex
	var starts []time.Time
	done := make(chan struct{})
	run(t, q, func(ctx context.Context, tk Task) error {
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
	eventually(t, patience, "the poller to sleep", func() bool { return q.Idle() })
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
	c := standalone(t)
	// PollInterval an hour (and leases of an hour, whose end also wakes the poller): a task
	// the poller was not woken for would not come within patience.
	q := newQueue(t, c, Options{PollInterval: time.Hour, MaxAttempts: 1, Lease: time.Hour})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	fired := make(chan Task, 4)
	run(t, q, func(ctx context.Context, tk Task) error {
		fired <- tk
		return Permanent(errors.New("dies at once"))
	})
	for _, op := range []struct {
		name    string
		prepare func()
		do      func() error
	}{
		{"Replace", func() {}, func() error { return q.Replace(ctx, "k", nil, time.Now()) }},
		{"Requeue", func() {
			eventually(t, patience, "the dead task", func() bool { return totals(t, q).Dead == 1 })
		}, func() error {
			ok, err := q.Requeue(ctx, "k")
			if err == nil && !ok {
				err = errors.New("nothing to requeue")
			}
			return err
		}},
		{"Resume", func() {
			eventually(t, patience, "the dead task", func() bool { return totals(t, q).Dead == 1 })
			require.NoError(t, q.Pause(ctx))
			// Added by another process, which does not wake this one's poller.
			other := newQueue(t, c, Options{Namespace: q.opts.Namespace})
			_, err := other.Add(ctx, "while paused", nil, time.Now())
			require.NoError(t, err)
		}, func() error { return q.Resume(ctx) }},
	} {
		op.prepare()
		eventually(t, patience, "the poller to sleep", func() bool { return q.Idle() })
		require.NoError(t, op.do(), op.name)
		await(t, fired, op.name+" to wake the sleeping poller")
	}
}
