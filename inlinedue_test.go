package timingwheel

import (
	"sync/atomic"
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
// arm between its taking the bucket (take) and its flush (which waits for
// the shard's lock that callers hold), and runs the callbacks of the flush
// inline.
func whileTaken(t *testing.T, tw *TimingWheel, arm func()) {
	b, ok := tw.take(tw.queue.Now())
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

// The same for any timer armed on a clock reading taken before the advancer
// took its bucket (Keyed reads the clock before its own lock; any caller may
// be preempted between reading the clock and locking the shard): its due
// tick may be behind the taken bucket's. Before the advancer moved the
// shard's time on as it took the bucket, such a timer made a bucket behind
// the taken one, which the flush then overtook: a later timer of the same
// level-0 index was filed into it while it was still queued for its old
// slot, and fired 5 ticks early when that slot came up; the bucket was then
// flushed and released twice (index out of range in release, found by CI in
// TestKeyedStress).
func TestStaleClockBehindATakenBucket(t *testing.T) {
	clock := NewFakeClock(time.Unix(0, 0))
	tw, err := newManual(time.Millisecond, 8, WithClock(clock))
	require.NoError(t, err)
	defer tw.Stop()
	oneShard(tw)
	var ran [3]atomic.Int32
	tw.AfterFunc(5*time.Millisecond, func() { ran[0].Add(1) })
	late := tw.AfterFunc(time.Hour, func() { ran[1].Add(1) })
	stale := tw.queue.Now() // 0
	clock.Advance(5 * time.Millisecond)

	// The advancer takes the bucket of tick 5; a caller whose clock read 0
	// moves late to 2 ms: due at tick 2, behind it.
	whileTaken(t, tw, func() { require.True(t, late.resetAt(2*time.Millisecond, stale)) })
	// Tick 10 is in the same level-0 index (10 mod 8) as tick 2.
	early := tw.AfterFunc(5*time.Millisecond, func() { ran[2].Add(1) })
	tw.step()
	waitRan := func(want [3]int32) {
		t.Helper()
		require.Eventually(t, func() bool {
			return ran[0].Load() == want[0] && ran[1].Load() == want[1] && ran[2].Load() == want[2]
		}, semWait, time.Millisecond, "ran %v %v %v, want %v", ran[0].Load(), ran[1].Load(), ran[2].Load(), want)
	}
	waitRan([3]int32{1, 1, 0}) // late's 2 ms are past: it runs; early is due at 10
	require.Equal(t, 1, tw.Len())
	clock.Advance(4 * time.Millisecond)
	tw.step()
	time.Sleep(10 * time.Millisecond)
	require.Equal(t, int32(0), ran[2].Load(), "a timer due at tick 10 ran at tick 9")
	clock.Advance(time.Millisecond)
	tw.step()
	waitRan([3]int32{1, 1, 1})
	require.False(t, early.Stop())
	require.Zero(t, tw.Len())
}
