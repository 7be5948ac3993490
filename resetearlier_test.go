package timingwheel

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestResetEarlierStaysInItsBucket: a timer Reset earlier, to a tick that
// files it into the bucket it is in, stays there, and the bucket's
// expiration comes earlier with it, rather than the bucket emptying,
// leaving the queue and coming back; it fires at its new due tick, never
// before.
func TestResetEarlierStaysInItsBucket(t *testing.T) {
	clock := NewFakeClock(time.Unix(1_000_000, 0))
	tw, err := New(time.Millisecond, 64, WithClock(clock))
	require.NoError(t, err)
	defer tw.Stop()
	var fired atomic.Int64
	tm := tw.AfterFunc(10*time.Second, func() { fired.Add(1) })
	other := tw.AfterFunc(10500*time.Millisecond, noop) // after tm, in its bucket
	defer other.Stop()
	s := tm.owner.shard
	s.mu.Lock()
	b, slot, shared := tm.bucket, tm.slot, tm.bucket == other.bucket
	s.mu.Unlock()
	require.True(t, shared, "10 s and 10.5 s share a bucket of 4096 ticks")
	require.NotZero(t, b.level(), "10 s on a 64-slot wheel of 1 ms is on a coarse level")
	for d := 9990 * time.Millisecond; d > 9900*time.Millisecond; d -= 10 * time.Millisecond {
		require.True(t, tm.Reset(d))
		s.mu.Lock()
		stayed := tm.bucket == b && tm.slot == slot
		due, expiration := tm.due, b.expiration
		s.mu.Unlock()
		// Had it left b and come back, it would be b's last timer now.
		require.True(t, stayed, "Reset to %v left the bucket", d)
		require.Equal(t, due, expiration, "Reset to %v: the bucket did not come earlier with its timer", d)
	}
	last := 9910 * time.Millisecond
	clock.Advance(last - time.Millisecond)
	require.Never(t, func() bool { return fired.Load() > 0 }, 50*time.Millisecond, time.Millisecond, "fired before its due tick")
	clock.Advance(2 * time.Millisecond)
	require.Eventually(t, func() bool { return fired.Load() == 1 }, 30*time.Second, time.Millisecond)
}
