package timingwheel

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The wheel's Timer against package time's, scenario by scenario: the
// behaviours Go's own src/time/sleep_test.go and tick_test.go check of
// package time, run on the wheel and on package time side by side. Where the
// wheel claims to behave as time does, each scenario records what a caller
// can observe (Stop and Reset results, whether a value arrived on C, whether
// f ran and where) and every implementation must record the same list.
//
// These tests use only the exported API, so they hold whatever the wheel's
// internals become. Waits for something that must happen are bounded but
// generous (semWait); a check that something does not happen waits a short
// settle time, which can miss a bug on a slow run but never fails a correct
// wheel.

const (
	semShort  = time.Millisecond
	semLong   = time.Hour
	semWait   = 30 * time.Second      // what must happen, happens within this, even on a loaded 2-core machine under -race
	semSettle = 20 * time.Millisecond // how long "nothing arrives" is watched
)

// resettable is what package time's Timer and the wheel's have in common.
type resettable interface {
	Stop() bool
	Reset(time.Duration) bool
}

// A timerAPI is one implementation of package time's one-shot timers: a wheel
// made for the test, the package-level functions on the default wheel, or
// package time itself.
type timerAPI struct {
	afterFunc func(time.Duration, func()) resettable
	newTimer  func(time.Duration) (resettable, <-chan time.Time)
	wheel     *TimingWheel // nil for package time and for the shared default wheel
}

// An apiMaker opens a timerAPI for one (sub)test; a wheel it makes is
// stopped when that test ends.
type apiMaker struct {
	name string
	open func(t *testing.T) timerAPI
}

func wheelMaker(name string, tick time.Duration, size int, opts ...Option) apiMaker {
	return apiMaker{name, func(t *testing.T) timerAPI {
		tw, err := New(tick, size, opts...)
		require.NoError(t, err)
		t.Cleanup(tw.Stop)
		return timerAPI{
			afterFunc: func(d time.Duration, f func()) resettable { return tw.AfterFunc(d, f) },
			newTimer: func(d time.Duration) (resettable, <-chan time.Time) {
				tm := tw.NewTimer(d)
				return tm, tm.C
			},
			wheel: tw,
		}
	}}
}

var (
	// The wheel in each callback mode, small (8 buckets a level) so that
	// timers of a few milliseconds already cascade.
	apiWheel  = wheelMaker("wheel", time.Millisecond, 8)
	apiPool   = wheelMaker("wheel-pool", time.Millisecond, 8, WithWorkerPool(2))
	apiInline = wheelMaker("wheel-inline", time.Millisecond, 8, WithInlineCallbacks())
	// A nanosecond tick, where now+math.MaxInt64 saturates the due tick itself.
	apiNanoTick = wheelMaker("wheel-1ns", time.Nanosecond, 512)

	apiDefault = apiMaker{"default", func(*testing.T) timerAPI {
		return timerAPI{
			afterFunc: func(d time.Duration, f func()) resettable { return AfterFunc(d, f) },
			newTimer: func(d time.Duration) (resettable, <-chan time.Time) {
				tm := NewTimer(d)
				return tm, tm.C
			},
		}
	}}

	apiTime = apiMaker{"time", func(*testing.T) timerAPI {
		return timerAPI{
			afterFunc: func(d time.Duration, f func()) resettable { return time.AfterFunc(d, f) },
			newTimer: func(d time.Duration) (resettable, <-chan time.Time) {
				tm := time.NewTimer(d)
				return tm, tm.C
			},
		}
	}}
)

// observations is what one scenario saw, in order.
type observations []string

func (o *observations) note(format string, args ...any) {
	*o = append(*o, fmt.Sprintf(format, args...))
}

// requireSameAsTime runs scenario on each API, each in its own subtest, and
// requires every one to observe want; apiTime must be among makers, so that a
// wrong want shows up as package time failing, and the wheel's observations
// are compared with time's directly as well.
func requireSameAsTime(t *testing.T, makers []apiMaker, want []string, scenario func(t *testing.T, api timerAPI, o *observations)) {
	t.Helper()
	seen := make(map[string]observations)
	for _, m := range makers {
		t.Run(m.name, func(t *testing.T) {
			var o observations
			defer func() { seen[m.name] = o }() // what it saw, even if it failed on the way
			scenario(t, m.open(t), &o)
			require.Equal(t, want, []string(o))
		})
	}
	ref, ok := seen[apiTime.name]
	require.True(t, ok, "package time must run the scenario too")
	for name, o := range seen {
		require.Equal(t, ref, o, "%s observed differently from package time", name)
	}
}

// receiveWithin waits, at most semWait, for a value on c.
func receiveWithin(t *testing.T, c <-chan time.Time, what string) time.Time {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(semWait):
		t.Fatalf("%s: nothing received within %v", what, semWait)
		return time.Time{}
	}
}

// nothingOn reports whether nothing arrives on c within settle.
func nothingOn(c <-chan time.Time, settle time.Duration) bool {
	if settle <= 0 {
		select {
		case <-c:
			return false
		default:
			return true
		}
	}
	select {
	case <-c:
		return false
	case <-time.After(settle):
		return true
	}
}

// awaitSignal waits, at most semWait, for a value on c.
func awaitSignal[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(semWait):
		t.Fatalf("%s: did not happen within %v", what, semWait)
		var zero T
		return zero
	}
}

// awaitExpired returns once a channel timer armed for semShort has expired
// but nothing has been received from c. The wheel's C has a buffer, so its
// value is seen waiting there; package time's C reports no length since Go
// 1.23, so for it this can only sleep well past the deadline (and if the
// machine is too slow for that, the timer is still pending, for which Stop
// and Reset report the same).
func awaitExpired(t *testing.T, c <-chan time.Time) {
	t.Helper()
	if cap(c) == 0 {
		time.Sleep(semSettle)
		return
	}
	require.Eventually(t, func() bool { return len(c) == 1 }, semWait, 100*time.Microsecond,
		"the timer never expired")
}

// callerGoroutineID returns the calling goroutine's id from its stack header
// ("goroutine 18 [running]:"), to tell which goroutine ran a callback.
func callerGoroutineID() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	fields := bytes.Fields(buf[:n])
	id, err := strconv.ParseUint(string(fields[1]), 10, 64)
	if err != nil {
		panic("cannot parse the goroutine id in " + string(buf[:n]))
	}
	return id
}

// Stop and Reset of a channel timer report, in every state, what package
// time's report since Go 1.23: a timer is active until its value is received,
// so a fired timer whose value is still unread is stopped (true) and its value
// discarded. After Stop or Reset returns, no value of the earlier arming is
// received (tick_test.go's testTimerChan).
func TestTimeSemanticsChannelTimerStopReset(t *testing.T) {
	makers := []apiMaker{apiWheel, apiInline, apiDefault, apiTime}
	for _, sc := range []struct {
		name string
		want []string
		run  func(t *testing.T, api timerAPI, o *observations)
	}{
		{"pending", []string{"Stop=true", "Stop=false", "quiet=true", "Reset=false", "Stop=true", "quiet=true"},
			func(t *testing.T, api timerAPI, o *observations) {
				tm, c := api.newTimer(semLong)
				o.note("Stop=%v", tm.Stop())
				o.note("Stop=%v", tm.Stop())
				o.note("quiet=%v", nothingOn(c, semSettle))
				o.note("Reset=%v", tm.Reset(semLong))
				o.note("Stop=%v", tm.Stop())
				o.note("quiet=%v", nothingOn(c, semSettle))
			}},
		{"fired and received", []string{"received", "Stop=false", "Reset=false", "Stop=true", "quiet=true"},
			func(t *testing.T, api timerAPI, o *observations) {
				tm, c := api.newTimer(semShort)
				receiveWithin(t, c, "NewTimer(1ms)")
				o.note("received")
				o.note("Stop=%v", tm.Stop())
				o.note("Reset=%v", tm.Reset(semLong))
				o.note("Stop=%v", tm.Stop())
				o.note("quiet=%v", nothingOn(c, semSettle))
			}},
		{"fired, not received, then Stop", []string{"Stop=true", "quiet=true", "Stop=false", "Reset=false", "fresh=true"},
			func(t *testing.T, api timerAPI, o *observations) {
				tm, c := api.newTimer(semShort)
				awaitExpired(t, c)
				o.note("Stop=%v", tm.Stop())
				o.note("quiet=%v", nothingOn(c, semSettle))
				o.note("Stop=%v", tm.Stop())
				start := time.Now()
				o.note("Reset=%v", tm.Reset(semShort))
				o.note("fresh=%v", receiveWithin(t, c, "Reset after Stop").Sub(start) >= semShort)
			}},
		{"fired, not received, then Reset", []string{"Reset=true", "fresh=true", "quiet=true", "Stop=false"},
			func(t *testing.T, api timerAPI, o *observations) {
				tm, c := api.newTimer(semShort)
				awaitExpired(t, c)
				start := time.Now()
				o.note("Reset=%v", tm.Reset(2*semShort))
				o.note("fresh=%v", receiveWithin(t, c, "Reset(2ms)").Sub(start) >= 2*semShort)
				o.note("quiet=%v", nothingOn(c, semSettle))
				o.note("Stop=%v", tm.Stop())
			}},
		{"pending, Reset sooner", []string{"Reset=true", "fresh=true", "Stop=false"},
			func(t *testing.T, api timerAPI, o *observations) {
				tm, c := api.newTimer(semLong)
				start := time.Now()
				o.note("Reset=%v", tm.Reset(semShort))
				o.note("fresh=%v", receiveWithin(t, c, "Reset(1ms)").Sub(start) >= semShort)
				o.note("Stop=%v", tm.Stop())
			}},
		{"pending, Reset later", []string{"Reset=true", "quiet=true", "Stop=true", "Stop=false"},
			func(t *testing.T, api timerAPI, o *observations) {
				tm, c := api.newTimer(semLong)
				o.note("Reset=%v", tm.Reset(2*semLong))
				o.note("quiet=%v", nothingOn(c, semSettle))
				o.note("Stop=%v", tm.Stop())
				o.note("Stop=%v", tm.Stop())
			}},
		{"Reset after Stop", []string{"Stop=true", "Reset=false", "fresh=true", "quiet=true"},
			func(t *testing.T, api timerAPI, o *observations) {
				tm, c := api.newTimer(semLong)
				o.note("Stop=%v", tm.Stop())
				start := time.Now()
				o.note("Reset=%v", tm.Reset(semShort))
				o.note("fresh=%v", receiveWithin(t, c, "Reset after Stop").Sub(start) >= semShort)
				o.note("quiet=%v", nothingOn(c, semSettle))
			}},
		{"Reset after received", []string{"Reset=false", "fresh=true", "Stop=false", "Reset=false", "Stop=true"},
			func(t *testing.T, api timerAPI, o *observations) {
				tm, c := api.newTimer(semShort)
				receiveWithin(t, c, "NewTimer(1ms)")
				start := time.Now()
				o.note("Reset=%v", tm.Reset(semShort))
				o.note("fresh=%v", receiveWithin(t, c, "Reset after a receive").Sub(start) >= semShort)
				o.note("Stop=%v", tm.Stop())
				o.note("Reset=%v", tm.Reset(semLong))
				o.note("Stop=%v", tm.Stop())
			}},
	} {
		t.Run(sc.name, func(t *testing.T) { requireSameAsTime(t, makers, sc.want, sc.run) })
	}
}

// funcProbe arms AfterFunc timers whose f counts its runs, signals each on
// ran, and returns only once gate is closed.
type funcProbe struct {
	t    *testing.T
	api  timerAPI
	ran  chan struct{}
	gate chan struct{} // closed unless a scenario holds f running

	mu   sync.Mutex
	runs int
}

func newFuncProbe(t *testing.T, api timerAPI) *funcProbe {
	p := &funcProbe{t: t, api: api, ran: make(chan struct{}, 16), gate: make(chan struct{})}
	close(p.gate)
	return p
}

func (p *funcProbe) arm(d time.Duration) resettable {
	gate := p.gate
	return p.api.afterFunc(d, func() {
		p.mu.Lock()
		p.runs++
		p.mu.Unlock()
		p.ran <- struct{}{}
		<-gate
	})
}

func (p *funcProbe) awaitRun() { p.t.Helper(); awaitSignal(p.t, p.ran, "a run of f") }

// count returns the runs so far, after a settle time for any that should not
// happen.
func (p *funcProbe) count() int {
	time.Sleep(semSettle)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs
}

// Stop and Reset of an AfterFunc timer report what package time's do: Stop
// whether it prevented f, Reset whether the timer was pending; and Reset of
// a timer that has fired, or is running f, schedules f again (sleep_test.go's
// TestAfterStop and TestReset, with AfterFunc).
func TestTimeSemanticsAfterFuncStopReset(t *testing.T) {
	makers := []apiMaker{apiWheel, apiPool, apiInline, apiDefault, apiTime}
	for _, sc := range []struct {
		name string
		want []string
		run  func(p *funcProbe, o *observations)
	}{
		{"pending", []string{"Stop=true", "Stop=false", "Reset=false", "Stop=true", "Stop=false", "runs=0"},
			func(p *funcProbe, o *observations) {
				tm := p.arm(semLong)
				o.note("Stop=%v", tm.Stop())
				o.note("Stop=%v", tm.Stop())
				o.note("Reset=%v", tm.Reset(semLong)) // re-arms the stopped timer
				o.note("Stop=%v", tm.Stop())
				o.note("Stop=%v", tm.Stop())
				o.note("runs=%d", p.count())
			}},
		{"fired, then Reset", []string{"runs=1", "Stop=false", "Reset=false", "runs=2", "Stop=false"},
			func(p *funcProbe, o *observations) {
				tm := p.arm(semShort)
				p.awaitRun()
				o.note("runs=%d", p.count())
				o.note("Stop=%v", tm.Stop())
				o.note("Reset=%v", tm.Reset(semShort))
				p.awaitRun()
				o.note("runs=%d", p.count())
				o.note("Stop=%v", tm.Stop())
			}},
		{"pending, Reset sooner", []string{"Reset=true", "runs=1", "Stop=false"},
			func(p *funcProbe, o *observations) {
				tm := p.arm(semLong)
				o.note("Reset=%v", tm.Reset(semShort))
				p.awaitRun()
				o.note("runs=%d", p.count())
				o.note("Stop=%v", tm.Stop())
			}},
		{"pending, Reset later", []string{"Reset=true", "Stop=true", "runs=0"},
			func(p *funcProbe, o *observations) {
				tm := p.arm(semLong)
				o.note("Reset=%v", tm.Reset(2*semLong))
				o.note("Stop=%v", tm.Stop())
				o.note("runs=%d", p.count())
			}},
		{"Reset after Stop", []string{"Stop=true", "Reset=false", "runs=1", "Stop=false"},
			func(p *funcProbe, o *observations) {
				tm := p.arm(semLong)
				o.note("Stop=%v", tm.Stop())
				o.note("Reset=%v", tm.Reset(semShort))
				p.awaitRun()
				o.note("runs=%d", p.count())
				o.note("Stop=%v", tm.Stop())
			}},
		{"Stop and Reset while f runs", []string{"Stop=false", "Reset=false", "runs=2", "Stop=false"},
			func(p *funcProbe, o *observations) {
				release := make(chan struct{})
				p.gate = release
				tm := p.arm(semShort)
				p.awaitRun() // f has started and is held
				o.note("Stop=%v", tm.Stop())
				o.note("Reset=%v", tm.Reset(semShort))
				close(release)
				p.awaitRun()
				o.note("runs=%d", p.count())
				o.note("Stop=%v", tm.Stop())
			}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			requireSameAsTime(t, makers, sc.want, func(t *testing.T, api timerAPI, o *observations) {
				sc.run(newFuncProbe(t, api), o)
			})
		})
	}
}

// A callback may Stop or Reset its own timer, as with package time: by then
// the timer has fired, so both report false, and Reset schedules f again.
func TestTimeSemanticsStopResetFromOwnCallback(t *testing.T) {
	makers := []apiMaker{apiWheel, apiPool, apiInline, apiDefault, apiTime}
	for _, sc := range []struct {
		name string
		want []string
		f    func(self resettable, run int) (result string, again bool)
		// after runs once f has said it will not run again.
		after func(self resettable, o *observations)
	}{
		{"Stop", []string{"run 1: Stop=false", "runs=1", "Stop=false"},
			func(self resettable, run int) (string, bool) {
				return fmt.Sprintf("Stop=%v", self.Stop()), false
			},
			func(self resettable, o *observations) { o.note("Stop=%v", self.Stop()) }},
		{"Reset re-arms", []string{"run 1: Reset=false", "run 2: Reset=false", "run 3: done", "runs=3", "Stop=false"},
			func(self resettable, run int) (string, bool) {
				if run == 3 {
					return "done", false
				}
				return fmt.Sprintf("Reset=%v", self.Reset(semShort)), true
			},
			func(self resettable, o *observations) { o.note("Stop=%v", self.Stop()) }},
		{"Reset far, then Stop from outside", []string{"run 1: Reset=false", "runs=1", "Stop=true", "Stop=false"},
			func(self resettable, run int) (string, bool) {
				return fmt.Sprintf("Reset=%v", self.Reset(semLong)), false
			},
			func(self resettable, o *observations) {
				o.note("Stop=%v", self.Stop())
				o.note("Stop=%v", self.Stop())
			}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			requireSameAsTime(t, makers, sc.want, func(t *testing.T, api timerAPI, o *observations) {
				self := make(chan resettable, 1) // f's own timer, once AfterFunc has returned it
				type result struct {
					run  int
					text string
					last bool
				}
				// A run re-armed from f may report before the run that
				// re-armed it, so reports are put back in run order.
				results := make(chan result, 8)
				var mu sync.Mutex
				runs := 0
				tm := api.afterFunc(semShort, func() {
					me := <-self
					self <- me
					mu.Lock()
					runs++
					run := runs
					mu.Unlock()
					text, again := sc.f(me, run)
					results <- result{run, text, !again}
				})
				self <- tm
				var byRun []string
				for last := 0; last == 0 || len(byRun) < last || slices.Contains(byRun, ""); {
					r := awaitSignal(t, results, "a run of f")
					byRun = append(byRun, make([]string, max(0, r.run-len(byRun)))...)
					byRun[r.run-1] = r.text
					if r.last {
						last = r.run
					}
				}
				for i, text := range byRun {
					o.note("run %d: %s", i+1, text)
				}
				time.Sleep(semSettle)
				mu.Lock()
				o.note("runs=%d", runs)
				mu.Unlock()
				sc.after(tm, o)
			})
		})
	}
}

// Durations at the extremes neither panic nor wrap around (sleep_test.go's
// TestOverflowSleep): d <= 0 fires promptly, AfterFunc's f on a goroutine
// other than the caller's; math.MaxInt64 and its neighbour, taken after the
// clock has moved so that now+d would overflow, never fire, and Stop of them
// reports true.
func TestTimeSemanticsExtremeDurations(t *testing.T) {
	makers := []apiMaker{apiWheel, apiNanoTick, apiPool, apiInline, apiDefault, apiTime}
	for _, d := range []time.Duration{0, -1, -time.Hour, math.MinInt64} {
		t.Run(fmt.Sprintf("d=%d", d), func(t *testing.T) {
			want := []string{"f on the caller's goroutine=false", "Stop=false", "received", "Stop=false",
				"Reset=true", "received", "Reset(d) of a fired AfterFunc=false", "f on the caller's goroutine=false"}
			requireSameAsTime(t, makers, want, func(t *testing.T, api timerAPI, o *observations) {
				ranOn := make(chan uint64, 2)
				f := func() { ranOn <- callerGoroutineID() }
				caller := callerGoroutineID()
				tm := api.afterFunc(d, f)
				o.note("f on the caller's goroutine=%v", awaitSignal(t, ranOn, "f") == caller)
				o.note("Stop=%v", tm.Stop())
				tc, c := api.newTimer(d)
				receiveWithin(t, c, "NewTimer(d)")
				o.note("received")
				o.note("Stop=%v", tc.Stop())
				tr, cr := api.newTimer(semLong)
				o.note("Reset=%v", tr.Reset(d))
				receiveWithin(t, cr, "Reset(d)")
				o.note("received")
				o.note("Reset(d) of a fired AfterFunc=%v", tm.Reset(d))
				o.note("f on the caller's goroutine=%v", awaitSignal(t, ranOn, "f again") == caller)
			})
		})
	}
	for _, d := range []time.Duration{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 / 2} {
		t.Run(fmt.Sprintf("d=%d", d), func(t *testing.T) {
			want := []string{"quiet=true", "AfterFunc Stop=true", "NewTimer Stop=true", "AfterFunc Stop=false",
				"NewTimer Stop=false", "Reset=true", "quiet=true", "Stop=true"}
			requireSameAsTime(t, makers, want, func(t *testing.T, api timerAPI, o *observations) {
				time.Sleep(2 * time.Millisecond) // the clock has moved, so now+d overflows unless saturated
				fired := make(chan time.Time, 1)
				tm := api.afterFunc(d, func() { fired <- time.Now() })
				tc, c := api.newTimer(d)
				tr, cr := api.newTimer(semLong)
				resetOK := tr.Reset(d)
				o.note("quiet=%v", nothingOn(fired, semSettle) && nothingOn(c, 0) && nothingOn(cr, 0))
				o.note("AfterFunc Stop=%v", tm.Stop())
				o.note("NewTimer Stop=%v", tc.Stop())
				o.note("AfterFunc Stop=%v", tm.Stop())
				o.note("NewTimer Stop=%v", tc.Stop())
				o.note("Reset=%v", resetOK)
				o.note("quiet=%v", nothingOn(cr, 0))
				o.note("Stop=%v", tr.Stop())
			})
		})
	}
}

// The same on a FakeClock that has already run for an hour, and then runs for
// two more centuries: a timer for math.MaxInt64 (292 years) is not due, and
// one for math.MaxInt64-1 neither; Stop reports true for both.
func TestTimeSemanticsMaxDurationAfterTheClockMoved(t *testing.T) {
	for _, tick := range []time.Duration{time.Nanosecond, time.Millisecond} {
		t.Run(fmt.Sprintf("tick=%v", tick), func(t *testing.T) {
			clock := NewFakeClock(fakeStart)
			tw, err := New(tick, 8, WithClock(clock))
			require.NoError(t, err)
			defer tw.Stop()
			clock.Advance(time.Hour)
			fired := make(chan time.Time, 2)
			f := tw.AfterFunc(math.MaxInt64, func() { fired <- clock.Now() })
			g := tw.AfterFunc(math.MaxInt64-1, func() { fired <- clock.Now() })
			c := tw.NewTimer(math.MaxInt64)
			require.Equal(t, 3, tw.Len())
			for range 3 {
				clock.Advance(1 << 61) // 73 years
				ran := clock.Now().Sub(fakeStart)
				require.True(t, nothingOn(fired, 5*time.Millisecond), "an AfterFunc for about 292 years fired after %v", ran)
				require.True(t, nothingOn(c.C, 0), "NewTimer(math.MaxInt64) fired after %v", ran)
			}
			require.Equal(t, 3, tw.Len())
			require.True(t, f.Stop())
			require.True(t, g.Stop())
			require.True(t, c.Stop())
			require.Zero(t, tw.Len())
		})
	}
}

// fakeStart is where the FakeClocks of these tests start.
var fakeStart = time.Date(2030, 6, 7, 8, 9, 10, 0, time.UTC)

// The zero Timer panics on Stop and Reset, as package time's does, with the
// same message after the package's prefix (sleep_test.go's
// TestZeroTimerStopPanics and TestZeroTimerResetPanics).
func TestTimeSemanticsZeroTimerPanics(t *testing.T) {
	panicOf := func(f func()) (msg string) {
		defer func() {
			s, ok := recover().(string)
			require.True(t, ok, "the panic value is not a string")
			msg = s
		}()
		f()
		return "no panic"
	}
	for _, method := range []struct {
		name        string
		wheel, time func()
	}{
		{"Stop", func() { var z Timer; z.Stop() }, func() { var z time.Timer; z.Stop() }},
		{"Reset", func() { var z Timer; z.Reset(time.Second) }, func() { var z time.Timer; z.Reset(time.Second) }},
	} {
		t.Run(method.name, func(t *testing.T) {
			wheelMsg, timeMsg := panicOf(method.wheel), panicOf(method.time)
			require.Equal(t, "time: "+method.name+" called on uninitialized Timer", timeMsg)
			require.True(t, strings.HasPrefix(wheelMsg, "timingwheel: "), "wheel panics with %q", wheelMsg)
			require.Equal(t, strings.TrimPrefix(timeMsg, "time: "), strings.TrimPrefix(wheelMsg, "timingwheel: "))
		})
	}
}

// Each C reports the capacity its package documents: one for the wheel, which
// then shows a fired value waiting in len(C); zero for package time since Go
// 1.23, whose len(C) stays zero even once the value can be received.
func TestTimeSemanticsChannelCapacity(t *testing.T) {
	for _, m := range []apiMaker{apiWheel, apiInline, apiDefault} {
		t.Run(m.name, func(t *testing.T) {
			api := m.open(t)
			tm, c := api.newTimer(semLong)
			require.Equal(t, 1, cap(c))
			require.Zero(t, len(c))
			tm.Reset(semShort)
			require.Eventually(t, func() bool { return len(c) == 1 }, semWait, 100*time.Microsecond)
			require.True(t, tm.Stop(), "the value waiting in C is discarded")
			require.Zero(t, len(c))
		})
	}
	t.Run("wheel After", func(t *testing.T) {
		tw, err := New(time.Millisecond, 8)
		require.NoError(t, err)
		defer tw.Stop()
		c := tw.After(semShort)
		require.Equal(t, 1, cap(c))
		require.Equal(t, 1, cap(After(semShort)))
		receiveWithin(t, c, "After(1ms)")
	})
	t.Run("time", func(t *testing.T) {
		tm := time.NewTimer(semShort)
		require.Zero(t, cap(tm.C))
		time.Sleep(semSettle)
		require.Zero(t, len(tm.C), "time's C reports no length since Go 1.23")
		receiveWithin(t, tm.C, "time.NewTimer(1ms)")
		require.Zero(t, cap(time.After(semShort)))
	})
}

// With a FakeClock nothing is received before Advance reaches the deadline
// rounded up to the tick, and the value then received is the clock's time at
// that tick. The poller runs on its own goroutine, so "nothing" is checked
// after a settle time and "something" with a bounded wait.
func TestTimeSemanticsFakeClockAfterAndNewTimer(t *testing.T) {
	const tick = time.Millisecond
	ceilTo := func(d time.Duration) time.Duration { return (d + tick - 1) / tick * tick }
	for _, tc := range []struct {
		name     string
		pre      time.Duration // clock advance before the timer is armed
		d        time.Duration
		step     time.Duration // advance by this much at a time up to the deadline
		useAfter bool
		viaReset bool // arm NewTimer(1h), then Reset(d)
	}{
		{"aligned", 0, 3 * tick, tick, false, false},
		{"mid-tick deadline", 0, 2500 * time.Microsecond, tick / 2, true, false},
		{"armed mid-tick", 300 * time.Microsecond, tick, tick / 4, false, false},
		{"one nanosecond", 999 * time.Microsecond, 1, tick / 8, true, false},
		{"doc.go's worked cascade", 200 * time.Microsecond, 100300 * time.Microsecond, 7 * tick, false, false},
		{"a second, through three levels", 0, time.Second + 1, 50 * tick, true, false},
		{"Reset from mid-tick", 400 * time.Microsecond, 2 * tick, tick / 2, false, true},
		{"Reset through levels", 100 * time.Microsecond, 300*tick + 1, 20 * tick, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := NewFakeClock(fakeStart)
			tw, err := New(tick, 8, WithClock(clock))
			require.NoError(t, err)
			defer tw.Stop()
			clock.Advance(tc.pre)
			var c <-chan time.Time
			switch {
			case tc.useAfter:
				c = tw.After(tc.d)
			case tc.viaReset:
				tm := tw.NewTimer(time.Hour)
				clock.Advance(tc.pre) // the deadline counts from the Reset
				tc.pre *= 2
				require.True(t, tm.Reset(tc.d))
				c = tm.C
			default:
				c = tw.NewTimer(tc.d).C
			}
			deadline := tc.pre + tc.d
			due := ceilTo(deadline)
			now := tc.pre
			for _, at := range []time.Duration{deadline - 1, deadline, due - 1} {
				if at >= due {
					continue // an aligned deadline is its due tick
				}
				for now < at {
					step := min(tc.step, at-now)
					clock.Advance(step)
					now += step
					require.True(t, nothingOn(c, time.Millisecond), "received at %v, before the due tick %v", now, due)
				}
				require.True(t, nothingOn(c, semSettle), "received at %v, before the due tick %v", now, due)
			}
			clock.Advance(due - now)
			v := receiveWithin(t, c, fmt.Sprintf("timer due at %v", due))
			require.Equal(t, fakeStart.Add(due), v, "the value is the clock's time when it fired")
			require.True(t, nothingOn(c, semSettle), "a second value")
		})
	}
}

// d <= 0 on a FakeClock: the deadline has been reached, so After(d) is
// received and AfterFunc(d)'s f runs without any Advance, whether the clock
// sits on the wheel's current tick (just after New), after it, or mid-tick;
// the value is the clock's time. WithInlineCallbacks documents one exception:
// f then runs on the poller "within one tick", so there it may wait for an
// Advance of one tick, and no more.
func TestTimeSemanticsFakeClockNonPositiveDurations(t *testing.T) {
	const tick = time.Millisecond
	for _, mode := range []struct {
		name string
		opts []Option
	}{{"goroutines", nil}, {"pool", []Option{WithWorkerPool(2)}}, {"inline", []Option{WithInlineCallbacks()}}} {
		for _, pre := range []time.Duration{0, time.Hour, time.Hour + 300*time.Microsecond} {
			for _, d := range []time.Duration{0, -tick, math.MinInt64} {
				t.Run(fmt.Sprintf("%s/pre=%v/d=%d", mode.name, pre, d), func(t *testing.T) {
					clock := NewFakeClock(fakeStart)
					tw, err := New(tick, 8, append([]Option{WithClock(clock)}, mode.opts...)...)
					require.NoError(t, err)
					defer tw.Stop()
					clock.Advance(pre)
					now := clock.Now()
					ran := make(chan struct{})
					tw.AfterFunc(d, func() { close(ran) })
					c := tw.After(d)
					if mode.name == "inline" {
						// f may wait for the poller's next tick: give it that tick.
						if nothingOn(c, semSettle) {
							t.Fatalf("After(%v) not received without an Advance", d)
						}
						clock.Advance(tick)
						awaitSignal(t, ran, "AfterFunc(d), one tick later")
						return
					}
					require.Equal(t, now, receiveWithin(t, c, "After(d)"))
					awaitSignal(t, ran, "AfterFunc(d)")
				})
			}
		}
	}
}

// A timer moved earlier, or later and then earlier, is neither lost nor fired
// by its old deadline (sleep_test.go's TestTimerModifiedEarlier and
// TestAdjustTimers). On the wheel, a Reset to a deadline no earlier than its
// bucket's start (any later one) leaves the timer in its bucket until that
// bucket's time comes, so the second scenario waits past the old deadline
// before moving it earlier again.
func TestTimeSemanticsMovedEarlierOrLaterIsNotLost(t *testing.T) {
	makers := []apiMaker{apiWheel, apiInline, apiDefault, apiTime}
	t.Run("channel, moved into the past again and again", func(t *testing.T) {
		want := slices.Repeat([]string{"Stop=true"}, 10)
		want = append(want, "received", "quiet=true")
		requireSameAsTime(t, makers, want, func(t *testing.T, api timerAPI, o *observations) {
			tm, c := api.newTimer(semLong)
			for range 10 {
				o.note("Stop=%v", tm.Stop()) // never false: nothing was received
				tm.Reset(-time.Hour)
			}
			receiveWithin(t, c, "a timer moved into the past")
			o.note("received")
			o.note("quiet=%v", nothingOn(c, semSettle))
		})
	})
	const oldDeadline = 30 * time.Millisecond
	t.Run("channel, later past its old deadline, then sooner", func(t *testing.T) {
		want := []string{"Reset=true", "quiet=true", "Reset=true", "fresh=true", "Stop=false"}
		requireSameAsTime(t, makers, want, func(t *testing.T, api timerAPI, o *observations) {
			tm, c := api.newTimer(oldDeadline)
			o.note("Reset=%v", tm.Reset(semLong))
			o.note("quiet=%v", nothingOn(c, 2*oldDeadline))
			start := time.Now()
			o.note("Reset=%v", tm.Reset(5*semShort))
			o.note("fresh=%v", receiveWithin(t, c, "Reset(5ms)").Sub(start) >= 5*semShort)
			o.note("Stop=%v", tm.Stop())
		})
	})
	t.Run("AfterFunc, later past its old deadline, then sooner", func(t *testing.T) {
		want := []string{"Reset=true", "runs=0", "Reset=true", "not early=true", "runs=1", "Stop=false"}
		requireSameAsTime(t, makers, want, func(t *testing.T, api timerAPI, o *observations) {
			var mu sync.Mutex
			var runs []time.Time
			ran := make(chan struct{}, 4)
			tm := api.afterFunc(oldDeadline, func() {
				mu.Lock()
				runs = append(runs, time.Now())
				mu.Unlock()
				ran <- struct{}{}
			})
			count := func() int {
				mu.Lock()
				defer mu.Unlock()
				return len(runs)
			}
			o.note("Reset=%v", tm.Reset(semLong))
			time.Sleep(2 * oldDeadline)
			o.note("runs=%d", count())
			start := time.Now()
			o.note("Reset=%v", tm.Reset(5*semShort))
			awaitSignal(t, ran, "f")
			mu.Lock()
			o.note("not early=%v", runs[0].Sub(start) >= 5*semShort)
			mu.Unlock()
			time.Sleep(semSettle)
			o.note("runs=%d", count())
			o.note("Stop=%v", tm.Stop())
		})
	})
}

// A goroutine blocked receiving from C is woken by the arming in force, not by
// one that Reset replaced; with two receivers, one value wakes one of them
// (tick_test.go's testTimerChan, for a Timer).
func TestTimeSemanticsReceiverBlockedOnC(t *testing.T) {
	makers := []apiMaker{apiWheel, apiInline, apiDefault, apiTime}
	want := []string{"quiet=true", "Reset=true", "quiet=true", "Reset=true", "fresh=true", "Stop=false",
		"Reset=false", "woken=false", "Reset=true", "first=value", "Stop=false", "second=stop"}
	requireSameAsTime(t, makers, want, func(t *testing.T, api timerAPI, o *observations) {
		tm, c := api.newTimer(semLong)
		got := make(chan time.Time, 1)
		go func() { got <- <-c }()
		o.note("quiet=%v", nothingOn(got, semSettle))
		o.note("Reset=%v", tm.Reset(2*semLong))
		o.note("quiet=%v", nothingOn(got, semSettle))
		start := time.Now()
		o.note("Reset=%v", tm.Reset(semShort))
		o.note("fresh=%v", awaitSignal(t, got, "the blocked receiver").Sub(start) >= semShort)
		o.note("Stop=%v", tm.Stop())

		o.note("Reset=%v", tm.Reset(semLong))
		stop := make(chan struct{})
		woke := make(chan string, 2)
		for range 2 {
			go func() {
				select {
				case <-c:
					woke <- "value"
				case <-stop:
					woke <- "stop"
				}
			}()
		}
		select {
		case <-woke:
			o.note("woken=true")
		case <-time.After(semSettle):
			o.note("woken=false")
		}
		o.note("Reset=%v", tm.Reset(semShort))
		o.note("first=%s", awaitSignal(t, woke, "one receiver"))
		o.note("Stop=%v", tm.Stop())
		time.Sleep(semSettle)
		close(stop)
		o.note("second=%s", awaitSignal(t, woke, "the other receiver"))
	})
}

// Each callback runs on its own goroutine, so one that blocks does not hold
// up the next: a chain of AfterFunc(0) armed from callbacks that never return
// until the end of the test completes (sleep_test.go's TestAfterFunc). This is
// the default mode only: WithWorkerPool(n) runs n callbacks at a time and
// WithInlineCallbacks one, as their docs say.
func TestTimeSemanticsBlockedCallbackDoesNotDelayTheNext(t *testing.T) {
	const chain = 10
	makers := []apiMaker{apiWheel, apiDefault, apiTime}
	requireSameAsTime(t, makers, []string{"runs=10"}, func(t *testing.T, api timerAPI, o *observations) {
		release := make(chan struct{})
		defer close(release)
		var runs atomic.Int32
		done := make(chan struct{})
		var f func()
		f = func() {
			if runs.Add(1) == chain {
				close(done)
			} else {
				api.afterFunc(0, f)
			}
			<-release
		}
		api.afterFunc(0, f)
		awaitSignal(t, done, "the chain of callbacks")
		o.note("runs=%d", runs.Load())
	})
}
