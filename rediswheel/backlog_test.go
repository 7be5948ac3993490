package rediswheel

import (
	"context"
	"fmt"
	"math"
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
// Work is counted, not timed: the commands Redis runs (INFO commandstats,
// scripts' redis.call()s included) and the tasks per script call. Time, even
// Redis's CPU time, is at the mercy of the machine's load (a "claim < 5 ms of
// CPU" bound failed CI on a shared 2-core VM); counts are not. The Redis CPU
// of each figure is logged for a reader, and measured by BenchmarkClaimBacklog.
//
//   - Probes: claims of a full batch (128 tasks) and their batched acks, one
//     at a time, from a 100k backlog and from a backlog of a few batches:
//     each must run as many Redis commands from the big backlog as from the
//     small one, so nothing a script does grows with the backlog.
//   - The drain by Run of the rest: every claim and settle moves at most a
//     batch, and Run's script calls run no more commands on average than a
//     full batch's claim or ack.
func TestBacklogDrainsInBoundedScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("100k tasks")
	}
	c := standalone(t)
	ctx := context.Background()
	const (
		n      = 100_000
		probes = 30
	)

	// probe claims a full batch of shard and acks it, and returns the
	// commands and Redis CPU of each.
	probe := func(q *testQueue, shard int) (claimCmds, ackCmds int64, claimCPU, ackCPU time.Duration) {
		var cl claimed
		var err error
		claimCPU = redisCPU(t, q, func() {
			claimCmds = redisCommands(t, c, func() {
				cl, err = q.claim(ctx, shard, maxBatch, time.Minute)
				require.NoError(t, err)
			})
		})
		require.Len(t, cl.tasks, maxBatch)
		os := make([]outcome, len(cl.tasks))
		for j, d := range cl.tasks {
			os[j] = outcome{d: d, kind: outcomeDone}
		}
		ackCPU = redisCPU(t, q, func() {
			ackCmds = redisCommands(t, c, func() {
				_, err = q.settle(ctx, shard, os)
				require.NoError(t, err)
			})
		})
		return claimCmds, ackCmds, claimCPU, ackCPU
	}

	// The small backlog: a few batches on one shard.
	small := newQueue(t, c, Options{Shards: 1})
	var items []Item
	for i := range 6 * maxBatch {
		items = append(items, Item{Key: fmt.Sprint("k", i), Payload: []byte("p"), At: time.Now().Add(-time.Hour)})
	}
	_, err := small.AddBatch(ctx, items)
	require.NoError(t, err)
	smallClaim, smallAck := int64(math.MaxInt64), int64(math.MaxInt64)
	for range 5 {
		cc, ac, _, _ := probe(small, 0)
		smallClaim, smallAck = min(smallClaim, cc), min(smallAck, ac)
	}

	var claimsSeen, settlesSeen, overBatch atomic.Int64
	q := newQueue(t, c, Options{Concurrency: 256, Observer: batchObserver{
		claims: &claimsSeen, settles: &settlesSeen, overBatch: &overBatch}})
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
	awaitDone(t, "the adders", wg.Wait)
	addTime := time.Since(start)
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	var due int64
	for _, s := range st.Shards {
		due += s.Due
		assert.GreaterOrEqual(t, s.OldestDue, time.Hour-msRounding, "shard %d: the oldest due task's wait", s.Shard)
	}
	require.Equal(t, int64(n), due)

	bigClaim, bigAck := int64(math.MaxInt64), int64(math.MaxInt64)
	var claimCPU, ackCPU []time.Duration
	for i := range probes {
		cc, ac, ccpu, acpu := probe(q, i%len(q.keys))
		bigClaim, bigAck = min(bigClaim, cc), min(bigAck, ac)
		claimCPU, ackCPU = append(claimCPU, ccpu), append(ackCPU, acpu)
	}
	slices.Sort(claimCPU)
	slices.Sort(ackCPU)
	t.Logf("Redis commands per full batch of %d: claim %d, ack %d from a %d backlog, claim %d, ack %d from %d; Redis CPU (not asserted) from the %d backlog: claim median %v, max %v; ack median %v, max %v",
		maxBatch, bigClaim, bigAck, n, smallClaim, smallAck, 6*maxBatch, n, claimCPU[probes/2], claimCPU[probes-1], ackCPU[probes/2], ackCPU[probes-1])
	assert.Equal(t, smallClaim, bigClaim, "Redis commands of a full claim: from a 100k backlog as from a small one")
	assert.Equal(t, smallAck, bigAck, "Redis commands of a full ack: from a 100k backlog as from a small one")
	left := int64(n - probes*maxBatch)

	var fired atomic.Int64
	claimsSeen.Store(0)
	settlesSeen.Store(0)
	start = time.Now()
	var drainTime time.Duration
	cmds := redisCommands(t, c, func() {
		stop := run(t, q, func(ctx context.Context, tk Task) error {
			fired.Add(1)
			return nil
		})
		// Polls only the local count: Redis commands here would be counted.
		eventually(t, 5*time.Minute, "the backlog to drain", func() bool { return fired.Load() >= left })
		stop() // settles the last tasks
		drainTime = time.Since(start)
	})
	assert.Equal(t, left, fired.Load(), "each task fired once")
	assert.Zero(t, leftovers(t, q), "every task settled")
	assert.Zero(t, overBatch.Load(), "claims or settles of more than a batch")
	calls := claimsSeen.Load() + settlesSeen.Load()
	perCall := float64(cmds) / float64(calls)
	t.Logf("%d adds in %v (%.0f/s, %d goroutines); %d drained by Run in %v (%.0f/s): %d claims and %d settles, %.1f Redis commands per call, %.1f per task",
		n, addTime.Round(time.Millisecond), n/addTime.Seconds(), adders,
		left, drainTime.Round(time.Millisecond), float64(left)/drainTime.Seconds(), claimsSeen.Load(), settlesSeen.Load(), perCall, float64(cmds)/float64(left))
	assert.LessOrEqual(t, perCall, float64(max(bigClaim, bigAck)), "Redis commands per claim or settle of the drain, on average: at most a full batch's")
}

// batchObserver counts Run's claims and settles, and those that moved more
// than a batch.
type batchObserver struct {
	NoopObserver
	claims, settles, overBatch *atomic.Int64
}

func (o batchObserver) Claimed(e ClaimEvent) {
	o.claims.Add(1)
	if e.Tasks > maxBatch {
		o.overBatch.Add(1)
	}
}

func (o batchObserver) Settled(e SettleEvent) {
	o.settles.Add(1)
	if e.Tasks > maxBatch {
		o.overBatch.Add(1)
	}
}

// redisCPU runs call and returns the CPU time Redis's main thread spent
// meanwhile (on call's commands, its own INFO, and anything else it served).
func redisCPU(t testing.TB, q *testQueue, call func()) time.Duration {
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
