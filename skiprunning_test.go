package timingwheel

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SkipIfStillRunning: a run that falls due while the previous run of the same
// schedule has not returned is skipped and counted in Stats.Skipped; the next
// one after the previous run returned runs. Without the option, runs overlap.
func TestScheduleSkipIfStillRunning(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"goroutines", nil},
		{"worker pool", []Option{WithWorkerPool(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := NewFakeClock(testEpoch)
			tw, err := New(time.Millisecond, 8, append(tc.opts, WithClock(clock))...)
			require.NoError(t, err)
			defer tw.Stop()
			started := make(chan int, 10)
			release := make(chan struct{})
			n := 0
			tm := tw.ScheduleFunc(Every(time.Millisecond), func() {
				n++ // runs never overlap, so this is race-free
				started <- n
				<-release
			}, SkipIfStillRunning())
			sched := tm.owner.schedule

			clock.Advance(time.Millisecond)
			require.Equal(t, 1, awaitSignal(t, started, "the first run"))
			for k := uint64(1); k <= 3; k++ {
				clock.Advance(time.Millisecond)
				waitFor(t, func() bool { return tw.Stats().Skipped == k })
			}
			release <- struct{}{}
			waitFor(t, func() bool { return !sched.running.Load() })
			clock.Advance(time.Millisecond)
			require.Equal(t, 2, awaitSignal(t, started, "the run after the slow one"), "the run after the slow one returned")
			st := tw.Stats()
			require.Equal(t, uint64(2), st.Fired, "skipped runs are not fired")
			require.Equal(t, uint64(3), st.Skipped)

			// After a Stop, the run in progress still clears the mark as it
			// returns, so the schedule Reset runs again.
			require.True(t, tm.Stop())
			release <- struct{}{}
			waitFor(t, func() bool { return !sched.running.Load() })
			tm.Reset(time.Millisecond)
			clock.Advance(time.Millisecond)
			require.Equal(t, 3, awaitSignal(t, started, "the run after Reset"))
			require.True(t, tm.Stop())
			close(release)
		})
	}

	// The same slow f without the option: runs overlap, none is skipped.
	clock := NewFakeClock(testEpoch)
	tw, err := New(time.Millisecond, 8, WithClock(clock))
	require.NoError(t, err)
	defer tw.Stop()
	started := make(chan struct{}, 10)
	release := make(chan struct{})
	tm := tw.ScheduleFunc(Every(time.Millisecond), func() { started <- struct{}{}; <-release })
	for range 3 {
		clock.Advance(time.Millisecond)
		awaitSignal(t, started, "an overlapping run")
	}
	require.True(t, tm.Stop())
	close(release)
	require.Zero(t, tw.Stats().Skipped)
}

// waitFor waits for cond, which the wheel's poller makes true on its own
// goroutine after a FakeClock's Advance.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, semWait, 100*time.Microsecond, "condition not met within %v", semWait)
}

// On the real clock, with runs slower than the schedule's period and Stop
// racing the runs: a SkipIfStillRunning schedule's runs never overlap, on the
// wall clock as on the monotonic one, and every run began is counted fired.
func TestScheduleSkipIfStillRunningNeverOverlaps(t *testing.T) {
	for _, opts := range [][]Option{nil, {WithWorkerPool(4)}} {
		tw, err := New(time.Millisecond, 32, opts...)
		require.NoError(t, err)
		const n = 8
		var began atomic.Int64
		timers := make([]*Timer, 0, 2*n)
		for i := range 2 * n {
			var inflight atomic.Int32
			f := func() {
				began.Add(1)
				if inflight.Add(1) != 1 {
					t.Error("runs of one SkipIfStillRunning schedule overlap")
				}
				time.Sleep(3 * time.Millisecond) // slower than the 1ms period
				inflight.Add(-1)
			}
			s, sopts := Scheduler(Every(time.Millisecond)), []ScheduleOption{SkipIfStillRunning()}
			if i%2 == 1 {
				s, sopts = everyWall(time.Millisecond), append(sopts, WallClock())
			}
			timers = append(timers, tw.ScheduleFunc(s, f, sopts...))
		}
		time.Sleep(50 * time.Millisecond)
		for _, tm := range timers {
			require.True(t, tm.Stop())
		}
		tw.Stop() // waits for the pool's queued runs, not for goroutines
		waitFor(t, func() bool {
			for _, tm := range timers {
				if tm.owner.schedule.running.Load() {
					return false
				}
			}
			return true
		})
		require.LessOrEqual(t, uint64(began.Load()), tw.Stats().Fired)
	}
}
