package timingwheel

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestChannelTimersWithinTheHorizonAreReleasedWhenTheyFire holds the bound
// on what an abandoned short channel timer costs: a NewTimer or After due
// within strongHorizon is kept by the wheel until it fires (that is what
// spares it the weak pointer), and once it has fired nothing of it stays
// live. On a FakeClock, so "until it fires" is exactly when the clock says.
func TestChannelTimersWithinTheHorizonAreReleasedWhenTheyFire(t *testing.T) {
	const n = 10_000
	for _, tc := range []struct {
		name    string
		abandon func(tw *TimingWheel)
	}{
		{"NewTimer at the horizon", func(tw *TimingWheel) { tw.NewTimer(strongHorizon) }},
		{"After 100ms", func(tw *TimingWheel) { tw.After(100 * time.Millisecond) }},
		{"Reset within the horizon", func(tw *TimingWheel) { tw.NewTimer(time.Millisecond).Reset(strongHorizon / 2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := NewFakeClock(testEpoch)
			tw, err := newManual(time.Millisecond, 512, WithClock(clock))
			require.NoError(t, err)
			defer tw.Stop()
			before := tw.Stats()
			live := liveObjects()
			for range n {
				tc.abandon(tw)
			}
			// Held, not collected: each still keeps its channel and node.
			require.GreaterOrEqual(t, liveObjects()-live, int64(n), "short timers were released before they fired")
			s := tw.Stats()
			require.Equal(t, before.Pending+n, s.Pending)
			require.Equal(t, before.Collected, s.Collected)

			clock.Advance(strongHorizon)
			tw.step()
			var grown int64
			require.Eventually(t, func() bool {
				grown = liveObjects() - live
				return grown < n
			}, semWait, 10*time.Millisecond, "fired, abandoned short timers kept objects live")
			t.Logf("%d objects live after %d abandoned short timers fired", grown, n)
			s = tw.Stats()
			require.Equal(t, before.Pending, s.Pending)
			require.Equal(t, before.Fired+n, s.Fired, "every short timer fired, none was collected: %+v", s)
		})
	}
}

// TestChannelTimersResetBeyondTheHorizonAreCollected: a channel timer armed
// within strongHorizon and then moved beyond it by Reset, by each of Reset's
// paths, is collected before it fires once abandoned, as one armed there by
// NewTimer is (TestAbandonedChannelTimersAreCollected). The clock never
// moves, so none can fire.
func TestChannelTimersResetBeyondTheHorizonAreCollected(t *testing.T) {
	const n = 10_000
	for _, tc := range []struct {
		name    string
		abandon func(tw *TimingWheel)
		fired   bool // the NewTimer(0) fired when made
	}{
		// A later due leaves the pending node in its bucket (resetAt's
		// fast path).
		{"pending, later", func(tw *TimingWheel) { tw.NewTimer(time.Millisecond).Reset(time.Hour) }, false},
		{"stopped", func(tw *TimingWheel) {
			tm := tw.NewTimer(time.Millisecond)
			tm.Stop()
			tm.Reset(strongHorizon + 1)
		}, false},
		{"fired, not received", func(tw *TimingWheel) { tw.NewTimer(0).Reset(time.Hour) }, true},
		{"to never", func(tw *TimingWheel) { tw.NewTimer(0).Reset(math.MaxInt64) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := NewFakeClock(testEpoch)
			tw, err := newManual(time.Millisecond, 512, WithClock(clock))
			require.NoError(t, err)
			defer tw.Stop()
			before := tw.Stats()
			live := liveObjects()
			for range n {
				tc.abandon(tw)
			}
			var grown int64
			require.Eventually(t, func() bool {
				grown = liveObjects() - live
				return grown < n
			}, semWait, 10*time.Millisecond, "abandoned timers reset beyond the horizon kept objects live")
			t.Logf("%d objects live after %d abandoned timers", grown, n)
			var s Stats
			require.Eventually(t, func() bool {
				s = tw.Stats()
				return s.Pending == before.Pending && s.Collected-before.Collected == n
			}, semWait, 10*time.Millisecond, "the wheel still counts abandoned timers as pending")
			fired := uint64(0)
			if tc.fired {
				fired = n
			}
			require.Equal(t, before.Fired+fired, s.Fired, "a timer fired after its Reset")
		})
	}
}

// TestChannelTimerWeakenedByResetStillDelivers: a held timer that Reset
// moved beyond the horizon (so the wheel holds its channel weakly) still
// receives its value, garbage collections in between.
func TestChannelTimerWeakenedByResetStillDelivers(t *testing.T) {
	clock := NewFakeClock(testEpoch)
	tw, err := newManual(time.Millisecond, 512, WithClock(clock))
	require.NoError(t, err)
	defer tw.Stop()
	tm := tw.NewTimer(time.Millisecond)
	require.True(t, tm.Reset(2*strongHorizon))
	tw.sweepOwed()
	require.True(t, holdsWeakly(tm.owner.node))
	runtime.GC()
	runtime.GC()
	clock.Advance(2 * strongHorizon)
	tw.step()
	select {
	case <-tm.C:
	default:
		t.Fatal("a held timer reset beyond the horizon did not deliver")
	}
	require.Zero(t, tw.Stats().Collected)
}

// TestChannelTimerHorizon is the rule, white-box: which arming makes a node
// hold its channel weakly once the sweep has run (and strongly until then),
// and that it never goes back.
func TestChannelTimerHorizon(t *testing.T) {
	tw, err := newManual(time.Millisecond, 512, WithClock(NewFakeClock(testEpoch)))
	require.NoError(t, err)
	defer tw.Stop()
	for _, tc := range []struct {
		name string
		node func() *chanTimer
		weak bool
	}{
		{"NewTimer(0)", func() *chanTimer { return tw.NewTimer(0).owner.node }, false},
		{"NewTimer(-1)", func() *chanTimer { return tw.NewTimer(-1).owner.node }, false},
		{"NewTimer(horizon)", func() *chanTimer { return tw.NewTimer(strongHorizon).owner.node }, false},
		{"NewTimer(horizon+1ns)", func() *chanTimer { return tw.NewTimer(strongHorizon + 1).owner.node }, true},
		{"NewTimer(max)", func() *chanTimer { return tw.NewTimer(math.MaxInt64).owner.node }, true},
		{"Reset within", func() *chanTimer {
			tm := tw.NewTimer(time.Millisecond)
			tm.Reset(strongHorizon)
			return tm.owner.node
		}, false},
		{"Reset beyond", func() *chanTimer {
			tm := tw.NewTimer(time.Millisecond)
			tm.Reset(time.Hour)
			return tm.owner.node
		}, true},
		{"Reset beyond then within", func() *chanTimer {
			tm := tw.NewTimer(time.Millisecond)
			tm.Reset(time.Hour)
			tm.Reset(time.Millisecond)
			return tm.owner.node
		}, true},
		{"NewTicker(1ms)", func() *chanTimer { return tw.NewTicker(time.Millisecond).node }, true},
		{"NewTicker reset", func() *chanTimer {
			tk := tw.NewTicker(time.Hour)
			tk.Reset(time.Millisecond)
			return tk.node
		}, true},
	} {
		n := tc.node()
		require.False(t, holdsWeakly(n), "%s: weak before the sweep", tc.name)
		tw.sweepOwed()
		require.Equal(t, tc.weak, holdsWeakly(n), tc.name)
	}
}

// holdsWeakly reports whether ct holds its channel only through the weak
// pointer.
func holdsWeakly(ct *chanTimer) bool {
	s := ct.owner.shard
	s.mu.Lock()
	defer s.mu.Unlock()
	return ct.owner.ch.strong == nil
}
