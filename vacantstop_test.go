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
	require.True(t, tw.AfterFunc(2*time.Millisecond, noop).Stop())
	require.Equal(t, 1, vacantCount(t, tw), "the lone timer's bucket was not kept vacant")
	require.Eventually(t, func() bool { return tw.queue.Next() <= tw.queue.Now() }, 30*time.Second, time.Millisecond)
	tw.shards[0].stop() // as Stop does, before the queue is cleared
	_, ok := tw.take(tw.queue.Now())
	require.True(t, ok)
	tw.Stop()
}
