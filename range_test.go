package timingwheel

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A wheel's time is int64 nanoseconds since New: 292 years. Within that range
// a timer fires at its deadline, never early and never late by more than a
// tick, whatever the tick; past it, the FakeClock refuses to go.

// TestTimersFireLateInTheRange: at a 1 ns tick, due ticks use the whole
// int64 range, so a timer armed 200 years (or 292 years less a second) after
// New still fires exactly at its deadline (a whole number of ticks here).
func TestTimersFireLateInTheRange(t *testing.T) {
	for _, tick := range []time.Duration{time.Nanosecond, 2 * time.Nanosecond, time.Millisecond} {
		for _, after := range []time.Duration{200 * 365 * 24 * time.Hour, (math.MaxInt64 - 2*time.Second).Truncate(time.Millisecond)} {
			clock := NewFakeClock(testEpoch)
			tw, err := newManual(tick, 64, WithClock(clock), WithInlineCallbacks())
			require.NoError(t, err)
			clock.Advance(after)
			var firedAt time.Duration
			tw.AfterFunc(time.Second, func() { firedAt = clock.Now().Sub(testEpoch) })
			clock.Advance(time.Second - 1)
			tw.step()
			require.Zero(t, firedAt, "tick %v, %v after New: fired early", tick, after)
			clock.Advance(1)
			tw.step()
			require.Equal(t, after+time.Second, firedAt, "tick %v, %v after New: did not fire at its deadline", tick, after)
			tw.Stop()
		}
	}
}

// TestDeadlinesPastTheRangeNeverFire: a deadline the clock cannot reach
// saturates to never, rather than wrapping into the past or being clamped to
// the end of the range (which would fire it early there).
func TestDeadlinesPastTheRangeNeverFire(t *testing.T) {
	clock := NewFakeClock(testEpoch)
	tw, err := newManual(time.Millisecond, 64, WithClock(clock), WithInlineCallbacks())
	require.NoError(t, err)
	defer tw.Stop()
	clock.Advance(time.Hour)
	fired := false
	timer := tw.AfterFunc(math.MaxInt64, func() { fired = true })
	clock.Advance(math.MaxInt64 - 2*time.Hour)
	tw.step()
	require.False(t, fired, "a deadline past the clock's range fired")
	require.Equal(t, 1, tw.Len())
	require.True(t, timer.Stop())
}

func TestFakeClockRefusesToLeaveTheRange(t *testing.T) {
	clock := NewFakeClock(testEpoch)
	clock.Advance(math.MaxInt64 - 1)
	require.PanicsWithValue(t,
		"timingwheel: FakeClock.Advance(1ns) would take the clock 292 years or more past its start, beyond any wheel's range",
		func() { clock.Advance(1) })
	require.Equal(t, testEpoch.Add(math.MaxInt64-1), clock.Now(), "a refused Advance moved the clock")
}
