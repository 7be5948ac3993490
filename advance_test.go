package timingwheel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCallersAdvanceTheWheel: while callers keep calling, they flush due
// buckets themselves and the poller never wakes; when they stop, the poller
// fires what is due within one grace (two ticks, at most 2 ms), twice (one
// miss is forgiven), and then on time until callers help again. The FakeClock makes the order exact: the
// poller's alarm rings only when Advance reaches it.
func TestCallersAdvanceTheWheel(t *testing.T) {
	const tick = time.Millisecond
	clock := NewFakeClock(testEpoch)
	tw, err := New(tick, 8, WithClock(clock))
	require.NoError(t, err)
	defer tw.Stop()
	firedAt := make(chan time.Duration, 16)
	arm := func(d time.Duration) {
		target := clock.Now().Sub(testEpoch) + d
		tw.AfterFunc(d, func() {
			now := clock.Now().Sub(testEpoch)
			require.GreaterOrEqual(t, now, target, "fired early")
			firedAt <- target
		})
	}
	for k := 1; k <= 10; k++ {
		arm(time.Duration(k) * tick)
	}
	caller := func() { tw.AfterFunc(time.Hour, func() {}).Stop() }

	// The grace starts off, so the first due bucket rings the poller on
	// time. Callers turn it on when they reach a due bucket before the
	// alarm, which on a FakeClock they never do; do it for them.
	clock.Advance(tick)
	require.Equal(t, tick, awaitSignal(t, firedAt, "the first alarm"))
	require.Equal(t, uint64(1), tw.Stats().Wakeups)
	// The callback ran on its own goroutine, possibly before the poller
	// released the advancer; a caller finding it held leaves the work to
	// the poller's alarm, which this FakeClock would never reach. Wait for
	// the poller to be back asleep.
	tw.adv.mu.Lock()
	//lint:ignore SA2001 taking the lock is the wait
	tw.adv.mu.Unlock()
	tw.queue.SetGrace(tw.adv.grace)

	for k := 2; k <= 10; k++ {
		clock.Advance(tick)
		caller()
		select {
		case at := <-firedAt:
			require.Equal(t, time.Duration(k)*tick, at)
		case <-time.After(semWait):
			t.Fatalf("the caller did not flush the bucket due at %d ms", k)
		}
	}
	require.Equal(t, uint64(1), tw.Stats().Wakeups, "the poller woke although callers kept up")

	// Callers stop (the last helped at 10 ms): the poller fires the next
	// timer one grace late and keeps the grace, as callers may only have
	// paused; it fires the one after that one grace late too, and now,
	// with no caller for more than two graces, turns the grace off.
	grace := tw.adv.grace
	require.Equal(t, 2*tick, grace)
	for wakeups := uint64(2); wakeups <= 3; wakeups++ {
		arm(tick)
		clock.Advance(tick + grace - time.Nanosecond)
		time.Sleep(10 * time.Millisecond)
		require.Empty(t, firedAt, "the alarm rang before its grace")
		clock.Advance(time.Nanosecond)
		awaitSignal(t, firedAt, "the alarm after its grace")
		require.Equal(t, wakeups, tw.Stats().Wakeups)
	}
	arm(tick)
	clock.Advance(tick)
	awaitSignal(t, firedAt, "the alarm on time")
	require.Equal(t, uint64(4), tw.Stats().Wakeups, "the grace stayed on though callers had stopped")
}

// TestCallerWorkIsBounded: a caller that finds more due than callerBudget
// timers moves only that many and kicks the poller to finish; every timer
// fires once.
func TestCallerWorkIsBounded(t *testing.T) {
	clock := NewFakeClock(testEpoch)
	tw, err := newManual(time.Millisecond, 8, WithClock(clock), WithWorkerPool(1))
	require.NoError(t, err)
	defer tw.Stop()
	oneShard(tw)
	const n = 3 * callerBudget
	fired := make(chan struct{}, n)
	for range n {
		tw.AfterFunc(time.Millisecond, func() { fired <- struct{}{} })
	}
	clock.Advance(time.Millisecond)
	tw.AfterFunc(time.Hour, func() {}).Stop()
	require.Eventually(t, func() bool { return len(fired) == callerBudget }, semWait, time.Millisecond)
	time.Sleep(10 * time.Millisecond)
	require.Len(t, fired, callerBudget, "one caller did more than its budget")
	tw.step() // what the kicked poller does
	require.Eventually(t, func() bool { return len(fired) == n }, semWait, time.Millisecond)
	require.Zero(t, tw.Len())
}
