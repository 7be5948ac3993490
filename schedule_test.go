package timingwheel

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Deterministic ScheduleFunc semantics on a manual wheel: the times of runs,
// catching up, finite schedules, and Stop and Reset from inside f.

// runTimes records the clock's elapsed time at each run of a schedule.
type runTimes struct {
	clock *FakeClock
	at    []time.Duration
}

func (r *runTimes) f() { r.at = append(r.at, r.clock.Now().Sub(testEpoch)) }

func advanceSteps(tw *TimingWheel, clock *FakeClock, n int, by time.Duration) {
	for range n {
		clock.Advance(by)
		tw.step()
	}
}

func ms(v ...float64) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x * float64(time.Millisecond))
	}
	return out
}

// Runs are due at k*interval from the start, each rounded up to the tick,
// never drifting by the rounding of the runs before.
func TestScheduleRunsDoNotDrift(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		want     []time.Duration
	}{
		{"on the tick", 2 * time.Millisecond, ms(2, 4, 6, 8, 10)},
		{"between ticks", 1500 * time.Microsecond, ms(2, 3, 5, 6, 8, 9)},
		{"below the tick: runs due in one tick merge, on phase", 400 * time.Microsecond, ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw, clock := newManualWheel(t, time.Millisecond, 4)
			r := &runTimes{clock: clock}
			tw.ScheduleFunc(Every(tc.interval), r.f)
			advanceSteps(tw, clock, 10, time.Millisecond)
			require.Equal(t, tc.want, r.at[:min(len(r.at), len(tc.want))])
			for k, at := range r.at {
				require.GreaterOrEqual(t, at, time.Duration(k+1)*tc.interval, "run %d early", k+1)
			}
			require.Equal(t, 1, tw.Len(), "a schedule stays pending")
		})
	}
}

// After a stall, the missed runs are not skipped: each comes, never before
// its scheduled time.
func TestScheduleCatchesUpAfterAStall(t *testing.T) {
	tw, clock := newManualWheel(t, time.Millisecond, 4)
	r := &runTimes{clock: clock}
	tw.ScheduleFunc(Every(3*time.Millisecond), r.f)
	clock.Advance(31 * time.Millisecond)
	tw.step()
	require.Len(t, r.at, 10, "runs at 3, 6, ..., 30ms")
	advanceSteps(tw, clock, 2, time.Millisecond) // 33ms
	require.Len(t, r.at, 11)
	require.Equal(t, 33*time.Millisecond, r.at[10], "back on the original grid")
	require.Equal(t, uint64(11), tw.Stats().Fired)
}

// A Scheduler that ends: the Timer becomes inactive after the last run, and
// Reset starts it again. (A Scheduler with no first run panics: see
// TestScheduleNeverRunsPanics.)
func TestScheduleThatEnds(t *testing.T) {
	tw, clock := newManualWheel(t, time.Millisecond, 4)
	left := 3
	r := &runTimes{clock: clock}
	tm := tw.ScheduleFunc(countdown{left: &left, period: 2 * time.Millisecond}, r.f)
	advanceSteps(tw, clock, 10, time.Millisecond)
	require.Equal(t, ms(2, 4, 6), r.at)
	require.Zero(t, tw.Len())
	require.False(t, tm.Stop(), "the schedule ended by itself")

	require.False(t, tm.Reset(time.Millisecond), "an ended schedule was not active")
	require.Equal(t, 1, tw.Len())
	advanceSteps(tw, clock, 3, time.Millisecond)
	require.Equal(t, ms(2, 4, 6, 11), r.at, "Reset runs it once; then its Scheduler has no more runs")
	require.Zero(t, tw.Len())
}

// Reset(d) moves the next run to d from now, and the schedule continues from
// there.
func TestScheduleReset(t *testing.T) {
	tw, clock := newManualWheel(t, time.Millisecond, 4)
	r := &runTimes{clock: clock}
	tm := tw.ScheduleFunc(Every(4*time.Millisecond), r.f)
	advanceSteps(tw, clock, 5, time.Millisecond) // run at 4ms
	require.True(t, tm.Reset(10*time.Millisecond), "an active schedule")
	advanceSteps(tw, clock, 20, time.Millisecond)
	require.Equal(t, ms(4, 15, 19, 23), r.at)
	require.True(t, tm.Stop())
	require.False(t, tm.Reset(time.Millisecond), "a stopped schedule was not active")
	advanceSteps(tw, clock, 6, time.Millisecond)
	require.Equal(t, ms(4, 15, 19, 23, 26, 30), r.at, "Reset restarts a stopped schedule")
}

// Stop from inside f: this run completes, and no later run starts.
func TestScheduleStopFromItsOwnRun(t *testing.T) {
	for _, inline := range []bool{true, false} {
		name := map[bool]string{true: "inline", false: "goroutines"}[inline]
		t.Run(name, func(t *testing.T) {
			clock := NewFakeClock(testEpoch)
			opts := []Option{WithClock(clock)}
			if inline {
				opts = append(opts, WithInlineCallbacks())
			}
			tw, err := New(time.Millisecond, 4, opts...)
			require.NoError(t, err)
			defer tw.Stop()
			runs := make(chan int, 10)
			stops := make(chan bool, 10)
			n := 0
			var tm *Timer
			ready := make(chan struct{})
			tm = tw.ScheduleFunc(Every(time.Millisecond), func() {
				<-ready
				n++
				if n == 3 {
					stops <- tm.Stop()
					stops <- tm.Stop()
				}
				runs <- n
			})
			close(ready)
			for k := 1; k <= 3; k++ {
				clock.Advance(time.Millisecond)
				require.Equal(t, k, awaitSignal(t, runs, "a run"))
			}
			require.True(t, awaitSignal(t, stops, "the third run's Stop"), "Stop inside the third run prevents the fourth")
			require.False(t, awaitSignal(t, stops, "the second Stop"))
			clock.Advance(10 * time.Millisecond)
			time.Sleep(20 * time.Millisecond)
			require.Empty(t, runs, "a run started after Stop returned true")
			require.Zero(t, tw.Len())
		})
	}
}

func TestPackageLevelFunctionsUseTheDefaultWheel(t *testing.T) {
	start := time.Now()
	tm := NewTimer(2 * time.Millisecond)
	require.GreaterOrEqual(t, receiveWithin(t, tm.C, "NewTimer(2ms)").Sub(start), 2*time.Millisecond)
	require.GreaterOrEqual(t, receiveWithin(t, After(time.Millisecond), "After(1ms)").Sub(start), time.Millisecond)
	done := make(chan struct{})
	var n atomic.Int32 // runs may overlap
	s := ScheduleFunc(Every(time.Millisecond), func() {
		if n.Add(1) == 3 {
			close(done)
		}
	})
	awaitSignal(t, done, "three runs of ScheduleFunc")
	require.True(t, s.Stop())
	require.Same(t, Default(), Default())
	require.Equal(t, int64(DefaultTick), Default().tick)
	require.Equal(t, int64(DefaultWheelSize), Default().size)
}

// A schedule Reset far into the past runs once, at the next tick, and then
// resumes on its grid after the current tick; when that would take more than
// maxSkips calls of Next, it restarts one interval after the current tick.
func TestScheduleResetFarIntoThePast(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		back     time.Duration
		want     []time.Duration
	}{
		// The wheel's time is 10 ms: the step at 10 ms had nothing due and
		// caught the shard up with the clock. So the reset's run is due at
		// tick 11; the grid, now -10 ms + 3k, has a point in that tick
		// (11 ms), which merges into the run; then 14, 17.
		{"within maxSkips", 3 * time.Millisecond, 20 * time.Millisecond, ms(11, 14, 17)},
		// Every 1 µs has run at each tick up to 10 ms. An hour back is far
		// more than maxSkips runs, so after the reset's run (tick 11) the
		// schedule restarts 1 µs after tick 11: due at 12 ms, then each tick.
		{"beyond maxSkips", time.Microsecond, time.Hour, ms(11, 12, 13, 14)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw, clock := newManualWheel(t, time.Millisecond, 4)
			r := &runTimes{clock: clock}
			tm := tw.ScheduleFunc(Every(tc.interval), r.f)
			advanceSteps(tw, clock, 10, time.Millisecond)
			r.at = nil
			require.True(t, tm.Reset(-tc.back))
			advanceSteps(tw, clock, 7, time.Millisecond) // to 17 ms
			require.Equal(t, tc.want, r.at[:min(len(r.at), len(tc.want))])
		})
	}
}

// A run handed to the executor but not begun when Stop returns true never
// runs: with one worker kept busy, the schedule's run waits in the queue
// while the schedule is stopped.
func TestScheduleStopCancelsARunNotYetBegun(t *testing.T) {
	clock := NewFakeClock(testEpoch)
	tw, err := New(time.Millisecond, 4, WithClock(clock), WithWorkerPool(1))
	require.NoError(t, err)
	defer tw.Stop()

	busy, release := make(chan struct{}), make(chan struct{})
	tw.AfterFunc(time.Millisecond, func() { close(busy); <-release })
	var runs atomic.Int32
	tm := tw.ScheduleFunc(Every(2*time.Millisecond), func() { runs.Add(1) })
	clock.Advance(time.Millisecond)
	<-busy // the only worker is taken
	clock.Advance(time.Millisecond)
	require.Eventually(t, func() bool { return tw.Stats().Fired == 2 }, semWait, time.Millisecond,
		"the schedule's first run is handed to the pool")
	require.True(t, tm.Stop(), "the schedule had runs ahead")
	close(release)
	tw.Stop() // waits for the queue to drain
	require.Zero(t, runs.Load(), "a run queued before Stop returned true ran")
}

// sharedScheduler counts its calls without a lock of its own: the wheel
// promises that every Next call of its schedules is serialised.
type sharedScheduler struct {
	calls int
	every time.Duration
}

func (s *sharedScheduler) Next(prev time.Time) time.Time {
	s.calls++
	return prev.Add(s.every)
}

// TestSchedulerNextIsSerialised: one Scheduler shared by many schedules,
// started from many goroutines while earlier ones run, is never called
// concurrently (-race reports it if it is), the first Next included.
func TestSchedulerNextIsSerialised(t *testing.T) {
	tw, err := New(time.Millisecond, 8)
	require.NoError(t, err)
	defer tw.Stop()
	shared := &sharedScheduler{every: time.Millisecond}
	var wg sync.WaitGroup
	var timers [8][]*Timer
	for g := range timers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				timers[g] = append(timers[g], tw.ScheduleFunc(shared, func() {}))
				time.Sleep(100 * time.Microsecond)
			}
		}()
	}
	wg.Wait()
	time.Sleep(5 * time.Millisecond)
	for _, ts := range timers {
		for _, timer := range ts {
			require.True(t, timer.Stop())
		}
	}
	tw.Stop()
	require.Greater(t, shared.calls, 400, "the schedules did not run")
}
