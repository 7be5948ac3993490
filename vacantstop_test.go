package timingwheel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStopWithAVacantBucketQueued: a wheel stopped while a vacant bucket is
// still queued (an early alarm keeps one, see retire) leaves nothing that a
// ring under way could take as vacant: the take after the stop finds the
// bucket's shard stopped and its vacant list empty, and must not trip on a
// stale position in it.
func TestStopWithAVacantBucketQueued(t *testing.T) {
	tw, err := newManual(time.Millisecond, 64) // the System clock: an early alarm
	require.NoError(t, err)
	oneShard(tw)
	require.True(t, tw.queue.Early())
	stopSecondAtHead(t, tw, 2*time.Millisecond, noop)
	require.Equal(t, 1, vacantCount(t, tw), "the lone timer's bucket was not kept vacant")
	require.Eventually(t, func() bool { return tw.queue.Next() <= tw.queue.Now() }, 30*time.Second, time.Millisecond)
	tw.shards[0].stop() // as Stop does, before the queue is cleared
	_, ok := tw.take(tw.queue.Now())
	require.True(t, ok)
	tw.Stop()
}

// TestFullVacantListGivesUpTheOldest: where a shard on the System clock may
// keep no more vacant buckets, the one a Stop empties now stays vacant and
// the oldest is withdrawn: timers land in the newest slot, and withdrawing
// it instead cost every later arming an Offer and every Stop a Remove.
func TestFullVacantListGivesUpTheOldest(t *testing.T) {
	tw, err := newManual(time.Millisecond, 64) // the System clock: an early alarm
	require.NoError(t, err)
	defer tw.Stop()
	oneShard(tw)
	// Four buckets that stay: four vacant ones may be kept beside them. The
	// nearest keeps the emptied buckets from being the queue's head, which
	// RemoveHead would take out of the queue instead.
	defer tw.AfterFunc(50*time.Millisecond, noop).Stop()
	for i := range 3 {
		defer tw.AfterFunc(time.Duration(i+1)*time.Hour, noop).Stop()
	}
	var emptied []*bucket
	for i := range 5 {
		tm := tw.AfterFunc(time.Duration(i+1)*100*time.Millisecond, noop)
		emptied = append(emptied, tm.owner.entry(tm).bucket)
		require.True(t, tm.Stop())
	}
	require.NotSame(t, emptied[0], emptied[4])
	require.Equal(t, 4, vacantCount(t, tw))
	s := &tw.shards[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	require.NotZero(t, emptied[4].vacant, "the bucket emptied last was withdrawn")
	require.Zero(t, emptied[0].vacant, "the oldest vacant bucket was kept over the newest")
}

// stopSecondAtHead arms a timer due in d at the queue's head and stops it,
// as the second head emptied at its bucket's expiration, and returns it. On
// the System clock the first head emptied at an expiration is taken out of
// the queue and the early alarm moved on (delayqueue's RemoveHead); the
// second is left queued, vacant, for the ring the alarm is set for. The
// pair is armed again until both land in one tick.
func stopSecondAtHead(t *testing.T, tw *TimingWheel, d time.Duration, f func()) *Timer {
	t.Helper()
	for range 1000 {
		first := tw.AfterFunc(d, f)
		at := tw.queue.Next()
		require.True(t, first.Stop())
		tm := tw.AfterFunc(d, f)
		same := tw.queue.Next() == at
		require.True(t, tm.Stop())
		if same && tw.queue.Next() == at {
			return tm
		}
	}
	t.Fatal("no two timers armed in one tick in 1000 tries")
	return nil
}
