package rediswheel

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundTrips counts the client's round trips: single commands and
// pipelines (each one trip on a standalone server).
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { r.n.Add(1); return next(ctx, cmd) }
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { r.n.Add(1); return next(ctx, cmds) }
}

// What Get and List cost Redis, on 16 shards holding 20k scheduled tasks of
// which 1% are retrying: Redis commands per call (INFO commandstats,
// scripts' redis.call()s included; each figure the least of 5 windows, as
// other clients of a shared server only add to a window) and round trips.
// Each must be what the same call costs on a namespace of 10k tasks: no
// call's work grows with the shard. Counted, not timed: CPU bounds (Get
// under 500 µs) failed on a loaded machine.
func TestInspectionCost(t *testing.T) {
	if testing.Short() {
		t.Skip("20k tasks")
	}
	c := standalone(t)
	trips := &roundTrips{}
	c.AddHook(trips)
	ctx := context.Background()

	type cost struct{ get, list10, list100, retry100, getTrips, list10Trips, list100Trips, retryTrips int64 }
	measure := func(n int) cost {
		q := newQueue(t, c, Options{})
		base := time.Now().Add(time.Hour)
		var items []Item
		for i := range n {
			items = append(items, Item{Key: fmt.Sprintf("task:%06d", i), Payload: make([]byte, 100), At: base.Add(time.Duration(i) * time.Millisecond)})
		}
		for len(items) > 0 {
			k := min(len(items), 4096)
			_, err := q.AddBatch(ctx, items[:k])
			require.NoError(t, err)
			items = items[k:]
		}
		for i := 0; i < n; i += 100 {
			setField(t, q, "e", fmt.Sprintf("task:%06d", i), "boom")
		}
		// perCall is the least over 5 windows of the Redis commands of calls
		// calls of f, divided by calls, and the round trips of one call.
		perCall := func(calls int, f func(i int)) (int64, int64) {
			least, trip := int64(math.MaxInt64), int64(0)
			for w := range 5 {
				before := trips.n.Load()
				cmds := redisCommands(t, c, func() {
					for i := range calls {
						f(w*calls + i)
					}
				})
				trip = (trips.n.Load() - before - 2) / int64(calls) // less redisCommands's two INFOs
				least = min(least, cmds/int64(calls))
			}
			return least, trip
		}
		page := func(state State, limit int) func(int) {
			cursor := ""
			return func(int) {
				tasks, next, err := q.List(ctx, state, cursor, limit)
				require.NoError(t, err)
				if state == StateScheduled {
					require.Len(t, tasks, min(limit, n))
				}
				cursor = next // "" at the end: start over
			}
		}
		var k cost
		k.get, k.getTrips = perCall(20, func(i int) {
			_, err := q.Get(ctx, fmt.Sprintf("task:%06d", (i*7919)%n))
			require.NoError(t, err)
		})
		k.list10, k.list10Trips = perCall(3, page(StateScheduled, 10))
		k.list100, k.list100Trips = perCall(1, page(StateScheduled, 100))
		// Always the first page: with 1% retrying, each call examines
		// List's whole scan budget (listScan per shard), on 10k tasks as on
		// 20k, where a later page of the 10k would reach the end sooner.
		k.retry100, k.retryTrips = perCall(1, func(int) {
			_, _, err := q.List(ctx, StateRetrying, "", 100)
			require.NoError(t, err)
		})
		t.Logf("Redis commands per call, %d tasks on 16 shards: Get %d (%d round trip); List scheduled page of 10 %d, of 100 %d (%d, %d round trips); List retrying (1%% of due) page of up to 100 %d (%d round trips)",
			n, k.get, k.getTrips, k.list10, k.list100, k.list10Trips, k.list100Trips, k.retry100, k.retryTrips)
		return k
	}
	small, big := measure(10_000), measure(20_000)
	assert.Equal(t, int64(1), big.getTrips)
	assert.Equal(t, int64(2), big.list100Trips, "one pipeline for positions, one for the tasks")
	// Twice the tasks, the same work per call: a call that looked at every
	// task would run twice the commands. A page's count varies by a
	// command or two with where the page's tasks fall among the shards,
	// so each count may differ by 1 + 5%, far below a doubling.
	for _, c := range []struct {
		name       string
		small, big int64
	}{
		{"Get", small.get, big.get},
		{"List page of 10", small.list10, big.list10},
		{"List page of 100", small.list100, big.list100},
		{"List retrying", small.retry100, big.retry100},
		{"Get round trips", small.getTrips, big.getTrips},
		{"List round trips (10)", small.list10Trips, big.list10Trips},
		{"List round trips (100)", small.list100Trips, big.list100Trips},
		{"List retrying round trips", small.retryTrips, big.retryTrips},
	} {
		assert.LessOrEqual(t, c.big, c.small+1+c.small/20,
			"%s: %d Redis commands a call on 20k tasks, %d on 10k", c.name, c.big, c.small)
	}
}
