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
			}, 10*time.Second, 10*time.Millisecond, "fired, abandoned short timers kept objects live")
			t.Logf("%d objects live after %d abandoned short timers fired", grown, n)
			s = tw.Stats()
			require.Equal(t, before.Pending, s.Pending)
			require.Equal(t, before.Fired+n, s.Fired, "every short timer fired, none was collected: %+v", s)
		})
	}
}

// TestChannelTimersBeyondTheHorizonAreCollectedPastIt holds the bound for
// the timers due beyond strongHorizon: abandoned, each is kept (strongly)
// until the clock passes its checkpoint, and collected then, without firing.
// On a FakeClock; TestAbandonedChannelTimersAreCollected does the same on
// the real one.
func TestChannelTimersBeyondTheHorizonAreCollectedPastIt(t *testing.T) {
	const n = 10_000
	for _, tc := range []struct {
		name    string
		abandon func(tw *TimingWheel)
	}{
		{"NewTimer just past the horizon", func(tw *TimingWheel) { tw.NewTimer(strongHorizon + 1) }},
		{"After 1h", func(tw *TimingWheel) { tw.After(time.Hour) }},
		{"NewTimer never", func(tw *TimingWheel) { tw.NewTimer(math.MaxInt64) }},
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
			require.GreaterOrEqual(t, liveObjects()-live, int64(n), "timers were released before their checkpoint")
			require.Equal(t, before.Pending+n, tw.Stats().Pending)

			clock.Advance(strongHorizon)
			tw.step()
			var grown int64
			require.Eventually(t, func() bool {
				grown = liveObjects() - live
				return grown < n
			}, 10*time.Second, 10*time.Millisecond, "abandoned timers past their checkpoint kept objects live")
			t.Logf("%d objects live after %d abandoned timers passed their checkpoint", grown, n)
			var s Stats
			require.Eventually(t, func() bool {
				s = tw.Stats()
				return s.Pending == before.Pending && s.Collected-before.Collected == n
			}, 10*time.Second, 10*time.Millisecond, "the wheel still counts abandoned timers as pending")
			require.Equal(t, before.Fired, s.Fired, "a timer fired at its checkpoint")
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
			}, 10*time.Second, 10*time.Millisecond, "abandoned timers reset beyond the horizon kept objects live")
			t.Logf("%d objects live after %d abandoned timers", grown, n)
			var s Stats
			require.Eventually(t, func() bool {
				s = tw.Stats()
				return s.Pending == before.Pending && s.Collected-before.Collected == n
			}, 10*time.Second, 10*time.Millisecond, "the wheel still counts abandoned timers as pending")
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
// hold its channel weakly, and that it never goes back. The clock moves only
// where a case says.
func TestChannelTimerHorizon(t *testing.T) {
	clock := NewFakeClock(testEpoch)
	tw, err := newManual(time.Millisecond, 512, WithClock(clock))
	require.NoError(t, err)
	defer tw.Stop()
	pastCheckpoint := func() {
		clock.Advance(strongHorizon)
		tw.step()
	}
	for _, tc := range []struct {
		name string
		node func() *chanTimer
		weak bool
	}{
		{"NewTimer(0)", func() *chanTimer { return tw.NewTimer(0).owner.node }, false},
		{"NewTimer(-1)", func() *chanTimer { return tw.NewTimer(-1).owner.node }, false},
		{"NewTimer(horizon)", func() *chanTimer { return tw.NewTimer(strongHorizon).owner.node }, false},
		{"NewTimer(horizon+1ns), at its checkpoint", func() *chanTimer { return tw.NewTimer(strongHorizon + 1).owner.node }, false},
		{"NewTimer(max), at its checkpoint", func() *chanTimer { return tw.NewTimer(math.MaxInt64).owner.node }, false},
		{"NewTimer(1h), past its checkpoint", func() *chanTimer {
			tm := tw.NewTimer(time.Hour)
			pastCheckpoint()
			return tm.owner.node
		}, true},
		{"NewTimer(max), past its checkpoint", func() *chanTimer {
			tm := tw.NewTimer(math.MaxInt64)
			pastCheckpoint()
			return tm.owner.node
		}, true},
		{"NewTimer(1h) stopped at its checkpoint", func() *chanTimer {
			tm := tw.NewTimer(time.Hour)
			tm.Stop()
			pastCheckpoint()
			return tm.owner.node
		}, false},
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
		{"Reset within at the checkpoint", func() *chanTimer {
			tm := tw.NewTimer(time.Hour)
			tm.Reset(time.Millisecond)
			pastCheckpoint()
			return tm.owner.node
		}, false},
		{"NewTicker(1ms)", func() *chanTimer { return tw.NewTicker(time.Millisecond).node }, true},
		{"NewTicker reset", func() *chanTimer {
			tk := tw.NewTicker(time.Hour)
			tk.Reset(time.Millisecond)
			return tk.node
		}, true},
	} {
		require.Equal(t, tc.weak, holdsWeakly(tc.node()), tc.name)
	}
}

// TestChannelTimerPassesItsCheckpoint: a NewTimer due beyond the horizon
// passes its checkpoint without a value and fires at its own due tick, and a
// Reset while it waits at the checkpoint, sooner or later, replaces that due
// tick: the timer fires at the new one only. On a FakeClock, tick by tick
// around each edge.
func TestChannelTimerPassesItsCheckpoint(t *testing.T) {
	const tick = time.Millisecond
	for _, tc := range []struct {
		name  string
		d     time.Duration
		reset time.Duration // after 100 ms, if not 0
		due   time.Duration // from the start
	}{
		{"just past the horizon", strongHorizon + 1, 0, strongHorizon + tick},
		{"3s", 3 * time.Second, 0, 3 * time.Second},
		{"reset sooner, within", 3 * time.Second, 700 * time.Millisecond, 800 * time.Millisecond},
		{"reset sooner, beyond", 3 * time.Second, 2 * time.Second, 2100 * time.Millisecond},
		{"reset later", 3 * time.Second, 4 * time.Second, 4100 * time.Millisecond},
		{"reset to the checkpoint", 3 * time.Second, strongHorizon - 100*time.Millisecond, strongHorizon},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := NewFakeClock(testEpoch)
			tw, err := newManual(tick, 512, WithClock(clock))
			require.NoError(t, err)
			defer tw.Stop()
			tm := tw.NewTimer(tc.d)
			var now time.Duration
			advanceTo := func(to time.Duration) {
				for now < to {
					step := min(100*time.Millisecond, to-now)
					clock.Advance(step)
					now += step
					tw.step()
					require.Empty(t, tm.C, "received at %v, before the due time %v", now, tc.due)
				}
			}
			if tc.reset != 0 {
				advanceTo(100 * time.Millisecond)
				require.True(t, tm.Reset(tc.reset), "Reset of the pending timer")
			}
			advanceTo(tc.due - tick)
			clock.Advance(tick)
			tw.step()
			select {
			case v := <-tm.C:
				require.Equal(t, testEpoch.Add(tc.due), v)
			default:
				t.Fatalf("nothing received at the due time %v", tc.due)
			}
			now = tc.due
			advanceTo(tc.d + tc.reset + 2*strongHorizon)
			require.False(t, tm.Stop(), "the timer is still pending after it fired")
			s := tw.Stats()
			require.Equal(t, uint64(1), s.Fired)
			require.Zero(t, s.Pending)
		})
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
