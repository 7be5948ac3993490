package rediswheel

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ctlField reads a ctl field of key ("" if absent).
func ctlField(t *testing.T, q *testQueue, prefix, key string) string {
	t.Helper()
	v, err := q.client.HGet(context.Background(), q.keys[q.shard(key)][4], prefix+key).Result()
	if err == redis.Nil {
		return ""
	}
	require.NoError(t, err)
	return v
}

// claimKey claims key's shard until key is leased, failing after 10s.
func claimKey(t *testing.T, q *testQueue, key string, lease time.Duration) *delivery {
	t.Helper()
	var got *delivery
	eventually(t, patience, "a claim of "+key, func() bool {
		c, err := q.claim(context.Background(), q.shard(key), 1, lease)
		require.NoError(t, err)
		for _, d := range c.tasks {
			got = d
		}
		return got != nil
	})
	return got
}

func TestClaimCarriesTaskRecord(t *testing.T) {
	t.Run("standalone", func(t *testing.T) { testClaimCarriesTaskRecord(t, standalone(t)) })
	t.Run("cluster", func(t *testing.T) { testClaimCarriesTaskRecord(t, cluster(t)) })
}

func testClaimCarriesTaskRecord(t *testing.T, c redis.UniversalClient) {
	q := newQueue(t, c, Options{WorkerID: "w-1|x"})
	ctx := context.Background()
	at := redisTime(t, c).Add(-time.Minute).Truncate(time.Millisecond)
	_, err := q.Add(ctx, "k", []byte("p"), at, TaskType("mail"), TaskTimeout(time.Second), TaskMaxAttempts(7), TaskBackoff(time.Second, time.Hour))
	require.NoError(t, err)

	d := claimKey(t, q, "k", time.Minute)
	assert.Equal(t, "mail", d.task.Type)
	assert.Equal(t, at, d.task.OriginalDue)
	assert.Equal(t, at, d.task.Due)
	assert.Equal(t, durable.Policy{Type: "mail", Timeout: time.Second, MaxAttempts: 7, BackoffBase: time.Second, BackoffLimit: time.Hour}, d.policy)
	cur := strings.SplitN(ctlField(t, q, "c|", "k"), "|", 3)
	require.Len(t, cur, 3)
	assert.Equal(t, "1", cur[0], "attempt")
	assert.Equal(t, "w-1|x", cur[2], "worker id, last: it may hold '|'")

	// A retry changes Due, not OriginalDue.
	_, err = q.settle(ctx, d.shard, []outcome{{d: d, kind: outcomeRetry, err: "again"}})
	require.NoError(t, err)
	d = claimKey(t, q, "k", time.Minute)
	assert.Equal(t, 2, d.task.Attempt)
	assert.Equal(t, at, d.task.OriginalDue)
	assert.True(t, d.task.Due.After(at))
	assert.Equal(t, "2", strings.SplitN(ctlField(t, q, "c|", "k"), "|", 2)[0])

	// A task stored with no record (before records existed) reads as the
	// Queue's policy, with its due time as the original one.
	_, err = q.Add(ctx, "old", nil, at)
	require.NoError(t, err)
	require.NoError(t, c.HDel(ctx, q.keys[q.shard("old")][4], "m|old").Err())
	d = claimKey(t, q, "old", time.Minute)
	assert.Equal(t, durable.Policy{}, d.policy)
	assert.Equal(t, at, d.task.OriginalDue)
}

// The reaper applies the task's own max attempts and records the expired
// delivery in the task's history.
func TestReapUsesTaskMaxAttempts(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1, WorkerID: "reaped"})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", nil, time.Now().Add(-time.Second), TaskMaxAttempts(1))
	require.NoError(t, err)
	d := claimKey(t, q, "k", MinLease)
	codes, err := q.extend(ctx, 0, []*delivery{d}, MinLease) // a heartbeat: the delivery was made
	require.NoError(t, err)
	require.Equal(t, []int64{1}, codes)

	eventually(t, patience, "the lease reaped", func() bool {
		_, err := q.claim(ctx, 0, 1, time.Minute)
		require.NoError(t, err)
		return totals(t, q).Dead == 1
	})
	dead, err := q.Dead(ctx, 10)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, "lease expired", dead[0].LastError, "out of its own 1 attempt, not the Queue's 25")
	h := ctlField(t, q, "h|", "k")
	assert.Contains(t, h, `"reaped"`)
	assert.Contains(t, h, `"lease expired"`)
}

// A paused shard leases nothing and says so, but still reaps expired leases.
func TestPausedShardLeasesNothing(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1})
	ctx := context.Background()
	_, err := q.Add(ctx, "held", nil, time.Now().Add(-time.Second))
	require.NoError(t, err)
	held := claimKey(t, q, "held", MinLease)
	_, err = q.extend(ctx, 0, []*delivery{held}, MinLease)
	require.NoError(t, err)
	_, err = q.Add(ctx, "due", nil, time.Now().Add(-time.Second))
	require.NoError(t, err)
	require.NoError(t, c.HSet(ctx, q.keys[0][4], "#paused", 1).Err())

	eventually(t, patience, "the expired lease reaped while paused", func() bool {
		got, err := q.claim(ctx, 0, 10, time.Minute)
		require.NoError(t, err)
		require.True(t, got.paused)
		require.Empty(t, got.tasks, "paused: nothing leased")
		require.True(t, got.next == -1 || got.next > got.now, "no due time to wait for while paused")
		return totals(t, q).InFlight == 0
	})
	assert.Equal(t, ShardStats{Due: 2}, totals(t, q))

	require.NoError(t, c.HDel(ctx, q.keys[0][4], "#paused").Err())
	got, err := q.claim(ctx, 0, 10, time.Minute)
	require.NoError(t, err)
	assert.False(t, got.paused)
	assert.Len(t, got.tasks, 2)
}

// A claim whose reply is lost (here: a client read timeout while a long
// script keeps Redis busy) leases the task, but no handler runs. With
// MaxAttempts 1 the task must still get its one delivery, not go dead with
// "lease expired".
func TestLostClaimReplyCountsNoAttempt(t *testing.T) {
	c := standalone(t)
	opts := Options{Shards: 1, MaxAttempts: 1, Lease: MinLease}
	q := newQueue(t, c, opts)
	ctx := context.Background()
	_, err := q.Add(ctx, "k", []byte("p"), time.Now().Add(-time.Second))
	require.NoError(t, err)

	// A client that gives up reading after 50ms and never retries.
	impatient := redis.NewClient(&redis.Options{Addr: c.Options().Addr, ReadTimeout: 50 * time.Millisecond, MaxRetries: -1})
	defer impatient.Close()
	opts.Namespace = q.opts.Namespace
	qi, err := newTQ(impatient, opts)
	require.NoError(t, err)
	require.NoError(t, claimScript.Load(ctx, impatient).Err()) // so the claim is one EVALSHA
	require.NoError(t, qi.st.resolve(ctx))                     // and the layout is read before
	// Busy for 400ms by the Redis clock: the impatient claim queues behind
	// it and runs after its client has given up. Should the claim reach
	// Redis first (a loaded machine may start the busy script late), its
	// delivery is released, which counts no attempt, and it is tried again.
	busy := func() error {
		return c.Eval(ctx, `local t = redis.call('TIME')
local stop = tonumber(t[1]) * 1000000 + tonumber(t[2]) + 400000
repeat t = redis.call('TIME') until tonumber(t[1]) * 1000000 + tonumber(t[2]) >= stop
return 1`, nil).Err()
	}
	lost := false
	for try := 1; try <= 5 && !lost; try++ {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, busy())
		}()
		time.Sleep(time.Duration(try) * 50 * time.Millisecond) // let the busy script start first
		got, err := qi.claim(ctx, 0, 1, MinLease)
		awaitDone(t, "the busy script", wg.Wait)
		if err != nil {
			lost = true
			break
		}
		require.Len(t, got.tasks, 1)
		res, err := q.settle(ctx, 0, []outcome{{d: got.tasks[0], kind: outcomeRelease}})
		require.NoError(t, err)
		require.Equal(t, []settleCode{settleReleased}, res.codes)
	}
	require.True(t, lost, "the claim reply was never lost: this test tested nothing")
	eventually(t, patience, "the lost claim executed", func() bool { return totals(t, q).InFlight == 1 })

	rec := &recorder{}
	run(t, q, rec.handle)
	eventually(t, patience, "the task delivered", func() bool { return rec.count() == 1 })
	assert.Equal(t, 1, rec.tasks()[0].Attempt, "the lost claim is not an attempt")
	eventually(t, patience, "the task finished", func() bool { return leftovers(t, q) == 0 })
}

// Unconfirmed claims are given back at most maxUnconfirmed times in a row:
// a task whose every delivery dies before its first heartbeat (a worker that
// crashes on it) still ends in dead, after maxUnconfirmed + MaxAttempts
// deliveries. A confirmed delivery counts at once.
func TestUnconfirmedClaimsAreBounded(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1, MaxAttempts: 2})
	ctx := context.Background()
	_, err := q.Add(ctx, "crashy", nil, time.Now().Add(-time.Second))
	require.NoError(t, err)
	claims := 0
	for totals(t, q).Dead == 0 {
		require.Less(t, claims, 100, "the task never dies: a crash loop")
		d := claimKey(t, q, "crashy", MinLease) // reaps the previous lease first
		claims++
		// Each delivery dies unconfirmed; the attempts it saw are all 1
		// while the bound lasts.
		if claims <= maxUnconfirmed {
			assert.Equal(t, 1, d.task.Attempt, "claim %d", claims)
		}
		eventually(t, patience, "the lease reaped", func() bool {
			_, err := q.claim(ctx, 0, 0, time.Minute)
			require.NoError(t, err)
			return totals(t, q).InFlight == 0
		})
	}
	assert.Equal(t, maxUnconfirmed+2, claims)
	dead, err := q.Dead(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, "lease expired", dead[0].LastError)
	assert.Empty(t, ctlField(t, q, "u|", "crashy"), "a Requeue starts the bound over")

	// A confirmed delivery (a heartbeat reached Redis) counts: MaxAttempts
	// 2 means two expired leases, no more.
	_, err = q.Add(ctx, "confirmed", nil, time.Now().Add(-time.Second))
	require.NoError(t, err)
	for i := range 2 {
		d := claimKey(t, q, "confirmed", MinLease)
		assert.Equal(t, i+1, d.task.Attempt)
		_, err := q.extend(ctx, 0, []*delivery{d}, MinLease)
		require.NoError(t, err)
		eventually(t, patience, "the lease reaped", func() bool {
			_, err := q.claim(ctx, 0, 0, time.Minute)
			require.NoError(t, err)
			return totals(t, q).InFlight == 0
		})
	}
	assert.Equal(t, int64(2), totals(t, q).Dead)
}

// A task cancelled in flight whose worker then vanished finishes as
// cancelled when the reaper takes its lease, retained like any cancelled
// task, with the expired delivery in its history.
func TestReapedCancelledTaskIsRetained(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1, Retention: time.Hour})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", []byte("p"), time.Now().Add(-time.Second))
	require.NoError(t, err)
	claimKey(t, q, "k", MinLease)
	ok, err := q.Cancel(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	eventually(t, patience, "the lease reaped", func() bool {
		_, err := q.claim(ctx, 0, 1, time.Minute)
		require.NoError(t, err)
		return totals(t, q).InFlight == 0
	})
	state, _, _, retained := finished(t, q, "k")
	require.True(t, retained)
	assert.Equal(t, "cancelled", state)
	assert.Contains(t, ctlField(t, q, "h|", "k"), `"lease expired"`)
	added, err := q.Add(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	assert.False(t, added, "retained: Add is a no-op")
}

// A task whose lease ran out unconfirmed waits in due with its count of
// unconfirmed claims (u|); Cancel then forgets every field of it, that one
// included, and leaves nothing behind.
func TestCancelForgetsUnconfirmedCount(t *testing.T) {
	q := newQueue(t, standalone(t), Options{Shards: 1})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", []byte("p"), time.Now().Add(-time.Second))
	require.NoError(t, err)
	got, err := q.claim(ctx, 0, 1, MinLease) // its reply lost: nobody runs it
	require.NoError(t, err)
	require.Len(t, got.tasks, 1)
	require.NoError(t, q.Pause(ctx)) // the reaper runs, nothing is leased again
	eventually(t, patience, "the lease reaped", func() bool {
		_, err := q.claim(ctx, 0, 1, MinLease)
		require.NoError(t, err)
		return totals(t, q) == ShardStats{Due: 1}
	})
	require.Equal(t, "1", ctlField(t, q, "u|", "k"))
	ok, err := q.Cancel(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, q.Resume(ctx))
	assert.Zero(t, leftovers(t, q))
}
