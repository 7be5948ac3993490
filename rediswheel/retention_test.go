package rediswheel

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// finished reads key's retained record: its f| state and finish time, and
// the end of its retention (its score in kept); ok false if not retained.
func finished(t *testing.T, q *testQueue, key string) (state string, at, until time.Time, ok bool) {
	t.Helper()
	ctx := context.Background()
	keys := q.keys[q.shard(key)]
	score, err := q.client.ZScore(ctx, keys[5], key).Result()
	if err != nil {
		return "", time.Time{}, time.Time{}, false
	}
	f, err := q.client.HGet(ctx, keys[4], "f|"+key).Result()
	require.NoError(t, err)
	st, ms, found := strings.Cut(f, "|")
	require.True(t, found, "f| %q", f)
	n, err := strconv.ParseInt(ms, 10, 64)
	require.NoError(t, err)
	return st, time.UnixMilli(n), time.UnixMilli(int64(score)), true
}

// With Retention a done task stays, as done, with its attempts and history
// (its last error cleared: it succeeded), its payload shrunk to "", and Add of its key is a no-op until its
// retention ends; Replace starts a new task; Requeue does not apply.
func TestRetentionKeepsDoneTasks(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1, Retention: time.Hour})
	ctx := context.Background()
	ctl, body := q.keys[0][4], q.keys[0][3]
	d := claimOne(t, q, "k")
	res, err := q.settle(ctx, 0, []outcome{{d: d, kind: outcomeRetry, err: "first failed"}})
	require.NoError(t, err)
	require.Equal(t, []settleCode{settleRetry}, res.codes)
	got, err := q.claim(ctx, 0, 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, got.tasks, 1)
	before := redisTime(t, c)
	res, err = q.settle(ctx, 0, []outcome{{d: got.tasks[0], kind: outcomeDone}})
	require.NoError(t, err)
	require.Equal(t, []settleCode{settleDone}, res.codes)

	state, at, until, ok := finished(t, q, "k")
	require.True(t, ok, "retained")
	assert.Equal(t, "done", state)
	assert.WithinDuration(t, before, at, 5*time.Second)
	// at is the finish's Redis time rounded down, the retention counts from it rounded up (lua/common.lua's now_ms).
	assert.Contains(t, []time.Duration{time.Hour, time.Hour + time.Millisecond}, until.Sub(at), "retained for Retention from its finish")
	assert.Equal(t, "2", c.HGet(ctx, ctl, "a|k").Val(), "attempts stay")
	assert.Zero(t, c.HExists(ctx, ctl, "e|k").Val(), "done: no last error (the history keeps it)")
	assert.Equal(t, "first failed", get(t, q, "k").History[0].Error)
	assert.Zero(t, c.HExists(ctx, ctl, "t|k").Val(), "no token: nothing can settle it again")
	assert.Equal(t, "", c.HGet(ctx, body, "k").Val(), "payload shrunk")
	assert.Equal(t, ShardStats{Retained: 1}, totals(t, q), "not scheduled, in flight or dead: retained")

	added, err := q.Add(ctx, "k", []byte("again"), time.Now())
	require.NoError(t, err)
	assert.False(t, added, "Add of a retained key is a no-op: the uniqueness window")
	added, err = q.AddAfter(ctx, "k", []byte("again"), 0)
	require.NoError(t, err)
	assert.False(t, added)
	ok, err = q.Requeue(ctx, "k")
	require.NoError(t, err)
	assert.False(t, ok, "Requeue is for dead tasks only")
	_, _, _, ok = finished(t, q, "k")
	require.True(t, ok, "still retained")

	require.NoError(t, q.Replace(ctx, "k", []byte("new"), time.Now().Add(-time.Second)))
	_, _, _, ok = finished(t, q, "k")
	assert.False(t, ok, "Replace ends the retention")
	assert.Zero(t, c.HExists(ctx, ctl, "f|k").Val())
	got, err = q.claim(ctx, 0, 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, got.tasks, 1)
	assert.Equal(t, "new", string(got.tasks[0].task.Payload))
	assert.Equal(t, 1, got.tasks[0].task.Attempt, "a new task")
}

// Cancel with Retention: a scheduled, dead or in-flight task is retained as
// cancelled; Cancel of a retained task forgets it, so the key is free again.
func TestRetentionKeepsCancelledTasks(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1, Retention: time.Hour})
	ctx := context.Background()

	_, err := q.Add(ctx, "scheduled", []byte("p"), time.Now().Add(time.Hour))
	require.NoError(t, err)
	d := claimOne(t, q, "dead")
	res, err := q.settle(ctx, 0, []outcome{{d: d, kind: outcomeDead, err: "no"}})
	require.NoError(t, err)
	require.Equal(t, []settleCode{settleDead}, res.codes)
	flying := claimOne(t, q, "flying")

	for _, k := range []string{"scheduled", "dead", "flying"} {
		ok, err := q.Cancel(ctx, k)
		require.NoError(t, err)
		require.True(t, ok, k)
	}
	_, _, _, ok := finished(t, q, "flying")
	assert.False(t, ok, "in flight until it settles")
	res, err = q.settle(ctx, 0, []outcome{{d: flying, kind: outcomeDone}})
	require.NoError(t, err)
	require.Equal(t, []settleCode{settleCancelled}, res.codes)

	for _, k := range []string{"scheduled", "dead", "flying"} {
		state, _, _, ok := finished(t, q, k)
		require.True(t, ok, k)
		assert.Equal(t, "cancelled", state, k)
		added, err := q.Add(ctx, k, []byte("p"), time.Now())
		require.NoError(t, err)
		assert.False(t, added, "%s: retained, so Add is a no-op", k)
	}
	assert.Equal(t, ShardStats{Retained: 3}, totals(t, q))
	assert.Equal(t, "no", c.HGet(ctx, q.keys[0][4], "e|dead").Val(), "a cancelled dead task keeps its last error")

	for _, k := range []string{"scheduled", "dead", "flying"} {
		ok, err := q.Cancel(ctx, k)
		require.NoError(t, err)
		assert.True(t, ok, "%s: a retained task is forgotten", k)
		ok, err = q.Cancel(ctx, k)
		require.NoError(t, err)
		assert.False(t, ok, k)
	}
	assert.Zero(t, leftovers(t, q))
	assert.Zero(t, c.ZCard(ctx, q.keys[0][5]).Val())
	added, err := q.Add(ctx, "scheduled", []byte("p"), time.Now())
	require.NoError(t, err)
	assert.True(t, added, "forgotten: the key is free")
}

// Retained tasks are forgotten when their retention ends (expired ones
// first), and the oldest go early past MaxRetained, by settle and cancel,
// a bounded number per call, each counted.
func TestRetentionIsTrimmed(t *testing.T) {
	c := standalone(t)
	ctx := context.Background()

	t.Run("expired", func(t *testing.T) {
		q := newQueue(t, c, Options{Shards: 1, Retention: 50 * time.Millisecond})
		for i := range 3 {
			d := claimOne(t, q, fmt.Sprint("k", i))
			_, err := q.settle(ctx, 0, []outcome{{d: d, kind: outcomeDone}})
			require.NoError(t, err)
		}
		require.Equal(t, int64(3), c.ZCard(ctx, q.keys[0][5]).Val())
		start := redisTime(t, c)
		eventually(t, patience, "the retention to end by the Redis clock", func() bool {
			return redisTime(t, c).Sub(start) > 100*time.Millisecond
		})
		// The next settle trims them: every trace goes.
		d := claimOne(t, q, "next")
		res, err := q.settle(ctx, 0, []outcome{{d: d, kind: outcomeRetry, delay: time.Hour.Milliseconds()}})
		require.NoError(t, err)
		assert.Equal(t, 3, res.trimmedKept)
		assert.Zero(t, c.ZCard(ctx, q.keys[0][5]).Val())
		for i := range 3 {
			added, err := q.Add(ctx, fmt.Sprint("k", i), []byte("p"), time.Now().Add(time.Hour))
			require.NoError(t, err)
			assert.True(t, added, "retention over: a new task")
		}
		ok, err := q.Cancel(ctx, "next")
		require.NoError(t, err)
		require.True(t, ok)
	})

	t.Run("over MaxRetained", func(t *testing.T) {
		const maxRetained = 3
		q := newQueue(t, c, Options{Shards: 1, Retention: time.Hour, MaxRetained: maxRetained})
		for i := range 40 {
			_, err := q.Add(ctx, fmt.Sprint("k", i), []byte("p"), time.Now().Add(-time.Second))
			require.NoError(t, err)
		}
		got, err := q.claim(ctx, 0, 40, time.Minute)
		require.NoError(t, err)
		require.Len(t, got.tasks, 40)
		total := 0
		// One at a time, then the rest in one call: kept never outgrows its cap.
		for _, d := range got.tasks[:5] {
			res, err := q.settle(ctx, 0, []outcome{{d: d, kind: outcomeDone}})
			require.NoError(t, err)
			total += res.trimmedKept
			require.LessOrEqual(t, c.ZCard(ctx, q.keys[0][5]).Val(), int64(maxRetained))
		}
		var os []outcome
		for _, d := range got.tasks[5:] {
			os = append(os, outcome{d: d, kind: outcomeDone})
		}
		res, err := q.settle(ctx, 0, os)
		require.NoError(t, err)
		total += res.trimmedKept
		assert.Equal(t, int64(maxRetained), c.ZCard(ctx, q.keys[0][5]).Val())
		assert.Equal(t, 40-maxRetained, total, "every trim counted")
		// The newest are kept (finished by the last call), the oldest
		// forgotten with every trace.
		assert.Equal(t, int64(maxRetained), c.HLen(ctx, q.keys[0][3]).Val())
		for _, d := range got.tasks[:5] {
			_, _, _, ok := finished(t, q, d.task.Key)
			assert.False(t, ok, d.task.Key)
		}
		added, err := q.Add(ctx, got.tasks[0].task.Key, []byte("p"), time.Now().Add(time.Hour))
		require.NoError(t, err)
		assert.True(t, added, "trimmed: a new task")
	})
}

// Retention reaches every shard of a cluster: a task is retained in its own
// shard's kept, and Add of it is a no-op there.
func TestRetentionCluster(t *testing.T) {
	c := cluster(t)
	q := newQueue(t, c, Options{Shards: 4, Retention: time.Hour})
	ctx := context.Background()
	r := &recorder{}
	stop := run(t, q, r.handle)
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for _, k := range keys {
		_, err := q.Add(ctx, k, []byte("p"), time.Now())
		require.NoError(t, err)
	}
	eventually(t, 30*time.Second, "every task retained as done", func() bool {
		for _, k := range keys {
			if state, _, _, ok := finished(t, q, k); !ok || state != "done" {
				return false
			}
		}
		return true
	})
	stop()
	shards := map[int]bool{}
	for _, k := range keys {
		shards[q.shard(k)] = true
		added, err := q.Add(ctx, k, []byte("p"), time.Now())
		require.NoError(t, err)
		assert.False(t, added, k)
	}
	assert.Greater(t, len(shards), 1, "the keys spread over shards")
	assert.Equal(t, len(keys), r.count(), "each delivered once")
}

// New checks and fills Retention, MaxRetained and HistoryLen.
func TestRetentionOptions(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	for _, opts := range []Options{
		{Namespace: "n", Retention: -time.Second},
		{Namespace: "n", MaxRetained: -1},
		{Namespace: "n", HistoryLen: -1},
		{Namespace: "n", HistoryLen: MaxHistoryLen + 1},
	} {
		_, err := New(c, opts)
		assert.ErrorIs(t, err, ErrOptions, "%+v", opts)
	}
	q, err := newTQ(c, Options{Namespace: "n"})
	require.NoError(t, err)
	assert.Zero(t, q.opts.Retention, "no retention unless asked")
	assert.Equal(t, DefaultMaxRetained, q.opts.MaxRetained)
	assert.Equal(t, DefaultHistoryLen, q.opts.HistoryLen)
}
