package timingwheel

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Real-clock tests of the promise every Go wheel measured breaks: a timer
// never fires before its duration has elapsed. Lateness is bounded only by
// what means "stuck": a loaded 2-core machine under -race makes timers
// seconds late, and that is no bug. The phase of schedules and tickers, which
// lateness would hide here, is pinned on a FakeClock (schedule_test.go,
// ticker_test.go).

const (
	neverEarlyTimers = 3000
	maxNeverEarlyD   = 300 * time.Millisecond
	looseLateness    = semWait
)

var realTicks = []time.Duration{time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond}

func TestRealClockAfterFuncNeverEarly(t *testing.T) {
	for _, tick := range realTicks {
		for _, mode := range []struct {
			name string
			opts []Option
		}{{"goroutines", nil}, {"inline", []Option{WithInlineCallbacks()}}} {
			t.Run(fmt.Sprintf("tick=%v/%s", tick, mode.name), func(t *testing.T) {
				t.Parallel()
				tw, err := New(tick, 32, mode.opts...)
				require.NoError(t, err)
				defer tw.Stop()
				r := rand.New(rand.NewPCG(uint64(tick), 1))
				ds := make([]time.Duration, neverEarlyTimers)
				ranAfter := make([]time.Duration, neverEarlyTimers)
				var wg sync.WaitGroup
				wg.Add(len(ds))
				for i := range ds {
					ds[i] = time.Duration(r.Int64N(int64(maxNeverEarlyD)))
					start := time.Now() // before the wheel reads its clock: a safe lower bound
					tw.AfterFunc(ds[i], func() {
						ranAfter[i] = time.Since(start)
						wg.Done()
					})
				}
				waitWithin(t, &wg, "every AfterFunc ran")
				var worst time.Duration
				for i, d := range ds {
					require.GreaterOrEqual(t, ranAfter[i], d, "timer %d fired %v early", i, d-ranAfter[i])
					require.Less(t, ranAfter[i]-d, looseLateness, "timer %d", i)
					worst = max(worst, ranAfter[i]-d)
				}
				t.Logf("worst lateness %v", worst)
			})
		}
	}
}

func TestRealClockNewTimerNeverEarly(t *testing.T) {
	for _, tick := range realTicks {
		t.Run(fmt.Sprintf("tick=%v", tick), func(t *testing.T) {
			t.Parallel()
			tw, err := New(tick, 32)
			require.NoError(t, err)
			defer tw.Stop()
			r := rand.New(rand.NewPCG(uint64(tick), 2))
			ds := make([]time.Duration, neverEarlyTimers)
			starts := make([]time.Time, neverEarlyTimers)
			timers := make([]*Timer, neverEarlyTimers)
			for i := range ds {
				ds[i] = time.Duration(r.Int64N(int64(maxNeverEarlyD)))
				starts[i] = time.Now()
				timers[i] = tw.NewTimer(ds[i])
			}
			for i, tm := range timers {
				select {
				case v := <-tm.C: // the time it fired, on the monotonic clock
					require.GreaterOrEqual(t, v.Sub(starts[i]), ds[i], "timer %d sent a value early", i)
					require.Less(t, v.Sub(starts[i])-ds[i], looseLateness, "timer %d", i)
				case <-time.After(semWait):
					t.Fatalf("timer %d (d=%v) sent nothing", i, ds[i])
				}
			}
		})
	}
}

// The k-th run of Every(interval) never starts before start + k*interval,
// and the schedule keeps running over many intervals.
func TestRealClockScheduleNeverEarly(t *testing.T) {
	for _, tick := range realTicks {
		t.Run(fmt.Sprintf("tick=%v", tick), func(t *testing.T) {
			t.Parallel()
			tw, err := New(tick, 32)
			require.NoError(t, err)
			defer tw.Stop()
			const runs = 20
			intervals := []time.Duration{tick / 2, 3 * time.Millisecond, 7 * time.Millisecond, 13 * time.Millisecond}
			var wg sync.WaitGroup
			for _, interval := range intervals {
				times := make([]time.Duration, 0, runs)
				var mu sync.Mutex
				var tm *Timer
				wg.Add(1)
				start := time.Now()
				tm = tw.ScheduleFunc(Every(interval), func() {
					mu.Lock()
					defer mu.Unlock()
					if len(times) == runs {
						return
					}
					times = append(times, time.Since(start))
					if len(times) == runs {
						wg.Done()
					}
				})
				t.Cleanup(func() {
					tm.Stop()
					mu.Lock()
					defer mu.Unlock()
					for k, at := range times {
						want := time.Duration(k+1) * interval
						require.GreaterOrEqual(t, at, want, "Every(%v): run %d early", interval, k+1)
						require.Less(t, at-want, looseLateness, "Every(%v): run %d", interval, k+1)
					}
				})
			}
			waitWithin(t, &wg, fmt.Sprintf("%d runs of every schedule", runs))
		})
	}
}

// An idle wheel does not wake: not when empty, and not with 100k timers
// hours away. A ticking wheel would wake once per tick, 1000 times here.
func TestIdleWheelDoesNotWake(t *testing.T) {
	for _, n := range []int{0, 100_000} {
		t.Run(fmt.Sprintf("timers=%d", n), func(t *testing.T) {
			t.Parallel()
			tw, err := New(time.Millisecond, DefaultWheelSize)
			require.NoError(t, err)
			defer tw.Stop()
			r := rand.New(rand.NewPCG(3, 4))
			for range n {
				tw.AfterFunc(time.Hour+time.Duration(r.Int64N(int64(9*time.Hour))), func() {})
			}
			// Adds that moved the head earlier woke the poller; let it settle.
			last := tw.Stats().Wakeups
			require.Eventually(t, func() bool {
				w := tw.Stats().Wakeups
				settled := w == last
				last = w
				return settled
			}, semWait, 50*time.Millisecond)
			before := tw.Stats()
			time.Sleep(time.Second)
			after := tw.Stats()
			require.Equal(t, before.Wakeups, after.Wakeups, "an idle wheel woke")
			require.Equal(t, n, after.Pending)
			require.Zero(t, after.Fired)
		})
	}
}
