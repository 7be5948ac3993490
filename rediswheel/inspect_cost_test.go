package rediswheel

import (
	"context"
	"fmt"
	"slices"
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
// which 1% are retrying: Redis main-thread CPU per call (INFO cpu, as
// TestBacklogDrainsInBoundedScripts; the server is shared, so each figure is
// the least of 25 short windows) and round trips. The bounds are loose: they catch
// a script that grows with the shard, not a slow machine.
func TestInspectionCost(t *testing.T) {
	if testing.Short() {
		t.Skip("20k tasks")
	}
	c := standalone(t)
	trips := &roundTrips{}
	c.AddHook(trips)
	q := newQueue(t, c, Options{})
	ctx := context.Background()
	const n = 20_000
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

	// perCall is the least over 25 windows of the Redis CPU of calls calls
	// of f, divided by calls, and the round trips of one call. The least:
	// other clients of the shared server only ever add to a window.
	perCall := func(calls int, f func(i int)) (time.Duration, int64) {
		var cpu []time.Duration
		var trip int64
		for w := range 25 {
			before := trips.n.Load()
			d := redisCPU(t, q, func() {
				for i := range calls {
					f(w*calls + i)
				}
			})
			trip = (trips.n.Load() - before - 2) / int64(calls) // less redisCPU's two INFOs
			cpu = append(cpu, d/time.Duration(calls))
		}
		slices.Sort(cpu)
		return cpu[0], trip
	}
	ping, _ := perCall(20, func(int) { require.NoError(t, c.Ping(ctx).Err()) })
	get, getTrips := perCall(20, func(i int) {
		_, err := q.Get(ctx, fmt.Sprintf("task:%06d", (i*7919)%n))
		require.NoError(t, err)
	})
	page := func(state State, limit int) func(int) {
		cursor := ""
		return func(int) {
			tasks, next, err := q.List(ctx, state, cursor, limit)
			require.NoError(t, err)
			if state == StateScheduled {
				require.Len(t, tasks, limit)
			}
			cursor = next // "" at the end: start over
		}
	}
	list10, list10Trips := perCall(3, page(StateScheduled, 10))
	list100, list100Trips := perCall(2, page(StateScheduled, 100))
	retry100, retryTrips := perCall(2, page(StateRetrying, 100))
	t.Logf("Redis CPU per call, %d tasks on 16 shards: PING %v; Get %v (%d round trip); List scheduled page of 10 %v, of 100 %v (%d, %d round trips); List retrying (1%% of due) page of up to 100 %v (%d round trips)",
		n, ping, get, getTrips, list10, list100, list10Trips, list100Trips, retry100, retryTrips)
	assert.Equal(t, int64(1), getTrips)
	assert.Equal(t, int64(2), list100Trips, "one pipeline for positions, one for the tasks")
	assert.Less(t, get, 500*time.Microsecond)
	assert.Less(t, list100, 20*time.Millisecond)
	assert.Less(t, retry100, 20*time.Millisecond)
}
