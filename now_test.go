package timingwheel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The wheel's own clock read is the queue's: on the system clock it reads
// time.Since(epoch) itself, on any other clock it asks the queue.
func TestNowIsTheQueuesNow(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	require.True(t, tw.system)
	for range 1000 {
		before := tw.queue.Now()
		now := tw.now()
		after := tw.queue.Now()
		require.LessOrEqual(t, before, now)
		require.LessOrEqual(t, now, after)
	}

	clock := NewFakeClock(time.Unix(1e9, 0))
	fake, err := New(time.Millisecond, 64, WithClock(clock))
	require.NoError(t, err)
	defer fake.Stop()
	require.False(t, fake.system)
	clock.Advance(1500 * time.Millisecond)
	require.Equal(t, 1500*time.Millisecond, fake.now())
	require.Equal(t, fake.queue.Now(), fake.now())
}
