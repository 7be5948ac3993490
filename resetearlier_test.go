package timingwheel

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestResetEarlierStaysInItsBucket: a timer Reset earlier, to a tick that
// files it into the bucket it is in, stays there, and the bucket's
// expiration comes earlier with it, rather than the bucket emptying,
// leaving the queue and coming back; a deadline tightened a little at a
// time moves the expiration once, an eighth of its time early (see
// earlyExpiration); the timer fires at its new due tick, never before.
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
	expirations := map[int64]bool{}
	for d := 9990 * time.Millisecond; d > 9900*time.Millisecond; d -= 10 * time.Millisecond {
		require.True(t, tm.Reset(d))
		s.mu.Lock()
		stayed := tm.bucket == b && tm.slot == slot
		due, expiration := tm.due, b.expiration
		s.mu.Unlock()
		// Had it left b and come back, it would be b's last timer now.
		require.True(t, stayed, "Reset to %v left the bucket", d)
		require.LessOrEqual(t, expiration, due, "Reset to %v: the bucket expires after its timer", d)
		require.GreaterOrEqual(t, expiration, due-due/8, "Reset to %v: the bucket expires more than an eighth early", d)
		expirations[expiration] = true
	}
	require.Len(t, expirations, 1, "a deadline tightened 10 ms at a time moved its bucket more than once")
	last := 9910 * time.Millisecond
	clock.Advance(last - time.Millisecond)
	require.Never(t, func() bool { return fired.Load() > 0 }, 50*time.Millisecond, time.Millisecond, "fired before its due tick")
	clock.Advance(2 * time.Millisecond)
	require.Eventually(t, func() bool { return fired.Load() == 1 }, 30*time.Second, time.Millisecond)
}

// TestEarlyAlarmTakesAVacantHead: on the System clock, where the alarm is
// early (see delayqueue's lazy.go), a timer stopped at the head of the
// queue leaves its bucket queued, vacant, rather than taking it out under
// the queue's lock; the advance that finds it due (the ring the alarm was
// set for, driven here by step) takes and releases it, and nothing fires.
// No poller runs, so the Stop cannot race a ring however slow the machine.
func TestEarlyAlarmTakesAVacantHead(t *testing.T) {
	tw, err := newManual(time.Millisecond, 64) // the System clock: an early alarm
	require.NoError(t, err)
	defer tw.Stop()
	oneShard(tw) // every timer in one shard, so that it may keep one vacant
	require.True(t, tw.queue.Early())
	for range 3 {
		defer tw.AfterFunc(time.Hour+time.Duration(rand.IntN(1000))*time.Second, noop).Stop()
	}
	later := tw.queue.Next()
	stopSecondAtHead(t, tw, 2*time.Millisecond, func() { panic("a stopped timer fired") })
	head := tw.queue.Next()
	require.Less(t, head, later, "the stopped timer's bucket left the queue")
	require.Eventually(t, func() bool { return tw.queue.Now() >= head }, 30*time.Second, time.Millisecond)
	tw.step()
	require.Equal(t, later, tw.queue.Next(), "the vacant bucket was not taken")
	require.Zero(t, vacantCount(t, tw))
	require.Equal(t, 3, tw.Len())
	require.Zero(t, tw.Stats().Fired)
}

// TestTakenVacantHeadIsTheFlushs: a vacant bucket the advancer takes at the
// head (where an early alarm leaves one, see retire) is its flush's to
// release: a Stop that releases another bucket meanwhile, and with it
// withdraws vacant buckets over the bound, must not release it too, or the
// flush releases it a second time, from a level already gone.
func TestTakenVacantHeadIsTheFlushs(t *testing.T) {
	tw, err := newManual(time.Millisecond, 64) // the System clock: an early alarm
	require.NoError(t, err)
	defer tw.Stop()
	oneShard(tw)
	require.True(t, tw.queue.Early())
	var far [3]*Timer // in three buckets of their own
	for i := range far {
		far[i] = tw.AfterFunc(time.Duration(i+1)*time.Hour, noop)
	}
	stopSecondAtHead(t, tw, 2*time.Millisecond, noop) // its bucket stays queued, vacant: 1 of 4
	require.True(t, far[0].Stop())                    // vacant: 2 of 4
	require.Equal(t, 2, vacantCount(t, tw))
	require.Eventually(t, func() bool { return tw.queue.Next() <= tw.queue.Now() }, 30*time.Second, time.Millisecond)
	b, ok := tw.take(tw.queue.Now())
	require.True(t, ok)
	// Were the taken bucket still listed vacant, one more would be over
	// the bound: this Stop would withdraw far[1]'s bucket, and its release
	// the last vacant one, the taken bucket.
	require.True(t, far[1].Stop())
	var ready []func()
	n, done := b.shard.flush(b, chunk, &ready)
	require.Zero(t, n)
	require.True(t, done)
	require.Equal(t, 1, vacantCount(t, tw), "one bucket is kept vacant (vacantFit)")
	require.Equal(t, 2, tw.shards[0].buckets, "far[2]'s and the vacant one should be left, or one was released twice")
	require.True(t, far[2].Stop())
}
