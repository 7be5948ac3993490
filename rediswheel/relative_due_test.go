package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A due time relative to Redis's clock (AddAfter, a retry's backoff, a
// RetryAfter) is never before "the Redis time of the call + the delay", to the
// microsecond: the scripts read TIME in µs and must round the sum up to the
// next millisecond, not down. Each check reads TIME before the call, so the
// script's own reading can only be later. Before the fix (floor of TIME, plus
// the delay) most of these failed by up to 1 ms.
func TestRelativeDueNeverBeforeTheCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client func(testing.TB) redis.UniversalClient
	}{
		{"standalone", func(t testing.TB) redis.UniversalClient { return standalone(t) }},
		{"cluster", func(t testing.TB) redis.UniversalClient { return cluster(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.client(t)
			t.Run("AddAfter", func(t *testing.T) { testAddAfterNeverEarly(t, c) })
			t.Run("Backoff", func(t *testing.T) { testRetryNeverEarly(t, c, false) })
			t.Run("RetryAfter", func(t *testing.T) { testRetryNeverEarly(t, c, true) })
			t.Run("Lease", func(t *testing.T) { testLeaseNeverEarly(t, c) })
			t.Run("Retention", func(t *testing.T) { testRetentionNeverShort(t, c) })
		})
	}
}

// relDelay is a whole number of ms, so that only the rounding of TIME shows.
const relDelay = 7 * time.Millisecond

func testAddAfterNeverEarly(t *testing.T, c redis.UniversalClient) {
	q := newQueue(t, c, Options{Shards: 4})
	ctx := context.Background()
	early := 0
	const n = 500
	for i := range n {
		key := fmt.Sprint("k", i)
		before := redisTime(t, c)
		added, err := q.AddAfter(ctx, key, nil, relDelay)
		require.NoError(t, err)
		require.True(t, added)
		info, err := q.Get(ctx, key)
		require.NoError(t, err)
		if info.Due.Before(before.Add(relDelay)) {
			if early == 0 {
				t.Errorf("AddAfter(%v) at Redis time %s is due at %s: %v early",
					relDelay, before.Format(time.StampMicro), info.Due.Format(time.StampMicro), before.Add(relDelay).Sub(info.Due))
			}
			early++
		}
	}
	assert.Zero(t, early, "of %d AddAfter calls, due before the call's Redis time + delay", n)
}

// testRetryNeverEarly fails each task's first delivery, after reading TIME,
// with an error (retried after Backoff) or with RetryAfter, and checks the
// second delivery's due time against that reading.
func testRetryNeverEarly(t *testing.T, c redis.UniversalClient, retryAfter bool) {
	q := newQueue(t, c, Options{Shards: 4, MaxAttempts: 3, Backoff: func(int) time.Duration { return relDelay }})
	ctx := context.Background()
	const n = 300
	var (
		mu     sync.Mutex
		failed = map[string]time.Time{} // key -> Redis time read before failing
		early  []string
		left   = n
	)
	done := make(chan struct{})
	run(t, q, func(ctx context.Context, tk Task) error {
		if tk.Attempt == 1 {
			before := redisTime(t, c)
			mu.Lock()
			failed[tk.Key] = before
			mu.Unlock()
			if retryAfter {
				return RetryAfter(relDelay)
			}
			return errors.New("first attempt fails")
		}
		mu.Lock()
		defer mu.Unlock()
		if before := failed[tk.Key]; tk.Due.Before(before.Add(relDelay)) {
			early = append(early, fmt.Sprintf("%s failed at %s, due again at %s", tk.Key,
				before.Format(time.StampMicro), tk.Due.Format(time.StampMicro)))
		}
		if left--; left == 0 {
			close(done)
		}
		return nil
	})
	now := redisTime(t, c)
	for i := range n {
		_, err := q.Add(ctx, fmt.Sprint("k", i), nil, now)
		require.NoError(t, err)
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%d of %d tasks never came back for their second attempt within 60s", left, n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(early) > 0 {
		t.Errorf("%d of %d second deliveries due before the failing attempt's Redis time + %v, e.g. %s",
			len(early), n, relDelay, early[0])
	}
}

// testLeaseNeverEarly: a lease runs at least Lease from the claim's Redis time,
// or another worker could take the task over while its handler is still
// within its lease.
func testLeaseNeverEarly(t *testing.T, c redis.UniversalClient) {
	const lease = 2 * time.Second
	q := newQueue(t, c, Options{Shards: 1})
	ctx := context.Background()
	early := 0
	const n = 300
	for i := range n {
		key := fmt.Sprint("k", i)
		_, err := q.Add(ctx, key, nil, time.Unix(0, 0))
		require.NoError(t, err)
		before := redisTime(t, c)
		cl, err := q.claim(ctx, 0, 1, lease)
		require.NoError(t, err)
		require.Len(t, cl.tasks, 1)
		until, err := c.ZScore(ctx, q.keys[0][1], key).Result()
		require.NoError(t, err)
		if msTime(int64(until)).Before(before.Add(lease)) {
			early++
		}
		_, err = q.settle(ctx, 0, []outcome{{d: cl.tasks[0], kind: outcomeDone}})
		require.NoError(t, err)
	}
	assert.Zero(t, early, "of %d claims, leases ending before the claim's Redis time + lease", n)
}

// testRetentionNeverShort: a finished task is retained at least Retention from
// the settle's Redis time.
func testRetentionNeverShort(t *testing.T, c redis.UniversalClient) {
	const retention = time.Hour
	q := newQueue(t, c, Options{Shards: 1, Retention: retention})
	ctx := context.Background()
	short := 0
	const n = 300
	for i := range n {
		key := fmt.Sprint("k", i)
		_, err := q.Add(ctx, key, nil, time.Unix(0, 0))
		require.NoError(t, err)
		cl, err := q.claim(ctx, 0, 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, cl.tasks, 1)
		before := redisTime(t, c)
		_, err = q.settle(ctx, 0, []outcome{{d: cl.tasks[0], kind: outcomeDone}})
		require.NoError(t, err)
		until, err := c.ZScore(ctx, q.keys[0][5], key).Result()
		require.NoError(t, err)
		if msTime(int64(until)).Before(before.Add(retention)) {
			short++
		}
	}
	assert.Zero(t, short, "of %d settles, retentions ending before the settle's Redis time + Retention", n)
}
