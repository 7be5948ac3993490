package timingwheel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The wheel's Ticker against package time's: what Go's src/time/tick_test.go
// checks of time.Ticker, each scenario run on package time, on a wheel and on
// the default wheel, which must observe the same (see requireSameAsTime).
// Exact tick times are checked on a FakeClock further down, where nothing
// depends on the machine's speed.

// stoppableTicker is what time.Ticker and the wheel's Ticker have in common.
type stoppableTicker interface {
	Stop()
	Reset(time.Duration)
}

// A tickerAPI is one implementation of package time's tickers.
type tickerAPI struct {
	newTicker func(time.Duration) (stoppableTicker, <-chan time.Time)
	tick      func(time.Duration) <-chan time.Time
}

type tickerMaker struct {
	name string
	open func(t *testing.T) tickerAPI
}

func wheelTickerMaker(name string, opts ...Option) tickerMaker {
	return tickerMaker{name, func(t *testing.T) tickerAPI {
		tw, err := New(time.Millisecond, 8, opts...) // 8 buckets: tens of ms already cascade
		require.NoError(t, err)
		t.Cleanup(tw.Stop)
		return tickerAPI{
			newTicker: func(d time.Duration) (stoppableTicker, <-chan time.Time) {
				tk := tw.NewTicker(d)
				return tk, tk.C
			},
			tick: tw.Tick,
		}
	}}
}

var tickerMakers = []tickerMaker{
	{"time", func(*testing.T) tickerAPI {
		return tickerAPI{
			newTicker: func(d time.Duration) (stoppableTicker, <-chan time.Time) {
				tk := time.NewTicker(d)
				return tk, tk.C
			},
			tick: time.Tick,
		}
	}},
	wheelTickerMaker("wheel"),
	// Callers never advance an inline wheel: its poller sends every tick.
	wheelTickerMaker("wheel-inline", WithInlineCallbacks()),
	{"default", func(*testing.T) tickerAPI {
		return tickerAPI{
			newTicker: func(d time.Duration) (stoppableTicker, <-chan time.Time) {
				tk := NewTicker(d)
				return tk, tk.C
			},
			tick: Tick,
		}
	}},
}

// requireTickersSameAsTime runs scenario on every tickerMaker and requires
// each to observe want, package time included, so that a wrong want shows up
// as package time failing.
func requireTickersSameAsTime(t *testing.T, want []string, scenario func(t *testing.T, api tickerAPI, o *observations)) {
	t.Helper()
	for _, m := range tickerMakers {
		t.Run(m.name, func(t *testing.T) {
			var o observations
			scenario(t, m.open(t), &o)
			require.Equal(t, want, []string(o))
		})
	}
}

// TestTickerStopResetLeaveNoStaleTick: a tick that is waiting when Stop or
// Reset is called is never received after the call returns (Go 1.23), a
// stopped ticker stays silent, and Reset restarts a stopped one.
func TestTickerStopResetLeaveNoStaleTick(t *testing.T) {
	requireTickersSameAsTime(t, []string{
		"after Stop, a tick waiting: false",
		"after Stop, a tick within the settle time: false",
		"Reset restarts a stopped ticker",
		"after Reset to an hour, a tick waiting: false",
		"after Reset to an hour, a tick within the settle time: false",
	}, func(t *testing.T, api tickerAPI, o *observations) {
		tk, c := api.newTicker(semShort)
		defer tk.Stop()
		awaitExpired(t, c)
		tk.Stop()
		o.note("after Stop, a tick waiting: %v", !nothingOn(c, 0))
		o.note("after Stop, a tick within the settle time: %v", !nothingOn(c, semSettle))

		tk.Reset(semShort)
		receiveWithin(t, c, "a tick after Reset of a stopped ticker")
		o.note("Reset restarts a stopped ticker")

		awaitExpired(t, c)
		tk.Reset(semLong)
		o.note("after Reset to an hour, a tick waiting: %v", !nothingOn(c, 0))
		o.note("after Reset to an hour, a tick within the settle time: %v", !nothingOn(c, semSettle))
	})
}

// TestTickerBlockedReceivers: goroutines blocked on C, as a select loop
// is, receive nothing from a stopped ticker nor from one Reset to an hour;
// a Reset to a short period wakes them, and after Stop they receive nothing.
func TestTickerBlockedReceivers(t *testing.T) {
	requireTickersSameAsTime(t, []string{
		"stopped: receivers woken: 0",
		"Reset to an hour: receivers woken: 0",
		"Reset to a short period: a receiver woken: true",
		"after Stop: ticks received: false",
	}, func(t *testing.T, api tickerAPI, o *observations) {
		tk, c := api.newTicker(semLong)
		defer tk.Stop()
		tk.Stop()
		var woken atomic.Int32
		quit := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-c:
						woken.Add(1)
					case <-quit:
						return
					}
				}
			}()
		}
		defer func() { close(quit); wg.Wait() }()
		time.Sleep(semSettle)
		o.note("stopped: receivers woken: %d", woken.Load())
		tk.Reset(semLong)
		time.Sleep(semSettle)
		o.note("Reset to an hour: receivers woken: %d", woken.Load())
		tk.Reset(semShort)
		o.note("Reset to a short period: a receiver woken: %v",
			assert.Eventually(t, func() bool { return woken.Load() > 0 }, semWait, 100*time.Microsecond))
		tk.Stop()
		time.Sleep(semSettle) // a tick taken before Stop has been counted
		n := woken.Load()
		time.Sleep(semSettle)
		o.note("after Stop: ticks received: %v", woken.Load() != n)
	})
}

// TestTickerSlowReceiverDropsTicks: a receiver that stalls for ten periods
// finds one tick waiting, not ten, and is not sent the missed ones in a burst
// afterwards: over the next five periods it receives at most six ticks (a
// ticker that caught up would send about fifteen).
func TestTickerSlowReceiverDropsTicks(t *testing.T) {
	const d = 10 * time.Millisecond
	requireTickersSameAsTime(t, []string{
		"after a stall of ten periods, a tick waiting: true",
		"no burst: true",
	}, func(t *testing.T, api tickerAPI, o *observations) {
		tk, c := api.newTicker(d)
		defer tk.Stop()
		time.Sleep(10 * d)
		o.note("after a stall of ten periods, a tick waiting: %v", !nothingOn(c, 0))
		// A burst sends the ten missed ticks at once. Without one, a tick
		// comes once a period at most, however late the window closes on
		// a loaded machine: the bound is the window's length as measured.
		n, window := 0, time.Now()
		for deadline := time.After(5 * d); ; n++ {
			select {
			case <-c:
				continue
			case <-deadline:
			}
			break
		}
		periods := int(time.Since(window) / d)
		o.note("no burst: %v", n <= periods+1)
		if n > periods+1 {
			t.Logf("%d ticks in %d periods after a stall", n, periods)
		}
	})
}

// TestTickerResetChangesThePeriod: Reset from an hour to a short period
// ticks at the new period, never before it has elapsed since the Reset, and
// back to an hour stops ticking.
func TestTickerResetChangesThePeriod(t *testing.T) {
	const d = 5 * time.Millisecond
	requireTickersSameAsTime(t, []string{
		"tick 1 not before 1 periods after Reset: true",
		"tick 2 not before 2 periods after Reset: true",
		"tick 3 not before 3 periods after Reset: true",
		"after Reset to an hour, a tick within the settle time: false",
	}, func(t *testing.T, api tickerAPI, o *observations) {
		tk, c := api.newTicker(semLong)
		defer tk.Stop()
		start := time.Now()
		tk.Reset(d)
		for i := 1; i <= 3; i++ {
			receiveWithin(t, c, "a tick at the new period")
			// The receiver keeps up, so the i-th tick received is tick i or
			// later (one dropped while this goroutine was descheduled).
			o.note("tick %d not before %d periods after Reset: %v", i, i, time.Since(start) >= time.Duration(i)*d)
		}
		tk.Reset(semLong)
		o.note("after Reset to an hour, a tick within the settle time: %v", !nothingOn(c, semSettle))
	})
}

// TestTickerNonPositiveAndZero: NewTicker and Reset panic for d <= 0 with
// time's message, Tick returns nil, and the zero Ticker's Stop does nothing
// while its Reset panics.
func TestTickerNonPositiveAndZero(t *testing.T) {
	panicMessage := func(f func()) (msg string) {
		defer func() {
			msg = fmt.Sprint(recover())
			msg = strings.TrimPrefix(strings.TrimPrefix(msg, "timingwheel: "), "time: ")
		}()
		f()
		return "no panic"
	}
	want := []string{}
	for _, d := range []time.Duration{0, -1} {
		want = append(want,
			fmt.Sprintf("NewTicker(%v): non-positive interval for NewTicker", d),
			fmt.Sprintf("Reset(%v): non-positive interval for Ticker.Reset", d),
			fmt.Sprintf("Tick(%v) is nil: true", d))
	}
	requireTickersSameAsTime(t, want, func(t *testing.T, api tickerAPI, o *observations) {
		for _, d := range []time.Duration{0, -1} {
			o.note("NewTicker(%v): %s", d, panicMessage(func() { api.newTicker(d) }))
			tk, _ := api.newTicker(semLong)
			o.note("Reset(%v): %s", d, panicMessage(func() { tk.Reset(d) }))
			tk.Stop()
			o.note("Tick(%v) is nil: %v", d, api.tick(d) == nil)
		}
	})

	var zero Ticker
	zero.Stop()
	require.PanicsWithValue(t, "timingwheel: Reset called on uninitialized Ticker", func() { zero.Reset(time.Second) })
	var zeroTime time.Ticker
	zeroTime.Stop()
	require.PanicsWithValue(t, "time: Reset called on uninitialized Ticker", func() { zeroTime.Reset(time.Second) })
}

// fakeTickerWheel returns a wheel without a poller on a FakeClock, with a
// 1 ms tick and 8 buckets a level.
func fakeTickerWheel(t *testing.T) (*TimingWheel, *FakeClock) {
	t.Helper()
	clock := NewFakeClock(testEpoch)
	tw, err := newManual(time.Millisecond, 8, WithClock(clock))
	require.NoError(t, err)
	t.Cleanup(tw.Stop)
	return tw, clock
}

// runFake moves clock by d in steps of 100 µs, advancing tw after each, and
// returns the clock's offsets from testEpoch at which a tick was received
// from c (nil c receives nothing). Each tick carries the clock's time when
// it was sent, which must be the time it is received at here.
func runFake(t *testing.T, tw *TimingWheel, clock *FakeClock, c <-chan time.Time, d time.Duration) []time.Duration {
	t.Helper()
	var got []time.Duration
	for end := clock.Now().Add(d); clock.Now().Before(end); {
		clock.Advance(100 * time.Microsecond)
		tw.step()
		if c == nil {
			continue
		}
		select {
		case v := <-c:
			require.Equal(t, clock.Now(), v, "a tick carries the time it was sent")
			got = append(got, v.Sub(testEpoch))
		default:
		}
	}
	return got
}

// waitingTick returns the tick waiting on c, failing the test if there is
// none (a FakeClock test never waits for one).
func waitingTick(t *testing.T, c <-chan time.Time) time.Time {
	t.Helper()
	select {
	case v := <-c:
		return v
	default:
		t.Fatal("no tick waiting")
		return time.Time{}
	}
}

// TestTickerExactTimesOnFakeClock: tick k is sent at the first wheel tick at
// or after start + k·d, never before it and never later, so ticks keep their
// phase instead of drifting by the rounding (2.5 ms ticks at 3, 5, 8, 10 ms,
// not 3, 6, 9); a period shorter than the wheel's tick ticks once a tick; a
// long period cascades down the levels and still ticks on time.
func TestTickerExactTimesOnFakeClock(t *testing.T) {
	for _, tc := range []struct {
		period time.Duration
		run    time.Duration
		want   []time.Duration
	}{
		{time.Millisecond, 5 * time.Millisecond, ms(1, 2, 3, 4, 5)},
		{2500 * time.Microsecond, 15 * time.Millisecond, ms(3, 5, 8, 10, 13, 15)},
		{300 * time.Microsecond, 4 * time.Millisecond, ms(1, 2, 3, 4)},
		{7300 * time.Microsecond, 30 * time.Millisecond, ms(8, 15, 22, 30)},
		{100 * time.Millisecond, 300 * time.Millisecond, ms(100, 200, 300)}, // from level 2 of an 8-bucket wheel
	} {
		t.Run(tc.period.String(), func(t *testing.T) {
			tw, clock := fakeTickerWheel(t)
			tk := tw.NewTicker(tc.period)
			require.Equal(t, tc.want, runFake(t, tw, clock, tk.C, tc.run))
			require.Equal(t, 1, tw.Stats().Pending, "a ticking Ticker is one pending timer")
			require.EqualValues(t, len(tc.want), tw.Stats().Fired)
			tk.Stop()
			require.Empty(t, runFake(t, tw, clock, tk.C, 2*tc.period), "ticks after Stop")
			require.Equal(t, Stats{Fired: uint64(len(tc.want)), Stopped: 1, Levels: tw.Stats().Levels}, tw.Stats())
		})
	}
}

// TestTickerStallOnFakeClock: after the wheel stalls for several periods,
// one tick is sent for all the missed ones, and the next keeps the phase:
// 2.5 ms ticks, the clock jumping from 0 to 11 ms, tick at 11, then 13 (for
// 12.5) and 15, not a burst at 11.1, 11.2, ...
func TestTickerStallOnFakeClock(t *testing.T) {
	tw, clock := fakeTickerWheel(t)
	tk := tw.NewTicker(2500 * time.Microsecond)
	defer tk.Stop()
	clock.Advance(11 * time.Millisecond)
	tw.step()
	require.Equal(t, testEpoch.Add(11*time.Millisecond), waitingTick(t, tk.C))
	require.Equal(t, ms(13, 15), runFake(t, tw, clock, tk.C, 4*time.Millisecond))
}

// TestTickerSlowReceiverOnFakeClock: C holds one tick; while nobody receives,
// later ticks are dropped (the first one waits), each drop doubling the
// number of phase points the wheel skips before it looks at C again (see
// rearmTickerLocked): 1 ms ticks left unreceived try C at 1, 2, 4 and 8 ms,
// and once C was received from at 5.5 ms, tick at 8 and 9 ms again. A
// Ticker nobody receives from for a second is looked at 10 times, not 1000.
func TestTickerSlowReceiverOnFakeClock(t *testing.T) {
	tw, clock := fakeTickerWheel(t)
	tk := tw.NewTicker(time.Millisecond)
	defer tk.Stop()
	runFake(t, tw, clock, nil, 5500*time.Microsecond)
	require.Equal(t, 1, len(tk.C))
	require.Equal(t, testEpoch.Add(time.Millisecond), waitingTick(t, tk.C), "the first tick waits; the later ones were dropped")
	require.EqualValues(t, 3, tw.Stats().Fired, "sends tried at 1, 2 and 4 ms")
	require.Equal(t, ms(8, 9), runFake(t, tw, clock, tk.C, 3500*time.Microsecond))

	// From 9 ms for a second: the tick at 10 ms is taken into C, those at
	// 11, 13, 17, 25, 41, 73, 137, 265 and 521 ms are dropped; the next try
	// is at 1033 ms.
	runFake(t, tw, clock, nil, time.Second)
	require.EqualValues(t, 5+10, tw.Stats().Fired, "sends tried while nobody received for a second")
	require.Equal(t, testEpoch.Add(10*time.Millisecond), waitingTick(t, tk.C))
	got := runFake(t, tw, clock, tk.C, time.Second)
	require.Equal(t, 1033*time.Millisecond, got[0])
	require.Len(t, got, 2009-1033+1,
		"a receiver back after a second waits up to its stall for its next tick, then ticks every ms")
}

// TestTickerResetOnFakeClock: Reset at 3.7 ms to 2 ms ticks at 5.7, 7.7 and
// 9.7 ms, rounded up to 6, 8 and 10: the new phase starts at the Reset.
func TestTickerResetOnFakeClock(t *testing.T) {
	tw, clock := fakeTickerWheel(t)
	tk := tw.NewTicker(time.Millisecond)
	defer tk.Stop()
	runFake(t, tw, clock, nil, 3700*time.Microsecond)
	require.Equal(t, 1, len(tk.C))
	tk.Reset(2 * time.Millisecond)
	require.Equal(t, 0, len(tk.C), "a stale tick survived Reset")
	require.Equal(t, ms(6, 8, 10), runFake(t, tw, clock, tk.C, 6300*time.Microsecond))
	require.Equal(t, 1, tw.Len())
}

// TestTickerOnStoppedWheel: a Ticker never ticks once its wheel has stopped,
// whether made before or after; Stop and Reset still return.
func TestTickerOnStoppedWheel(t *testing.T) {
	tw, clock := fakeTickerWheel(t)
	before := tw.NewTicker(time.Millisecond)
	tw.Stop()
	after := tw.NewTicker(time.Millisecond)
	require.Empty(t, runFake(t, tw, clock, before.C, 3*time.Millisecond))
	require.Empty(t, runFake(t, tw, clock, after.C, 3*time.Millisecond))
	for _, tk := range []*Ticker{before, after} {
		tk.Reset(time.Millisecond)
		require.Empty(t, runFake(t, tw, clock, tk.C, 3*time.Millisecond))
		tk.Stop()
		tk.Stop()
	}
	require.Equal(t, 0, tw.Len())
}

// TestTickerNeverEarly on the real clock: the i-th tick received comes no
// earlier than i periods after NewTicker was called, on a wheel whose
// periods cascade and on the default wheel, for periods on, off and under
// the wheel's tick. Lateness is bounded only loosely (the machine is shared).
func TestTickerNeverEarly(t *testing.T) {
	const n = 20
	for _, m := range tickerMakers[1:] {
		t.Run(m.name, func(t *testing.T) {
			api := m.open(t)
			var wg sync.WaitGroup
			for _, d := range []time.Duration{300 * time.Microsecond, time.Millisecond, 2500 * time.Microsecond, 9 * time.Millisecond} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					start := time.Now()
					tk, c := api.newTicker(d)
					defer tk.Stop()
					for i := 1; i <= n; i++ {
						v := receiveWithin(t, c, "a tick")
						earliest := start.Add(time.Duration(i) * d)
						if now := time.Now(); now.Before(earliest) || v.Before(earliest) {
							t.Errorf("period %v: tick %d sent at %v and received at %v, before %v",
								d, i, v.Sub(start), now.Sub(start), earliest.Sub(start))
						}
					}
					if late := time.Since(start) - n*d; late > semWait {
						t.Errorf("period %v: %d ticks took %v longer than %d periods", d, n, late, n)
					}
				}()
			}
			waitWithin(t, &wg, "every ticker's ticks")
		})
	}
}

// TestTickersAbandonedAreCollected is TestAbandonedChannelTimersAreCollected
// for tickers: a Ticker dropped without Stop, a Tick channel a loop stopped
// receiving from, a ticking Ticker whose receiver went away: none keeps its
// memory, each is counted in Stats.Collected and no longer as pending.
func TestTickersAbandonedAreCollected(t *testing.T) {
	tw, err := New(time.Millisecond, 512)
	require.NoError(t, err)
	defer tw.Stop()
	for _, tc := range []struct {
		name    string
		n       int
		abandon func()
	}{
		{"for range Tick, abandoned", 2_000, func() {
			i := 0
			for range tw.Tick(time.Millisecond) {
				if i++; i == 2 {
					break
				}
			}
		}},
		{"NewTicker", 10_000, func() { tw.NewTicker(time.Hour) }},
		{"Tick", 10_000, func() { tw.Tick(time.Hour) }},
		{"ticking, not received", 1_000, func() { tw.NewTicker(10 * time.Millisecond) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tw.Stats()
			live := liveObjects()
			// A few goroutines at a time: the runtime never frees a
			// goroutine's descriptor, which would count as live.
			const workers = 8
			var wg sync.WaitGroup
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range tc.n / workers {
						tc.abandon()
					}
				}()
			}
			wg.Wait()
			tw.sweepOwed() // as it runs within strongHorizon (weakdefer.go)
			var grown int64
			require.Eventually(t, func() bool {
				grown = liveObjects() - live
				return grown < int64(tc.n)
			}, semWait, 10*time.Millisecond, "abandoned tickers kept objects live")
			t.Logf("%d objects live after %d abandoned tickers", grown, tc.n)
			var s Stats
			require.Eventually(t, func() bool {
				// A collection per look: a ticker whose tick held C
				// strongly during the collections above is found by a
				// later one.
				runtime.GC()
				s = tw.Stats()
				return s.Pending == before.Pending && s.Collected-before.Collected == uint64(tc.n)
			}, semWait, 10*time.Millisecond, "the wheel still counts abandoned tickers as pending")
		})
	}

	t.Run("a held ticker keeps ticking", func(t *testing.T) {
		tk := tw.NewTicker(time.Millisecond)
		defer tk.Stop()
		for range 3 {
			runtime.GC()
			receiveWithin(t, tk.C, "a tick of a held Ticker")
		}
	})
}

// TestTickerStressStopReset races Stop and Reset against ticking: each
// goroutine owns a ticker that it resets to short periods and stops, and
// requires no tick after every Stop, while all hammer one shared ticker, with
// a receiver, for the race detector. At the end nothing is pending.
func TestTickerStressStopReset(t *testing.T) {
	tw, err := New(time.Millisecond, 8)
	require.NoError(t, err)
	defer tw.Stop()
	const workers, rounds = 4, 300
	shared := tw.NewTicker(100 * time.Microsecond)
	done := make(chan struct{})
	received := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-shared.C:
				n++
			case <-done:
				received <- n
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := tw.NewTicker(time.Millisecond)
			for i := range rounds {
				d := time.Duration(1+rand.IntN(2000)) * time.Microsecond
				own.Reset(d)
				shared.Reset(d)
				if i%8 == 0 {
					time.Sleep(d)
				} else {
					runtime.Gosched()
				}
				own.Stop()
				if len(own.C) != 0 {
					t.Errorf("round %d: a tick waiting after Stop", i)
					return
				}
				if i%3 == 0 {
					shared.Stop()
				}
			}
			if !nothingOn(own.C, time.Millisecond) {
				t.Error("a tick after the last Stop")
			}
		}()
	}
	waitWithin(t, &wg, "the Stop rounds")
	shared.Stop()
	close(done)
	t.Logf("shared ticker: %d ticks received", <-received)
	require.Equal(t, 0, tw.Len())
	require.True(t, nothingOn(shared.C, semSettle))
}

// TestTickerExtremePeriods: periods whose next tick is past what the wheel's
// clock can reach saturate instead of wrapping: such a Ticker stays pending,
// never ticks early, and Stop and Reset still work.
func TestTickerExtremePeriods(t *testing.T) {
	tw, clock := fakeTickerWheel(t)
	never := tw.NewTicker(math.MaxInt64)
	const third = math.MaxInt64 / 3 // tick 3 would be at math.MaxInt64-1 ns, past the clock's reach
	big := tw.NewTicker(third)
	require.Equal(t, 2, tw.Len())
	waiting := func(c <-chan time.Time) int { return len(c) }

	clock.Advance(third - time.Millisecond)
	tw.step()
	require.Equal(t, 0, waiting(big.C), "a tick before its time")
	clock.Advance(2 * time.Millisecond) // past the tick that third rounds up to
	tw.step()
	require.Equal(t, 1, waiting(big.C))
	waitingTick(t, big.C)
	clock.Advance(third)
	tw.step()
	require.Equal(t, 1, waiting(big.C), "the second tick")
	require.Equal(t, 0, waiting(never.C))
	require.Equal(t, 2, tw.Len())

	never.Reset(math.MaxInt64)
	big.Reset(time.Millisecond)
	require.Equal(t, 0, waiting(big.C), "a stale tick survived Reset")
	reset := clock.Now().Sub(testEpoch)
	got := runFake(t, tw, clock, big.C, 3*time.Millisecond)
	require.Len(t, got, 2, "ticks at the new period, rounded up to the wheel's tick")
	require.GreaterOrEqual(t, got[0], reset+time.Millisecond)
	require.GreaterOrEqual(t, got[1], reset+2*time.Millisecond)
	never.Stop()
	big.Stop()
	require.Equal(t, 0, tw.Len())
}
