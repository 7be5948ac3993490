package timingwheel

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Stress tests on the real clock: many goroutines race Stop and Reset
// against expirations that cascade through a small wheel. Each runs for
// about a second; run with -race.

const stressFor = time.Second

func stressDuration(r *rand.Rand) time.Duration {
	return time.Duration(r.Int64N(int64(3*time.Millisecond) + 1))
}

// armings counts, for one timer, how each arming ended.
type armings struct {
	armed   atomic.Int64 // AfterFunc, plus every Reset
	ran     atomic.Int64 // callbacks run
	stopped atomic.Int64 // Stops that returned true
	reset   atomic.Int64 // Resets that returned true: the previous arming was cancelled
}

// For every arming of an AfterFunc timer exactly one of "its callback ran"
// and "a Stop or Reset returned true" holds, with the callers advancing the
// wheel themselves (2 or 64 goroutines per P, spread over every shard) or,
// with inline callbacks, the poller alone.
func TestStressAfterFuncExactlyOncePerArming(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		perP int
	}{
		{"goroutines", nil, 2},
		{"goroutines, 64 per P", nil, 64},
		{"pool", []Option{WithWorkerPool(4)}, 2},
		{"inline", []Option{WithInlineCallbacks()}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw, err := New(time.Millisecond, 4, tc.opts...)
			require.NoError(t, err)
			defer tw.Stop()
			var all []*Timer
			var counts []*armings
			var mu sync.Mutex
			deadline := time.Now().Add(stressFor / 3)
			var wg sync.WaitGroup
			for g := range tc.perP * runtime.GOMAXPROCS(0) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
					var mine []*Timer
					var myCounts []*armings
					for time.Now().Before(deadline) {
						a := new(armings)
						a.armed.Add(1)
						tm := tw.AfterFunc(stressDuration(r), func() { a.ran.Add(1) })
						mine, myCounts = append(mine, tm), append(myCounts, a)
						// Race a few operations on recent timers against their expiry.
						for range r.IntN(4) {
							i := len(mine) - 1 - r.IntN(min(len(mine), 8))
							switch r.IntN(3) {
							case 0:
								if mine[i].Stop() {
									myCounts[i].stopped.Add(1)
								}
							case 1:
								myCounts[i].armed.Add(1)
								if mine[i].Reset(stressDuration(r)) {
									myCounts[i].reset.Add(1)
								}
							default:
								runtime.Gosched()
							}
						}
					}
					mu.Lock()
					all, counts = append(all, mine...), append(counts, myCounts...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			// End every arming still pending, then let handed-over callbacks finish.
			for i, tm := range all {
				if tm.Stop() {
					counts[i].stopped.Add(1)
				}
			}
			require.Zero(t, tw.Len())
			fired := tw.Stats().Fired
			require.Eventually(t, func() bool {
				var ran int64
				for _, a := range counts {
					ran += a.ran.Load()
				}
				return uint64(ran) == fired
			}, semWait, time.Millisecond, "callbacks run vs Stats().Fired")
			var armed, stops int64
			for i, a := range counts {
				ended := a.ran.Load() + a.stopped.Load() + a.reset.Load()
				require.Equal(t, a.armed.Load(), ended,
					"timer %d: %d armings, %d ran, %d Stops and %d Resets returned true",
					i, a.armed.Load(), a.ran.Load(), a.stopped.Load(), a.reset.Load())
				armed += a.armed.Load()
				stops += a.stopped.Load()
			}
			require.Equal(t, uint64(stops), tw.Stats().Stopped)
			t.Logf("%d timers, %d armings, %d fired", len(all), armed, fired)
		})
	}
}

// Channel timers: after Stop or Reset returns, no stale value is received,
// and every arming is either received exactly once or cancelled.
func TestStressChannelTimerNoStaleValue(t *testing.T) {
	tw, err := New(time.Millisecond, 4)
	require.NoError(t, err)
	defer tw.Stop()
	deadline := time.Now().Add(stressFor / 2)
	var wg sync.WaitGroup
	var stale, checks atomic.Int64
	for g := range 2 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
			for time.Now().Before(deadline) {
				start := time.Now()
				d := stressDuration(r)
				tm := tw.NewTimer(d)
				armedAt, armedFor := start, d
				for range 1 + r.IntN(5) {
					// Let the timer fire, or not, then race it.
					if r.IntN(2) == 0 {
						time.Sleep(time.Duration(r.Int64N(int64(2 * time.Millisecond))))
					}
					switch r.IntN(3) {
					case 0:
						tm.Stop()
						if len(tm.C) != 0 {
							stale.Add(1)
						}
						armedFor = -1 // inactive
					case 1:
						before := time.Now()
						tm.Reset(time.Hour)
						select {
						case v := <-tm.C:
							t.Errorf("value %v received after Reset(1h) returned (armed %v at %v)", v, armedFor, armedAt)
							stale.Add(1)
						case <-time.After(time.Duration(r.Int64N(int64(time.Millisecond)))):
						}
						checks.Add(1)
						armedAt, armedFor = before, time.Hour
					default:
						before := time.Now()
						d := stressDuration(r)
						tm.Reset(d)
						armedAt, armedFor = before, d
						select {
						case v := <-tm.C:
							if v.Before(armedAt.Add(armedFor)) {
								t.Errorf("value %v received %v before the deadline of the Reset(%v) made at %v",
									v, armedAt.Add(armedFor).Sub(v), armedFor, armedAt)
							}
							armedFor = -1
						case <-time.After(semWait):
							t.Errorf("Reset(%v) never fired", d)
						}
					}
				}
				tm.Stop()
			}
		}()
	}
	wg.Wait()
	require.Zero(t, stale.Load())
	require.Zero(t, tw.Len())
	t.Logf("%d Reset(1h) checks", checks.Load())
}

// stopSettle is how long after a Stop that returned true a run may still
// begin: Stop does not wait for a run already handed over and past its gate
// (TestScheduleStopCancelsARunNotYetBegun checks the gate exactly). A run
// that begins later than this means the schedule went on. A run past its gate
// can wait for a P that long on a loaded 2-core machine under -race, so it is
// seconds; a schedule that went on (periods under a millisecond) shows within
// it all the same.
const stopSettle = 2 * time.Second

func markStopped(stopped *atomic.Bool) {
	time.AfterFunc(stopSettle, func() { stopped.Store(true) })
}

// A ScheduleFunc timer stopped from another goroutine, or from inside its
// own f: once Stop has returned true, the schedule makes no more runs.
func TestStressScheduleNoRunAfterStop(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"goroutines", nil},
		{"pool", []Option{WithWorkerPool(2)}},
		{"inline", []Option{WithInlineCallbacks()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw, err := New(time.Millisecond, 4, tc.opts...)
			require.NoError(t, err)
			defer tw.Stop()
			deadline := time.Now().Add(stressFor / 3)
			var wg sync.WaitGroup
			var late, schedules, runs atomic.Int64
			for g := range 24 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
					for time.Now().Before(deadline) {
						schedules.Add(1)
						var stopped atomic.Bool
						var tm *Timer
						var ready sync.WaitGroup
						ready.Add(1)
						selfStopAt := int64(-1)
						if r.IntN(2) == 0 {
							selfStopAt = r.Int64N(4)
						}
						var n atomic.Int64
						period := time.Duration(1 + r.Int64N(int64(2*time.Millisecond)/4)) // 1 ns to 0.5 ms, never 0 (Every panics)
						tm = tw.ScheduleFunc(Every(period), func() {
							if stopped.Load() {
								late.Add(1)
							}
							runs.Add(1)
							if n.Add(1)-1 == selfStopAt {
								ready.Wait()
								if tm.Stop() {
									markStopped(&stopped)
								}
							}
						})
						ready.Done()
						time.Sleep(time.Duration(r.Int64N(int64(3 * time.Millisecond))))
						if tm.Stop() {
							markStopped(&stopped)
						}
						require.False(t, tm.Stop(), "a second Stop")
						// Give a run that wrongly escaped the Stop time to show.
						time.Sleep(time.Millisecond)
					}
				}()
			}
			wg.Wait()
			time.Sleep(stopSettle + stopSettle/4) // let the last marks land, and a run after them show
			require.Zero(t, late.Load(), "runs started well after Stop returned true")
			t.Logf("%d schedules, %d runs", schedules.Load(), runs.Load())
		})
	}
}

// wheel.Stop racing adds: no deadlock, and a timer added after Stop returned
// never fires; one added before fires at most once.
func TestStressWheelStopRacingAdds(t *testing.T) {
	for range 5 {
		tw, err := New(time.Millisecond, 4)
		require.NoError(t, err)
		var stopReturned atomic.Bool
		var lateRuns, doubleRuns atomic.Int64
		var wg sync.WaitGroup
		quit := make(chan struct{})
		for g := range 2 * runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
				for {
					select {
					case <-quit:
						return
					default:
					}
					after := stopReturned.Load()
					var ran, allowed atomic.Int32
					allowed.Store(1)
					tm := tw.AfterFunc(stressDuration(r), func() {
						if after {
							lateRuns.Add(1)
						}
						if ran.Add(1) > allowed.Load() {
							doubleRuns.Add(1)
						}
					})
					if r.IntN(3) == 0 {
						allowed.Add(1) // Reset re-arms a timer that has fired
						tm.Reset(stressDuration(r))
					}
					if r.IntN(3) == 0 {
						tm.Stop()
					}
				}
			}()
		}
		time.Sleep(50 * time.Millisecond)
		withTimeout(t, semWait, "wheel Stop racing adds", func() {
			tw.Stop()
			stopReturned.Store(true)
		})
		time.Sleep(50 * time.Millisecond)
		close(quit)
		withTimeout(t, semWait, "adds after Stop", wg.Wait)
		time.Sleep(10 * time.Millisecond)
		require.Zero(t, lateRuns.Load(), "timers added after Stop fired")
		require.Zero(t, doubleRuns.Load(), "a callback ran more often than it was armed")
		require.Zero(t, tw.Len())
	}
}
