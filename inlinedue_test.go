package timingwheel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// With inline callbacks, a timer due at once goes to the bucket of the next
// tick. It must be the clock's next tick, not only the shard's: between the
// advancer taking a due bucket from the queue and its flush moving the
// shard's currentTick on (the flush waits for the shard's lock, which callers
// hold), currentTick is behind that bucket. A bucket made at currentTick+1
// was then overtaken by the flush, and a later rotation's timer landed in it
// while it was still queued for its old slot: one bucket, two slots, flushed
// and released twice.
func TestInlineDueAtOnceBehindATakenBucket(t *testing.T) {
	clock := NewFakeClock(time.Unix(0, 0))
	tw, err := newManual(time.Millisecond, 8, WithClock(clock), WithInlineCallbacks())
	require.NoError(t, err)
	defer tw.Stop()
	oneShard(tw)
	var ran [3]int // inline: callbacks run inside step, on this goroutine
	tw.AfterFunc(5*time.Millisecond, func() { ran[0]++ })
	clock.Advance(5 * time.Millisecond)

	// The advancer takes the due bucket (tick 5) and, before it can lock
	// the shard, a caller arms a timer due at once.
	b, ok := tw.queue.PollDue(tw.queue.Now())
	require.True(t, ok)
	tw.AfterFunc(0, func() { ran[1]++ })
	var ready []func()
	_, done := b.shard.flush(b, chunk, &ready)
	require.True(t, done)
	for _, f := range ready {
		f()
	}
	require.Equal(t, [3]int{1, 0, 0}, ran)

	// Tick 9 is in the same level-0 index (9 mod 8) as tick 1.
	tw.AfterFunc(4*time.Millisecond, func() { ran[2]++ })
	tw.step()
	require.Equal(t, [3]int{1, 0, 0}, ran, "the timer due at once runs at the clock's next tick, 6")
	clock.Advance(time.Millisecond)
	tw.step()
	require.Equal(t, [3]int{1, 1, 0}, ran)
	clock.Advance(3 * time.Millisecond)
	tw.step()
	require.Equal(t, [3]int{1, 1, 1}, ran)
	require.Zero(t, tw.Len())
}
