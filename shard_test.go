package timingwheel

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestArmingMovesOffABusyShard: a goroutine whose P's shard is locked by
// someone else (here, itself: as a goroutine preempted holding it would) arms
// its timer on another shard instead of waiting.
func TestArmingMovesOffABusyShard(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	busy := tw.lockShard() // the shard this P uses, now held
	var stuck atomic.Bool
	watchdog := time.AfterFunc(semWait, func() {
		stuck.Store(true)
		busy.mu.Unlock()
	})
	timer := tw.AfterFunc(time.Hour, func() {})
	if watchdog.Stop() {
		busy.mu.Unlock()
	}
	require.False(t, stuck.Load(), "AfterFunc waited for the lock of a busy shard")
	require.NotSame(t, busy, timer.owner.shard)
	if !raceEnabled { // whose slower calls leave more room for the goroutine to change P in between
		require.Equal(t, uint64(1), tw.Stats().Collisions)
	}
	require.True(t, timer.Stop())
}

// TestAGoroutineKeepsItsShard: timers armed one after another by one
// goroutine share a shard, so its P's locks and buckets stay in its cache.
func TestAGoroutineKeepsItsShard(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	perShard := map[*shard]int{}
	var timers []*Timer
	for range 1000 {
		timer := tw.AfterFunc(time.Hour, func() {})
		timers = append(timers, timer)
		perShard[timer.owner.shard]++
	}
	most := 0
	for _, n := range perShard {
		most = max(most, n)
	}
	// Preemption between two calls can move the goroutine to another P;
	// random picks would put about 1000/len(shards) in each.
	require.Greater(t, most, 900, "timers spread over %d shards: %v", len(perShard), perShard)
	for _, timer := range timers {
		require.True(t, timer.Stop())
	}
}
