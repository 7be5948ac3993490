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
	whileTaken(t, tw, func() { tw.AfterFunc(0, func() { ran[1]++ }) })
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

// whileTaken does what the advancer does with the bucket due now, calling
// arm between its taking the bucket from the queue and its flush (which
// waits for the shard's lock that callers hold), and runs the callbacks of
// the flush inline.
func whileTaken(t *testing.T, tw *TimingWheel, arm func()) {
	b, ok := tw.queue.PollDue(tw.queue.Now())
	require.True(t, ok)
	arm()
	var ready []func()
	_, done := b.shard.flush(b, chunk, &ready)
	require.True(t, done)
	for _, f := range ready {
		f()
	}
}

// pastScheduler's first run is at a fixed time, whatever the time it is
// asked at, then every ms.
type pastScheduler struct {
	first   time.Time
	started bool
}

func (p *pastScheduler) Next(prev time.Time) time.Time {
	if !p.started {
		p.started = true
		return p.first
	}
	return prev.Add(time.Millisecond)
}

// The same for a schedule whose first run is already past when it starts:
// it runs at the clock's next tick, in a bucket ahead of the one the
// advancer has taken, whatever the executor.
func TestScheduleFromThePastBehindATakenBucket(t *testing.T) {
	clock := NewFakeClock(time.Unix(0, 0))
	tw, err := newManual(time.Millisecond, 8, WithClock(clock), WithInlineCallbacks())
	require.NoError(t, err)
	defer tw.Stop()
	oneShard(tw)
	var ran [3]int
	tw.AfterFunc(5*time.Millisecond, func() { ran[0]++ })
	clock.Advance(5 * time.Millisecond)

	var sched *Timer
	whileTaken(t, tw, func() {
		sched = tw.ScheduleFunc(&pastScheduler{first: time.Unix(0, 0)}, func() { ran[1]++ })
	})
	require.Equal(t, [3]int{1, 0, 0}, ran)

	tw.AfterFunc(4*time.Millisecond, func() { ran[2]++ }) // tick 9: index 1, as tick 1
	tw.step()
	require.Equal(t, [3]int{1, 0, 0}, ran, "the schedule's first run is at the clock's next tick, 6")
	clock.Advance(time.Millisecond)
	tw.step()
	require.Equal(t, [3]int{1, 1, 0}, ran)
	require.True(t, sched.Stop())
	clock.Advance(3 * time.Millisecond)
	tw.step()
	require.Equal(t, [3]int{1, 1, 1}, ran)
	require.Zero(t, tw.Len())
}
