package timingwheel

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The real-clock and concurrent half of the comparison with package time
// (see timesemantics_test.go): Reset racing an expiry, many goroutines
// churning one wheel, a spinning goroutine at GOMAXPROCS=1, and never early.
// Each implementation runs for a fixed wall time, so that the test's length
// does not grow with a slow machine; "never early" is checked exactly,
// lateness only loosely.

const (
	churnFor   = 300 * time.Millisecond // per implementation
	looseLate  = semWait                // lateness that means "stuck", not "slow"
	churnProcs = 4                      // goroutines per implementation, on 2 cores
	minRaces   = 25                     // per goroutine, however long they take
)

// raceDuration is short enough that an expiry often lands during the Stop or
// Reset that races it.
func raceDuration(r *rand.Rand) time.Duration {
	if r.IntN(8) == 0 {
		return 0
	}
	return time.Duration(r.Int64N(int64(1500 * time.Microsecond)))
}

// sleepOrSpin lets up to 2 ms pass, asleep or spinning, so that the timer
// under test fires before, during or after what the caller does next.
func sleepOrSpin(r *rand.Rand) {
	d := time.Duration(r.Int64N(int64(2 * time.Millisecond)))
	if r.IntN(2) == 0 {
		time.Sleep(d)
		return
	}
	for start := time.Now(); time.Since(start) < d; {
	}
}

// waitWithin waits for wg at most semWait.
func waitWithin(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	awaitSignal(t, done, what)
}

// After Reset(d) returns, a value received on C was sent no earlier than d
// after the call: never one of the arming Reset replaced, never early. And
// while nothing has been received, Stop and Reset report true (Go 1.23). The
// Reset lands at random around the expiry of the arming it replaces.
func TestTimeSemanticsResetRacingExpiryNoStaleValue(t *testing.T) {
	for _, m := range []apiMaker{apiWheel, apiInline, apiTime} {
		t.Run(m.name, func(t *testing.T) {
			api := m.open(t)
			end := time.Now().Add(churnFor)
			var resets atomic.Int64
			var wg sync.WaitGroup
			for g := range churnProcs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
					tm, c := api.newTimer(raceDuration(r))
					for i := 0; i < minRaces || time.Now().Before(end); i++ {
						sleepOrSpin(r)
						d := raceDuration(r)
						start := time.Now()
						if r.IntN(4) == 0 {
							if !tm.Stop() {
								t.Errorf("Stop of a timer whose value was not received returned false")
							}
							if tm.Reset(d) {
								t.Errorf("Reset after Stop returned true")
							}
						} else if !tm.Reset(d) {
							t.Errorf("Reset of a timer whose value was not received returned false")
						}
						select {
						case v := <-c:
							if early := start.Add(d).Sub(v); early > 0 {
								t.Errorf("after Reset(%v), received a value sent %v before its deadline", d, early)
							}
							if elapsed := time.Since(start); elapsed < d {
								t.Errorf("after Reset(%v), received a value %v early", d, d-elapsed)
							}
						case <-time.After(semWait):
							t.Errorf("Reset(%v) never fired", d)
							return
						}
						resets.Add(1)
						// Received: inactive until re-armed for the next race.
						if tm.Reset(raceDuration(r)) {
							t.Errorf("Reset of a timer whose value was received returned true")
						}
					}
					if !tm.Stop() {
						t.Errorf("Stop of the last, unreceived arming returned false")
					}
				}()
			}
			waitWithin(t, &wg, "the racing goroutines")
			t.Logf("%d Resets raced an expiry", resets.Load())
			if api.wheel != nil {
				require.Zero(t, api.wheel.Len())
			}
		})
	}
}

// The same race for AfterFunc: a Reset that returned true cancelled the
// pending arming, so exactly one run follows and it starts no earlier than d
// after the Reset; one that returned false found the timer fired, so two runs
// follow, the later of them at least d after the Reset.
func TestTimeSemanticsAfterFuncResetRacingExpiry(t *testing.T) {
	for _, m := range []apiMaker{apiWheel, apiPool, apiInline, apiTime} {
		t.Run(m.name, func(t *testing.T) {
			api := m.open(t)
			end := time.Now().Add(churnFor)
			var cancelled, fired atomic.Int64
			var wg sync.WaitGroup
			for g := range churnProcs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
					runs := make(chan time.Time, 4)
					tm := api.afterFunc(raceDuration(r), func() { runs <- time.Now() })
					next := func(d time.Duration) (time.Time, bool) {
						select {
						case v := <-runs:
							return v, true
						case <-time.After(semWait):
							t.Errorf("Reset(%v): f never ran", d)
							return time.Time{}, false
						}
					}
					for i := 0; i < minRaces || time.Now().Before(end); i++ {
						sleepOrSpin(r)
						d := raceDuration(r)
						start := time.Now()
						last := start
						if tm.Reset(d) {
							cancelled.Add(1)
						} else {
							fired.Add(1)
							v, ok := next(d) // the run of the arming that fired
							if !ok {
								return
							}
							last = v
						}
						v, ok := next(d)
						if !ok {
							return
						}
						if v.After(last) {
							last = v
						}
						if last.Sub(start) < d {
							t.Errorf("after Reset(%v), f ran %v early", d, d-last.Sub(start))
						}
						if tm.Reset(raceDuration(r)) {
							t.Errorf("Reset of a timer whose f has run returned true")
						}
					}
					if !tm.Stop() {
						<-runs
					}
					select {
					case v := <-runs:
						t.Errorf("an extra run of f at %v", v)
					case <-time.After(semSettle):
					}
				}()
			}
			waitWithin(t, &wg, "the racing goroutines")
			t.Logf("Resets: %d cancelled a pending arming, %d found it fired", cancelled.Load(), fired.Load())
		})
	}
}

// armingTally counts, for one timer, how each of its armings ended.
type armingTally struct {
	armed    atomic.Int64 // AfterFunc or NewTimer, and every Reset
	ran      atomic.Int64 // runs of f
	received atomic.Int64 // values received from C
	stopped  atomic.Int64 // Stops that returned true
	reset    atomic.Int64 // Resets that returned true: the arming they replaced ended there
}

// Many goroutines arm, stop and reset AfterFunc and channel timers on one
// wheel, racing the expiries (sleep_test.go's TestTimerStopStress and
// TestAdjustTimers, churned): for every arming exactly one of "f ran or its
// value was received" and "a Stop or Reset returned true" holds, package
// time's timers keep the same books, and at the end the wheel's Stats and
// Len agree: nothing pending, and every arming counted once as fired or
// stopped, except those a Reset ended (Stats counts Stops only).
func TestTimeSemanticsConcurrentChurnExactAccounting(t *testing.T) {
	for _, m := range []apiMaker{apiWheel, apiPool, apiInline, apiTime} {
		t.Run(m.name, func(t *testing.T) {
			api := m.open(t)
			type funcTimer struct {
				tm    resettable
				tally *armingTally
			}
			type chanTimer struct {
				tm     resettable
				c      <-chan time.Time
				tally  *armingTally
				active bool // armed and its value not received: Stop must report true
			}
			var (
				mu     sync.Mutex
				funcs  []funcTimer
				chans  []*chanTimer
				wg     sync.WaitGroup
				end    = time.Now().Add(churnFor)
				recent = func(r *rand.Rand, n int) int { return n - 1 - r.IntN(min(n, 16)) }
			)
			d := func(r *rand.Rand) time.Duration { return time.Duration(r.Int64N(int64(12 * time.Millisecond))) }
			for g := range churnProcs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
					var myFuncs []funcTimer
					var myChans []*chanTimer
					for time.Now().Before(end) {
						switch op := r.IntN(8); {
						case op < 2 || len(myFuncs) == 0:
							tally := new(armingTally)
							tally.armed.Add(1)
							myFuncs = append(myFuncs, funcTimer{api.afterFunc(d(r), func() { tally.ran.Add(1) }), tally})
						case op == 2:
							ft := myFuncs[recent(r, len(myFuncs))]
							if ft.tm.Stop() {
								ft.tally.stopped.Add(1)
							}
						case op == 3:
							ft := myFuncs[recent(r, len(myFuncs))]
							ft.tally.armed.Add(1)
							if ft.tm.Reset(d(r)) {
								ft.tally.reset.Add(1)
							}
						case op == 4 || len(myChans) == 0:
							tally := new(armingTally)
							tally.armed.Add(1)
							tm, c := api.newTimer(d(r))
							myChans = append(myChans, &chanTimer{tm, c, tally, true})
						case op == 5:
							ct := myChans[recent(r, len(myChans))]
							if !ct.active {
								// Reset only an inactive channel timer, so that every
								// Reset that returns true ended a pending arming.
								if ct.tm.Reset(d(r)) {
									t.Errorf("Reset of a stopped or received channel timer returned true")
								}
								ct.tally.armed.Add(1)
								ct.active = true
								break
							}
							select {
							case <-ct.c:
								ct.tally.received.Add(1)
								ct.active = false
							default:
								if r.IntN(2) == 0 {
									if !ct.tm.Stop() {
										t.Errorf("Stop of an armed channel timer whose value was not received returned false")
									}
									ct.tally.stopped.Add(1)
									ct.active = false
								}
							}
						default:
							runtime.Gosched()
						}
					}
					mu.Lock()
					funcs, chans = append(funcs, myFuncs...), append(chans, myChans...)
					mu.Unlock()
				}()
			}
			waitWithin(t, &wg, "the churning goroutines")

			// End every arming still pending.
			for _, ft := range funcs {
				if ft.tm.Stop() {
					ft.tally.stopped.Add(1)
				}
			}
			for _, ct := range chans {
				if stopped := ct.tm.Stop(); stopped != ct.active {
					t.Errorf("Stop of a channel timer returned %v; active %v", stopped, ct.active)
				} else if stopped {
					ct.tally.stopped.Add(1)
				}
			}
			var armed, resetEnded, wantRuns int64
			for _, ft := range funcs {
				a := ft.tally
				armed += a.armed.Load()
				resetEnded += a.reset.Load()
				wantRuns += a.armed.Load() - a.stopped.Load() - a.reset.Load()
			}
			for _, ct := range chans {
				armed += ct.tally.armed.Load()
				resetEnded += ct.tally.reset.Load()
			}
			require.Eventually(t, func() bool {
				var ran int64
				for _, ft := range funcs {
					ran += ft.tally.ran.Load()
				}
				return ran == wantRuns
			}, semWait, time.Millisecond, "runs of f: want %d", wantRuns)
			time.Sleep(semSettle) // for a run that should not happen
			for i, ft := range funcs {
				a := ft.tally
				require.Equal(t, a.armed.Load(), a.ran.Load()+a.stopped.Load()+a.reset.Load(),
					"AfterFunc timer %d: %d armings, %d runs, %d Stops and %d Resets returned true",
					i, a.armed.Load(), a.ran.Load(), a.stopped.Load(), a.reset.Load())
			}
			for i, ct := range chans {
				a := ct.tally
				require.Equal(t, a.armed.Load(), a.received.Load()+a.stopped.Load(),
					"channel timer %d: %d armings, %d received, %d Stops returned true",
					i, a.armed.Load(), a.received.Load(), a.stopped.Load())
			}
			t.Logf("%d AfterFunc and %d channel timers, %d armings, %d ended by Reset", len(funcs), len(chans), armed, resetEnded)
			if tw := api.wheel; tw != nil {
				s := tw.Stats()
				require.Zero(t, tw.Len())
				require.Zero(t, s.Pending)
				require.Equal(t, uint64(armed), s.Fired+s.Stopped+uint64(resetEnded),
					"Stats %+v: every arming is fired, stopped, or ended by a Reset", s)
			}
		})
	}
}

// At GOMAXPROCS=1, goroutines that are always runnable do not keep the wheel's
// poller, or the callback it starts, from running (sleep_test.go's
// TestAfterFuncStarvation). A watchdog on package time ends the load if the
// wheel never fires, so that a failure is reported rather than hung.
func TestTimeSemanticsCallbacksNotStarvedAtGOMAXPROCS1(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	loads := []struct {
		name string
		run  func(stop *atomic.Bool, wg *sync.WaitGroup)
	}{
		{"ping-pong", func(stop *atomic.Bool, wg *sync.WaitGroup) {
			// One of the two is always runnable: the sender while the buffer
			// is empty, the receiver while it is full.
			c := make(chan struct{}, 1)
			wg.Add(2)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					c <- struct{}{}
				}
				close(c)
			}()
			go func() {
				defer wg.Done()
				for range c {
				}
			}()
		}},
		{"spin", func(stop *atomic.Bool, wg *sync.WaitGroup) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := 0
				for !stop.Load() {
					n++
				}
			}()
		}},
	}
	for _, m := range []apiMaker{apiWheel, apiPool, apiInline, apiTime} {
		for _, load := range loads {
			t.Run(m.name+"/"+load.name, func(t *testing.T) {
				api := m.open(t)
				for round := range 5 {
					var stop atomic.Bool
					var wg sync.WaitGroup
					load.run(&stop, &wg)
					fired := make(chan struct{})
					api.afterFunc(time.Duration(round)*time.Millisecond, func() {
						stop.Store(true)
						close(fired)
					})
					watchdog := time.AfterFunc(semWait, func() { stop.Store(true) })
					wg.Wait()
					if !watchdog.Stop() {
						t.Fatalf("round %d: the callback did not run within %v of a spinning load", round, semWait)
					}
					awaitSignal(t, fired, fmt.Sprintf("round %d: the callback", round))
				}
			})
		}
	}
}

// No timer fires early on the real clock: for AfterFunc and NewTimer with
// random durations up to 20 ms, f starts, and the value is sent and received,
// only once d has elapsed on the monotonic clock since before the call
// (sleep_test.go's TestAfter); lateness is bounded only loosely.
func TestTimeSemanticsNeverEarly(t *testing.T) {
	const timers = 300
	makers := []apiMaker{apiWheel, wheelMaker("wheel-7ms", 7*time.Millisecond, 8), apiInline, apiDefault, apiTime}
	for _, m := range makers {
		t.Run(m.name, func(t *testing.T) {
			api := m.open(t)
			r := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
			type sample struct {
				d                   time.Duration
				ran, sent, received time.Duration // since before the call
			}
			funcs, chans := make([]sample, timers), make([]sample, timers)
			var wg sync.WaitGroup
			wg.Add(2 * timers)
			for i := range timers {
				funcs[i].d = time.Duration(r.Int64N(int64(20*time.Millisecond) + 1))
				armed := time.Now()
				api.afterFunc(funcs[i].d, func() {
					funcs[i].ran = time.Since(armed)
					wg.Done()
				})
				chans[i].d = time.Duration(r.Int64N(int64(20*time.Millisecond) + 1))
				start := time.Now()
				_, c := api.newTimer(chans[i].d)
				go func() {
					defer wg.Done()
					select {
					case v := <-c:
						chans[i].received = time.Since(start)
						chans[i].sent = v.Sub(start)
					case <-time.After(semWait):
						chans[i].received = -1
					}
				}()
			}
			waitWithin(t, &wg, "every timer")
			var worst time.Duration
			for i, s := range funcs {
				require.GreaterOrEqual(t, s.ran, s.d, "AfterFunc %d: f ran %v early", i, s.d-s.ran)
				require.Less(t, s.ran-s.d, looseLate, "AfterFunc %d", i)
				worst = max(worst, s.ran-s.d)
			}
			for i, s := range chans {
				require.NotEqual(t, time.Duration(-1), s.received, "NewTimer %d never fired", i)
				require.GreaterOrEqual(t, s.sent, s.d, "NewTimer %d: value sent %v early", i, s.d-s.sent)
				require.GreaterOrEqual(t, s.received, s.d, "NewTimer %d: value received %v early", i, s.d-s.received)
				require.Less(t, s.received-s.d, looseLate, "NewTimer %d", i)
				worst = max(worst, s.received-s.d)
			}
			t.Logf("worst lateness %v", worst)
		})
	}
}

// The value on C is the time the timer fired, not the time it was received
// (tick_test.go's TestAfterTimes). A late poller makes an attempt fail (the
// timer fired after the read began), so each attempt reads twice as late as
// the one before: the last waits 25.6 s, more than any load makes a poller
// late.
func TestTimeSemanticsValueIsTheExpiryTime(t *testing.T) {
	const d = 10 * time.Millisecond
	for _, m := range []apiMaker{apiWheel, apiDefault, apiTime} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			api := m.open(t)
			readLate := 200 * time.Millisecond
			for attempt := range 8 {
				if attempt > 0 {
					readLate *= 2
				}
				start := time.Now()
				_, c := api.newTimer(d)
				time.Sleep(readLate)
				at := receiveWithin(t, c, "NewTimer(10ms)").Sub(start)
				require.GreaterOrEqual(t, at, d, "the value is %v early", d-at)
				if at < readLate*3/4 {
					return
				}
				t.Logf("attempt %d: the value read %v after NewTimer(%v) is %v after it", attempt, readLate, d, at)
			}
			t.Error("the value on C is the time of the receive, not of the expiry")
		})
	}
}

// Timers fire in the order of their deadlines: of two timers whose deadlines
// are more than two ticks apart, the earlier sends the earlier value
// (sleep_test.go's TestAfterQueuing, comparing the values sent rather than
// the order in which the receiving goroutines run, which the scheduler
// decides). A deadline is known to lie between the clock read before the
// call plus d and the clock read after it plus d; arming a dozen timers can
// take longer than a step on a loaded machine, so order is required only
// between deadlines whose bounds do not overlap.
func TestTimeSemanticsFiresInDeadlineOrder(t *testing.T) {
	const (
		step  = 10 * time.Millisecond
		apart = 2 * time.Millisecond // two ticks of the wheels under test
	)
	for _, m := range []apiMaker{apiWheel, apiInline, apiDefault, apiTime} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			api := m.open(t)
			r := rand.New(rand.NewPCG(3, uint64(time.Now().UnixNano())))
			type timer struct {
				earliest, latest time.Duration // bounds of the deadline, since start
				sent             time.Duration // the value received, since start
			}
			multiples := append(r.Perm(10), 2, 2, 7, 0) // some deadlines shared
			timers := make([]timer, len(multiples))
			var wg sync.WaitGroup
			wg.Add(len(multiples))
			start := time.Now()
			for i, k := range multiples {
				d := time.Duration(k) * step
				timers[i].earliest = time.Since(start) + d
				_, c := api.newTimer(d)
				timers[i].latest = time.Since(start) + d
				go func() {
					defer wg.Done()
					select {
					case v := <-c:
						timers[i].sent = v.Sub(start)
					case <-time.After(semWait):
						timers[i].sent = -1
					}
				}()
			}
			waitWithin(t, &wg, "every timer")
			for i, a := range timers {
				require.GreaterOrEqual(t, a.sent, a.earliest, "timer %d (%d steps) fired early, or never", i, multiples[i])
				for j, b := range timers {
					if a.latest+apart <= b.earliest {
						require.LessOrEqual(t, a.sent, b.sent, "timer %d (%d steps) fired after timer %d (%d steps): %+v",
							i, multiples[i], j, multiples[j], timers)
					}
				}
			}
		})
	}
}

// Zero-duration timers are not missed, fresh or re-armed by Reset, while a
// goroutine keeps the garbage collector running (sleep_test.go's
// TestZeroTimer and TestTickerStress). On the inline wheel each waits for the
// poller's next tick, so it makes fewer.
func TestTimeSemanticsZeroDurationNotMissed(t *testing.T) {
	for _, m := range []apiMaker{apiWheel, apiPool, apiInline, apiDefault, apiTime} {
		t.Run(m.name, func(t *testing.T) {
			api := m.open(t)
			n := 1000
			if m.name == apiInline.name {
				n = 100
			}
			stop := make(chan struct{})
			var gc sync.WaitGroup
			gc.Add(1)
			go func() {
				defer gc.Done()
				for {
					select {
					case <-stop:
						return
					default:
						runtime.GC()
						time.Sleep(time.Microsecond)
					}
				}
			}()
			defer func() {
				close(stop)
				gc.Wait()
			}()
			for i := range n {
				_, c := api.newTimer(0)
				receiveWithin(t, c, fmt.Sprintf("NewTimer(0) #%d", i))
			}
			reused, c := api.newTimer(semLong)
			for i := range n {
				if reused.Reset(0) != (i == 0) {
					t.Fatalf("Reset(0) #%d: reported the timer active after its value was received", i)
				}
				receiveWithin(t, c, fmt.Sprintf("Reset(0) #%d", i))
			}
			ran := make(chan struct{}, 1)
			for i := range n {
				api.afterFunc(0, func() { ran <- struct{}{} })
				awaitSignal(t, ran, fmt.Sprintf("AfterFunc(0) #%d", i))
			}
		})
	}
}
