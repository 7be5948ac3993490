package rediswheel

import (
	"context"
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
)

// The worker's feature tests (wake-ups, polls, backoff, dead and requeue,
// Permanent and panics, heartbeats, cancel in flight, free slots, release on
// stop) are durable's worker_queue_test.go, on memstore, and its Observer's
// observer_queue_test.go; storetest runs the contract on Redis. What stays
// here needs Redis: its clock, its keys, an unreachable server.

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
