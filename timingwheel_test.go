package timingwheel

// The tests of timingwheel.go: New and its options, the wheel's lifecycle
// and Stop. (A Stop from a callback: reentrancy_test.go.)

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// withTimeout runs f and fails the test if it has not returned within d: a
// deadlock becomes a failure, not a hung test binary.
func withTimeout(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		tick time.Duration
		size int
		opts []Option
		want error
	}{
		{"zero tick", 0, 8, nil, ErrInvalidTick},
		{"negative tick", -time.Millisecond, 8, nil, ErrInvalidTick},
		{"min tick", math.MinInt64, 8, nil, ErrInvalidTick},
		{"size 0", time.Millisecond, 0, nil, ErrInvalidWheelSize},
		{"size 1", time.Millisecond, 1, nil, ErrInvalidWheelSize},
		{"negative size", time.Millisecond, -2, nil, ErrInvalidWheelSize},
		{"size above max", time.Millisecond, MaxWheelSize + 1, nil, ErrInvalidWheelSize},
		{"huge size", time.Millisecond, math.MaxInt, nil, ErrInvalidWheelSize},
		{"nil clock", time.Millisecond, 8, []Option{WithClock(nil)}, ErrInvalidOption},
		{"zero workers", time.Millisecond, 8, []Option{WithWorkerPool(0)}, ErrInvalidOption},
		{"negative workers", time.Millisecond, 8, []Option{WithWorkerPool(-1)}, ErrInvalidOption},
		{"bad option after good", time.Millisecond, 8, []Option{WithInlineCallbacks(), WithWorkerPool(0)}, ErrInvalidOption},
		{"tick checked first", 0, 0, []Option{WithClock(nil)}, ErrInvalidTick},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw, err := New(tc.tick, tc.size, tc.opts...)
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, tw)
			for _, other := range []error{ErrInvalidTick, ErrInvalidWheelSize, ErrInvalidOption} {
				if other != tc.want {
					require.False(t, errors.Is(err, other), "%v is also %v", err, other)
				}
			}
		})
	}
}

func TestNewRoundsWheelSizeUp(t *testing.T) {
	for _, tc := range []struct{ size, want int }{
		{2, 2}, {3, 4}, {4, 4}, {5, 8}, {100, 128}, {512, 512}, {MaxWheelSize/2 + 1, MaxWheelSize}, {MaxWheelSize, MaxWheelSize},
	} {
		tw, err := newManual(time.Millisecond, tc.size, WithClock(NewFakeClock(testEpoch)))
		require.NoError(t, err, "size %d", tc.size)
		require.Equal(t, int64(tc.want), tw.size, "size %d", tc.size)
		if tc.want <= 512 { // levels of a million buckets are slow to allocate under -race
			// A timer one wheel span ahead no longer fits level 0.
			tw.AfterFunc(time.Duration(tc.want-1)*time.Millisecond, func() {})
			require.Equal(t, 1, tw.Stats().Levels, "size %d", tc.size)
			tw.AfterFunc(time.Duration(tc.want)*time.Millisecond, func() {})
			require.Equal(t, 2, tw.Stats().Levels, "size %d", tc.size)
		}
		tw.Stop()
	}
}

func TestPanicsAtTheCallSite(t *testing.T) {
	tw, _ := newManualWheel(t, time.Millisecond, 8)
	for _, tc := range []struct {
		name string
		want string
		f    func()
	}{
		{"AfterFunc nil", "timingwheel: AfterFunc called with nil func", func() { tw.AfterFunc(time.Second, nil) }},
		{"package AfterFunc nil", "timingwheel: AfterFunc called with nil func", func() { AfterFunc(time.Second, nil) }},
		{"ScheduleFunc nil Scheduler", "timingwheel: ScheduleFunc called with nil Scheduler", func() { tw.ScheduleFunc(nil, func() {}) }},
		{"ScheduleFunc nil func", "timingwheel: ScheduleFunc called with nil func", func() { tw.ScheduleFunc(Every(time.Second), nil) }},
		{"package ScheduleFunc nil func", "timingwheel: ScheduleFunc called with nil func", func() { ScheduleFunc(Every(time.Second), nil) }},
		{"Every 0", "timingwheel: Every called with non-positive interval", func() { Every(0) }},
		{"Every negative", "timingwheel: Every called with non-positive interval", func() { Every(-time.Second) }},
		{"zero Timer Stop", "timingwheel: Stop called on uninitialized Timer", func() { new(Timer).Stop() }},
		{"zero Timer Reset", "timingwheel: Reset called on uninitialized Timer", func() { new(Timer).Reset(time.Second) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.PanicsWithValue(t, tc.want, tc.f)
			require.Zero(t, tw.Len(), "a panicking call left a timer behind")
		})
	}
	tw.Stop()
	require.PanicsWithValue(t, "timingwheel: AfterFunc called with nil func", func() { tw.AfterFunc(0, nil) },
		"a stopped wheel still checks its arguments")
}

func TestWheelStopIsIdempotentAndConcurrent(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"goroutines", nil},
		{"inline", []Option{WithInlineCallbacks()}},
		{"pool", []Option{WithWorkerPool(3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tw, err := New(time.Millisecond, 16, tc.opts...)
			require.NoError(t, err)
			for i := range 100 {
				tw.AfterFunc(time.Duration(i)*time.Millisecond, func() {})
			}
			withTimeout(t, semWait, "concurrent Stops", func() {
				var wg sync.WaitGroup
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						tw.Stop()
					}()
				}
				wg.Wait()
				tw.Stop()
			})
			require.Zero(t, tw.Len())
		})
	}
}

// After Stop, adds and resets return at once, never fire, and their timers
// report true to one Stop, as timers pending at Stop do.
func TestCallsAfterStopReturnAndNeverFire(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"goroutines", nil},
		{"inline", []Option{WithInlineCallbacks()}},
		{"pool", []Option{WithWorkerPool(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := NewFakeClock(testEpoch)
			tw, err := New(time.Millisecond, 4, append([]Option{WithClock(clock)}, tc.opts...)...)
			require.NoError(t, err)
			var ran atomic.Int32
			f := func() { ran.Add(1) }
			fired := tw.AfterFunc(0, f)
			clock.Advance(time.Millisecond) // inline: d <= 0 runs at the next tick
			require.Eventually(t, func() bool { return ran.Load() == 1 }, semWait, time.Millisecond)
			pendingFunc := tw.AfterFunc(time.Hour, f)
			pendingChan := tw.NewTimer(time.Hour)
			pendingSched := tw.ScheduleFunc(Every(time.Minute), f)

			tw.Stop()
			s := tw.Stats()
			s.Wakeups = 0
			require.Equal(t, Stats{Fired: 1, Dropped: 3}, s)

			var later []*Timer
			withTimeout(t, semWait, "calls after Stop", func() {
				later = append(later,
					tw.AfterFunc(0, f), tw.AfterFunc(-1, f), tw.AfterFunc(time.Millisecond, f),
					tw.NewTimer(0), tw.NewTimer(time.Millisecond),
					tw.ScheduleFunc(Every(time.Millisecond), f))
				require.False(t, fired.Reset(0), "fired timer was not active")
				later = append(later, fired)
				_ = tw.After(0)
			})
			require.Zero(t, tw.Len())
			clock.Advance(time.Hour)
			time.Sleep(20 * time.Millisecond)
			require.Equal(t, int32(1), ran.Load(), "a timer fired after Stop")
			for _, tm := range later {
				if tm.C != nil {
					require.Empty(t, tm.C)
				}
			}
			for i, tm := range append(later, pendingFunc, pendingChan, pendingSched) {
				require.True(t, tm.Stop(), "timer %d: first Stop", i)
				require.False(t, tm.Stop(), "timer %d: second Stop", i)
			}
			s = tw.Stats()
			require.Equal(t, uint64(len(later)+3), s.Stopped)
			require.Equal(t, uint64(3), s.Dropped, "adds after Stop are not dropped: they were never pending")
			require.Zero(t, s.Pending)
			require.Equal(t, uint64(1), s.Fired)
		})
	}
}

// Timers pending when the wheel stops never fire, on the real clock, even
// those due within a tick of Stop.
func TestPendingAtStopNeverFire(t *testing.T) {
	t.Parallel()
	tw, err := New(time.Millisecond, 8)
	require.NoError(t, err)
	var ran atomic.Int32
	const n = 2000
	timers := make([]*Timer, n)
	for i := range timers {
		timers[i] = tw.AfterFunc(time.Hour+time.Duration(i)*time.Millisecond, func() { ran.Add(1) })
	}
	tw.Stop()
	require.Zero(t, tw.Len())
	require.Equal(t, uint64(n), tw.Stats().Dropped)
	stopped := 0
	for _, tm := range timers {
		if tm.Stop() {
			stopped++
		}
	}
	require.Equal(t, n, stopped)

	// Timers near their deadline at Stop: each either ran before Stop
	// (then its Stop reports false) or never runs.
	tw, err = New(time.Millisecond, 8)
	require.NoError(t, err)
	var runs [n]atomic.Int32
	for i := range timers {
		timers[i] = tw.AfterFunc(time.Duration(i%5)*time.Millisecond, func() { runs[i].Add(1) })
	}
	time.Sleep(2 * time.Millisecond)
	tw.Stop()
	s := tw.Stats()
	// Wait for the callbacks handed over before Stop to run (a fixed sleep
	// is not enough on a loaded machine): as many as Stats counted fired.
	require.Eventually(t, func() bool {
		var total int32
		for i := range runs {
			total += runs[i].Load()
		}
		return uint64(total) >= s.Fired
	}, semWait, time.Millisecond, "callbacks fired before Stop did not all run")
	firedOrDropped := 0
	for i, tm := range timers {
		stop := tm.Stop()
		r := runs[i].Load()
		require.LessOrEqual(t, r, int32(1), "timer %d ran twice", i)
		require.NotEqual(t, stop, r == 1, "timer %d: Stop %v, ran %d times", i, stop, r)
		if !stop {
			firedOrDropped++
		}
	}
	require.Equal(t, s.Fired, uint64(firedOrDropped))
	require.Equal(t, uint64(n)-s.Fired, s.Dropped)
}

// With WithWorkerPool, Stop returns only once the callbacks already queued
// have run.
func TestWorkerPoolStopWaitsForQueuedCallbacks(t *testing.T) {
	clock := NewFakeClock(testEpoch)
	tw, err := New(time.Millisecond, 8, WithClock(clock), WithWorkerPool(1))
	require.NoError(t, err)
	release := make(chan struct{})
	started := make(chan struct{})
	var ran atomic.Int32
	tw.AfterFunc(0, func() {
		close(started)
		<-release
		ran.Add(1)
	})
	const queued = 50
	for range queued {
		tw.AfterFunc(0, func() { ran.Add(1) }) // handed to the pool at once
	}
	<-started
	stopped := make(chan struct{})
	go func() {
		tw.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
		t.Fatal("Stop returned with callbacks queued")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-stopped:
	case <-time.After(semWait):
		t.Fatal("Stop did not return")
	}
	require.Equal(t, int32(queued+1), ran.Load())
}

// Each arming is counted once: as fired, stopped, dropped or pending. A Stop
// that only discards a channel timer's unreceived value reports true, as
// time.Timer's does, but the arming was already counted as fired.
func TestStatsCountEachArmingOnce(t *testing.T) {
	tw, clock := newManualWheel(t, time.Millisecond, 8)
	c := tw.NewTimer(time.Millisecond)
	f := tw.AfterFunc(time.Millisecond, func() {})
	tw.AfterFunc(time.Hour, func() {})
	clock.Advance(time.Millisecond)
	tw.step()
	require.Len(t, c.C, 1)
	require.True(t, c.Stop(), "Stop discards the unreceived value and reports true")
	require.False(t, f.Stop())
	s := tw.Stats()
	require.Equal(t, uint64(2), s.Fired)
	require.Zero(t, s.Stopped, "the channel timer's arming already counted as fired")
	require.Equal(t, 1, s.Pending)
	tw.Stop()
	s = tw.Stats()
	require.Equal(t, uint64(1), s.Dropped)
	require.Zero(t, s.Pending)
}
