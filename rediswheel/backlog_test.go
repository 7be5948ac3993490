package rediswheel

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An outage leaves a backlog of overdue tasks; it must drain in bounded
// batches, never in one long script that blocks Redis. Two checks, both timed
// inside Redis:
//
//   - Probes: by INFO commandstats around each call, the median claim of a full batch
//     (128 tasks) from the 100k backlog, and the median batched ack, take
//     under probeBound. The median, because this shared 2-core VM preempts
//     Redis for tens of ms now and then, whatever it runs.
//   - The whole drain by Run, by the slow log: no script call of ours takes drainBound, an
//     order of magnitude under what one unbounded script needs for 100k tasks
//     (~166 ms measured for a fetch-and-delete; ours would do more).
func TestBacklogDrainsInBoundedScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("100k tasks")
	}
	c := standalone(t)
	q := newQueue(t, c, Options{Concurrency: 256})
	ctx := context.Background()
	const (
		n          = 100_000
		probes     = 30
		probeBound = 3 * time.Millisecond
		drainBound = 50 * time.Millisecond
	)

	old, err := c.ConfigGet(ctx, "slowlog-log-slower-than").Result()
	require.NoError(t, err)
	oldLen, err := c.ConfigGet(ctx, "slowlog-max-len").Result()
	require.NoError(t, err)
	t.Cleanup(func() {
		c.ConfigSet(ctx, "slowlog-log-slower-than", old["slowlog-log-slower-than"])
		c.ConfigSet(ctx, "slowlog-max-len", oldLen["slowlog-max-len"])
	})
	slowlog := func(over time.Duration) {
		require.NoError(t, c.ConfigSet(ctx, "slowlog-log-slower-than", fmt.Sprint(over.Microseconds())).Err())
		require.NoError(t, c.ConfigSet(ctx, "slowlog-max-len", "4096").Err())
		require.NoError(t, c.SlowLogReset(ctx).Err())
	}
	// ours returns the durations of our namespace's calls of script s.
	ours := func(s string) []time.Duration {
		t.Helper()
		entries, err := c.SlowLogGet(ctx, 4096).Result()
		require.NoError(t, err)
		var ds []time.Duration
		for _, e := range entries {
			if len(e.Args) > 3 && strings.EqualFold(e.Args[0], "evalsha") && e.Args[1] == s &&
				strings.Contains(e.Args[3], q.opts.Namespace) {
				ds = append(ds, e.Duration)
				t.Logf("slow log: %v %.60q", e.Duration, e.Args[5:])
			}
		}
		slices.Sort(ds)
		return ds
	}

	start := time.Now()
	var wg sync.WaitGroup
	const adders = 16
	for w := range adders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += adders {
				// An hour overdue: the tasks of an outage.
				if _, err := q.Add(ctx, fmt.Sprint("k", i), []byte("p"), time.Now().Add(-time.Hour)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	addTime := time.Since(start)
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	var due int64
	for _, s := range st {
		due += s.Due
		assert.GreaterOrEqual(t, s.OldestDue, time.Hour, "shard %d: the oldest due task's wait", s.Shard)
	}
	require.Equal(t, int64(n), due)

	var claims, acks []time.Duration
	for i := range probes {
		shard := i % len(q.keys)
		var c claimed
		claims = append(claims, scriptTime(t, q, func() {
			c, err = q.claim(ctx, shard, maxBatch, time.Minute)
			require.NoError(t, err)
		}))
		require.Len(t, c.tasks, maxBatch)
		os := make([]outcome, len(c.tasks))
		for j, d := range c.tasks {
			os[j] = outcome{d: d, kind: "ok"}
		}
		acks = append(acks, scriptTime(t, q, func() {
			_, err = q.settle(ctx, shard, os)
			require.NoError(t, err)
		}))
	}
	slices.Sort(claims)
	slices.Sort(acks)
	t.Logf("in Redis, from a %d backlog: claim of %d: median %v, max %v; ack of %d: median %v, max %v",
		n, maxBatch, claims[probes/2], claims[probes-1], maxBatch, acks[probes/2], acks[probes-1])
	assert.Less(t, claims[probes/2], probeBound, "median claim of a full batch")
	assert.Less(t, acks[probes/2], probeBound, "median ack of a full batch")
	left := int64(n - probes*maxBatch)

	slowlog(drainBound)
	var fired atomic.Int64
	start = time.Now()
	run(t, q, func(ctx context.Context, tk Task) error {
		fired.Add(1)
		return nil
	})
	eventually(t, 2*time.Minute, "the backlog to drain", func() bool { return fired.Load() >= left && leftovers(t, q) == 0 })
	drainTime := time.Since(start)
	assert.Equal(t, left, fired.Load(), "each task fired once")
	t.Logf("%d adds in %v (%.0f/s, %d goroutines); %d drained by Run in %v (%.0f/s)",
		n, addTime.Round(time.Millisecond), n/addTime.Seconds(), adders,
		left, drainTime.Round(time.Millisecond), float64(left)/drainTime.Seconds())
	for _, s := range []string{claimScript.Hash(), settleScript.Hash(), extendScript.Hash()} {
		for _, d := range ours(s) {
			t.Errorf("a script call took %v in Redis (bound %v)", d, drainBound)
		}
	}
}

// scriptTime runs call, which must make one script call, and returns the time
// Redis spent in it, by the evalsha line of INFO commandstats.
func scriptTime(t *testing.T, q *Queue, call func()) time.Duration {
	usec := func() int64 {
		info, err := q.client.Info(context.Background(), "commandstats").Result()
		require.NoError(t, err)
		for _, line := range strings.Split(info, "\n") {
			if rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:"); ok {
				for _, field := range strings.Split(rest, ",") {
					if v, ok := strings.CutPrefix(field, "usec="); ok {
						n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
						require.NoError(t, err)
						return n
					}
				}
			}
		}
		return 0
	}
	before := usec()
	call()
	return time.Duration(usec()-before) * time.Microsecond
}
