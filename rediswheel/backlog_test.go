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
// batches, never in one long script that blocks Redis.
//
// Work is measured as CPU time of Redis's main thread (INFO cpu), not wall
// time: on this shared 2-core VM Redis is preempted for tens, at times
// hundreds, of milliseconds whatever it runs, so the slow log, which times
// wall clock, flags even single ZSCOREs. CPU time is what a script takes from
// everyone else.
//
//   - Probes: 30 claims of a full batch (128 tasks) from the 100k backlog and
//     their 30 batched acks, one at a time, each under probeBound of CPU.
//     An unbounded claim of the backlog would take over 100 ms.
//   - The drain by Run of the rest: Redis CPU per task under perTaskBound, so
//     no call does work that grows with the backlog.
func TestBacklogDrainsInBoundedScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("100k tasks")
	}
	c := standalone(t)
	q := newQueue(t, c, Options{Concurrency: 256})
	ctx := context.Background()
	const (
		n            = 100_000
		probes       = 30
		probeBound   = 5 * time.Millisecond
		perTaskBound = 50 * time.Microsecond
	)

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
	for _, s := range st.Shards {
		due += s.Due
		assert.GreaterOrEqual(t, s.OldestDue, time.Hour, "shard %d: the oldest due task's wait", s.Shard)
	}
	require.Equal(t, int64(n), due)

	var claims, acks []time.Duration
	for i := range probes {
		shard := i % len(q.keys)
		var c claimed
		claims = append(claims, redisCPU(t, q, func() {
			c, err = q.claim(ctx, shard, maxBatch, time.Minute)
			require.NoError(t, err)
		}))
		require.Len(t, c.tasks, maxBatch)
		os := make([]outcome, len(c.tasks))
		for j, d := range c.tasks {
			os[j] = outcome{d: d, kind: outcomeDone}
		}
		acks = append(acks, redisCPU(t, q, func() {
			_, err = q.settle(ctx, shard, os)
			require.NoError(t, err)
		}))
	}
	slices.Sort(claims)
	slices.Sort(acks)
	t.Logf("Redis CPU from a %d backlog: claim of %d: median %v, max %v; ack of %d: median %v, max %v",
		n, maxBatch, claims[probes/2], claims[probes-1], maxBatch, acks[probes/2], acks[probes-1])
	assert.Less(t, claims[probes-1], probeBound, "the slowest claim of a full batch")
	assert.Less(t, acks[probes-1], probeBound, "the slowest ack of a full batch")
	left := int64(n - probes*maxBatch)

	var fired atomic.Int64
	start = time.Now()
	var drainTime time.Duration
	cpu := redisCPU(t, q, func() {
		run(t, q, func(ctx context.Context, tk Task) error {
			fired.Add(1)
			return nil
		})
		eventually(t, 2*time.Minute, "the backlog to drain", func() bool { return fired.Load() >= left && leftovers(t, q) == 0 })
		drainTime = time.Since(start)
	})
	assert.Equal(t, left, fired.Load(), "each task fired once")
	perTask := cpu / time.Duration(left)
	t.Logf("%d adds in %v (%.0f/s, %d goroutines); %d drained by Run in %v (%.0f/s), %v of Redis CPU per task",
		n, addTime.Round(time.Millisecond), n/addTime.Seconds(), adders,
		left, drainTime.Round(time.Millisecond), float64(left)/drainTime.Seconds(), perTask)
	assert.Less(t, perTask, perTaskBound, "Redis CPU per drained task")
}

// redisCPU runs call and returns the CPU time Redis's main thread spent
// meanwhile (on call's commands, its own INFO, and anything else it served).
func redisCPU(t *testing.T, q *Queue, call func()) time.Duration {
	cpu := func() time.Duration {
		info, err := q.client.Info(context.Background(), "cpu").Result()
		require.NoError(t, err)
		var total float64
		for _, line := range strings.Split(info, "\n") {
			name, value, _ := strings.Cut(strings.TrimSpace(line), ":")
			if name == "used_cpu_sys_main_thread" || name == "used_cpu_user_main_thread" {
				v, err := strconv.ParseFloat(value, 64)
				require.NoError(t, err)
				total += v
			}
		}
		require.NotZero(t, total, "no main-thread CPU in INFO cpu (Redis 7 or later)")
		return time.Duration(total * float64(time.Second))
	}
	before := cpu()
	call()
	return cpu() - before
}
