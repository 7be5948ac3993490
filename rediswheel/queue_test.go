package rediswheel

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRejectsBadOptions(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	cases := []struct {
		name string
		opts Options
		want error
	}{
		{"empty namespace", Options{}, ErrNamespace},
		{"brace in namespace", Options{Namespace: "a{b"}, ErrNamespace},
		{"closing brace in namespace", Options{Namespace: "a}b"}, ErrNamespace},
		{"space in namespace", Options{Namespace: "a b"}, ErrNamespace},
		{"long namespace", Options{Namespace: strings.Repeat("n", 129)}, ErrNamespace},
		{"negative shards", Options{Namespace: "n", Shards: -1}, ErrOptions},
		{"too many shards", Options{Namespace: "n", Shards: MaxShards + 1}, ErrOptions},
		{"negative lease", Options{Namespace: "n", Lease: -time.Second}, ErrOptions},
		{"tiny lease", Options{Namespace: "n", Lease: time.Millisecond}, ErrOptions},
		{"negative attempts", Options{Namespace: "n", MaxAttempts: -1}, ErrOptions},
		{"negative concurrency", Options{Namespace: "n", Concurrency: -1}, ErrOptions},
		{"negative dead cap", Options{Namespace: "n", MaxDead: -1}, ErrOptions},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := newTQ(c, tc.opts)
			assert.Nil(t, q)
			assert.ErrorIs(t, err, tc.want)
		})
	}
	_, err := New(nil, Options{Namespace: "n"})
	assert.ErrorIs(t, err, ErrOptions, "nil client")

	q, err := newTQ(c, Options{Namespace: "n"})
	require.NoError(t, err)
	assert.Equal(t, DefaultShards, len(q.keys))
	assert.Equal(t, DefaultLease, q.opts.Lease)
	assert.Equal(t, DefaultMaxAttempts, q.opts.MaxAttempts)
	assert.Equal(t, DefaultConcurrency, q.opts.Concurrency)
	assert.Equal(t, DefaultMaxDead, q.opts.MaxDead)
	// The names of layout 2 (layout.go), which must never change, as layout 1's never did.
	assert.Equal(t, []string{"{n.3~161}:due", "{n.3~161}:lease", "{n.3~161}:dead", "{n.3~161}:body", "{n.3~161}:ctl", "{n.3~161}:kept"}, q.keys[3])
	assert.Equal(t, []string{"{n.3}:due", "{n.3}:lease", "{n.3}:dead", "{n.3}:body", "{n.3}:ctl", "{n.3}:kept"}, q.st.layout.old[3])

	// Bad keys are refused before any call to Redis.
	ctx := context.Background()
	for _, key := range []string{"", strings.Repeat("k", MaxKeyLen+1)} {
		_, err = q.Add(ctx, key, nil, time.Now())
		assert.ErrorIs(t, err, ErrKey)
		_, err = q.AddAfter(ctx, key, nil, 0)
		assert.ErrorIs(t, err, ErrKey)
		assert.ErrorIs(t, q.Replace(ctx, key, nil, time.Now()), ErrKey)
		_, err = q.Cancel(ctx, key)
		assert.ErrorIs(t, err, ErrKey)
		_, err = q.Requeue(ctx, key)
		assert.ErrorIs(t, err, ErrKey)
	}
	assert.PanicsWithValue(t, "durable: Run with nil Handler", func() { q.Run(ctx, nil) })
}

func TestAddIsIdempotentByKey(t *testing.T) {
	q := newQueue(t, standalone(t), Options{})
	ctx := context.Background()
	later := time.Now().Add(time.Hour)

	added, err := q.Add(ctx, "k", []byte("first"), later)
	require.NoError(t, err)
	assert.True(t, added)
	added, err = q.Add(ctx, "k", []byte("second"), time.Now().Add(-time.Hour))
	require.NoError(t, err)
	assert.False(t, added, "a second Add of a scheduled key is refused")
	added, err = q.AddAfter(ctx, "k", []byte("third"), 0)
	require.NoError(t, err)
	assert.False(t, added)

	keys := q.keys[q.shard("k")]
	body, err := q.client.HGet(ctx, keys[3], "k").Result()
	require.NoError(t, err)
	assert.Equal(t, "first", body, "the refused Adds changed nothing")
	score, err := q.client.ZScore(ctx, keys[0], "k").Result()
	require.NoError(t, err)
	assert.Equal(t, float64(unixMilliCeil(later)), score)
	assert.Equal(t, ShardStats{Scheduled: 1}, totals(t, q))
}

func TestCancelIsFinalAndReAddFiresOnce(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{})
	ctx := context.Background()
	at := redisTime(t, c).Add(300 * time.Millisecond)

	added, err := q.Add(ctx, "k", []byte("old"), at)
	require.NoError(t, err)
	require.True(t, added)
	ok, err := q.Cancel(ctx, "k")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = q.Cancel(ctx, "k")
	require.NoError(t, err)
	assert.False(t, ok, "nothing left to cancel")
	assert.Zero(t, leftovers(t, q), "a cancel leaves no tombstone")

	added, err = q.Add(ctx, "k", []byte("new"), at)
	require.NoError(t, err)
	require.True(t, added, "after a cancel the key is free")
	_, err = q.Add(ctx, "gone", []byte("x"), at)
	require.NoError(t, err)
	_, err = q.Cancel(ctx, "gone")
	require.NoError(t, err)

	var rec recorder
	run(t, q, rec.handle)
	eventually(t, patience, "the re-added task", func() bool { return rec.count() >= 1 })
	time.Sleep(700 * time.Millisecond) // room for a double fire
	got := rec.tasks()
	require.Len(t, got, 1, "the re-added key fires once; the cancelled one never")
	assert.Equal(t, "k", got[0].Key)
	assert.Equal(t, "new", string(got[0].Payload))
	assert.Equal(t, 1, got[0].Attempt)
	eventually(t, patience, "the ack", func() bool { return leftovers(t, q) == 0 })
}

func TestReplace(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Lease: time.Second})
	ctx := context.Background()

	_, err := q.Add(ctx, "k", []byte("v1"), time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.NoError(t, q.Replace(ctx, "k", []byte("v2"), time.Now().Add(-time.Minute)))
	require.NoError(t, q.Replace(ctx, "fresh", []byte("f"), time.Now().Add(time.Hour)), "Replace of an unknown key adds it")

	started := make(chan struct{})
	release := make(chan struct{})
	rec := recorder{reply: func(ctx context.Context, tk Task) error {
		close(started)
		<-release
		return nil
	}}
	run(t, q, rec.handle)
	await(t, started, "the delivery")
	err = q.Replace(ctx, "k", []byte("v3"), time.Now())
	assert.ErrorIs(t, err, ErrInFlight, "a task in flight is never rewritten")
	added, err := q.Add(ctx, "k", []byte("v4"), time.Now())
	require.NoError(t, err)
	assert.False(t, added, "a key in flight is taken")
	close(release)

	got := rec.tasks()
	require.Len(t, got, 1)
	assert.Equal(t, "v2", string(got[0].Payload))
	eventually(t, patience, "the ack", func() bool { return totals(t, q) == ShardStats{Scheduled: 1} })
}

func TestAddAfterUsesTheRedisClock(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{})
	ctx := context.Background()
	before := redisTime(t, c)
	added, err := q.AddAfter(ctx, "k", []byte("p"), 300*time.Millisecond)
	require.NoError(t, err)
	require.True(t, added)
	after := redisTime(t, c)
	// The due time is the Redis time of the add, which lies between before
	// and after, plus the delay, rounded up to the ms.
	info, err := q.Get(ctx, "k")
	require.NoError(t, err)
	assert.False(t, info.Due.Before(before.Add(300*time.Millisecond)), "due %v, added after %v", info.Due, before)
	assert.False(t, info.Due.After(after.Add(300*time.Millisecond).Truncate(time.Millisecond).Add(time.Millisecond)),
		"due %v, added before %v", info.Due, after)

	fired := make(chan time.Time, 1)
	run(t, q, func(ctx context.Context, tk Task) error {
		fired <- redisTime(t, c)
		return nil
	})
	now := await(t, fired, "the task")
	assert.GreaterOrEqual(t, now.Sub(before), 300*time.Millisecond, "never early")
}

// AddBatch answers for each item what Add would have, over several shards and
// several script calls per shard, on a standalone server and on a cluster.
func TestAddBatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client func(testing.TB) redis.UniversalClient
	}{
		{"standalone", func(t testing.TB) redis.UniversalClient { return standalone(t) }},
		{"cluster", func(t testing.TB) redis.UniversalClient { return cluster(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.client(t)
			q := newQueue(t, c, Options{Shards: 3})
			ctx := context.Background()
			later := time.Now().Add(time.Hour)

			// Existing keys in every state: scheduled, in flight, dead.
			_, err := q.Add(ctx, "scheduled", []byte("old"), later)
			require.NoError(t, err)
			for _, k := range []string{"inflight", "dead"} {
				_, err := q.Add(ctx, k, []byte("old"), time.Now().Add(-time.Hour))
				require.NoError(t, err)
			}
			for _, k := range []string{"inflight", "dead"} {
				got, err := q.claim(ctx, q.shard(k), 10, time.Hour)
				require.NoError(t, err)
				for _, d := range got.tasks {
					if d.task.Key == "dead" {
						_, err := q.settle(ctx, d.shard, []outcome{{d: d, kind: "dead", err: "x"}})
						require.NoError(t, err)
					}
				}
			}
			require.Equal(t, ShardStats{Scheduled: 1, InFlight: 1, Dead: 1}, totals(t, q))

			// A server that lost its scripts (restart, failover) must not fail a batch.
			if sc, ok := c.(*redis.Client); ok {
				require.NoError(t, sc.ScriptFlush(ctx).Err())
			}

			const n = 1000 // over 256 per shard: several calls per shard
			var items []Item
			var want []bool
			for i := range n {
				items = append(items, Item{Key: fmt.Sprint("k", i), Payload: []byte(fmt.Sprint("p", i)), At: later})
				want = append(want, true)
			}
			for _, k := range []string{"scheduled", "inflight", "dead", "k7"} {
				items = append(items, Item{Key: k, Payload: []byte("new"), At: time.Now()})
				want = append(want, false)
			}
			added, err := q.AddBatch(ctx, items)
			require.NoError(t, err)
			assert.Equal(t, want, added)
			assert.Equal(t, ShardStats{Scheduled: n + 1, InFlight: 1, Dead: 1}, totals(t, q))
			for _, i := range []int{0, 7, n - 1} {
				keys := q.keys[q.shard(items[i].Key)]
				body, err := c.HGet(ctx, keys[3], items[i].Key).Result()
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprint("p", i), body, "the first item of a key wins")
				score, err := c.ZScore(ctx, keys[0], items[i].Key).Result()
				require.NoError(t, err)
				assert.Equal(t, float64(unixMilliCeil(later)), score)
			}
			body, err := c.HGet(ctx, q.keys[q.shard("scheduled")][3], "scheduled").Result()
			require.NoError(t, err)
			assert.Equal(t, "old", body, "a refused item changes nothing")

			added, err = q.AddBatch(ctx, items[:2])
			require.NoError(t, err)
			assert.Equal(t, []bool{false, false}, added, "a second batch of the same keys is refused")
			added, err = q.AddBatch(ctx, nil)
			require.NoError(t, err)
			assert.Empty(t, added)
			_, err = q.AddBatch(ctx, []Item{{Key: "fine"}, {Key: ""}})
			require.ErrorIs(t, err, ErrKey)
			assert.Equal(t, ShardStats{Scheduled: n + 1, InFlight: 1, Dead: 1}, totals(t, q), "a bad key stores nothing")
		})
	}
}

// Concurrent Adds share pipelines (see adder) and still answer each caller
// as a lone Add would: of many racing Adds of one key exactly one is stored.
// Callers whose context ends while they wait give up without blocking the
// others.
func TestConcurrentAddsCoalesce(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 4})
	const goroutines, keys, rounds = 32, 300, 3
	var mu sync.Mutex
	stored := map[string]int{}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range rounds {
				for i := range keys {
					key := fmt.Sprint("k", (i+g)%keys)
					ctx := context.Background()
					var cancel context.CancelFunc = func() {}
					if g%8 == 7 {
						// Some callers give up soon, some before they start.
						ctx, cancel = context.WithTimeout(ctx, time.Duration(round)*50*time.Microsecond)
					}
					added, err := q.Add(ctx, key, []byte(key), time.Now().Add(time.Hour))
					cancel()
					if err != nil {
						assert.ErrorIs(t, err, context.DeadlineExceeded)
						continue
					}
					if added {
						mu.Lock()
						stored[key]++
						mu.Unlock()
					}
				}
			}
		}()
	}
	awaitDone(t, "the adding goroutines", wg.Wait)
	for k, n := range stored {
		assert.Equal(t, 1, n, "key %s stored %d times", k, n)
	}
	// A caller that gave up may have had its task stored all the same, and
	// then nobody saw "added": every key ends up stored once either way.
	assert.Equal(t, ShardStats{Scheduled: keys}, totals(t, q))
	assert.NotEmpty(t, stored)
	// The lead ends once nothing is pending: a lead left behind would make
	// the next Add wait for a leader that never comes.
	after, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	added, err := q.Add(after, "after", nil, time.Now().Add(time.Hour))
	require.NoError(t, err, "an Add after the storm was left waiting")
	assert.True(t, added)
}
