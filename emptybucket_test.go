package timingwheel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Buckets emptied before they are due (by Stop, Reset, a cancelled context,
// Keyed's Stop and replace, a collected channel) leave the delay queue and
// their level at once: the poller is never woken for them, and they hold no
// memory (see unlink).

// disarmers are the ways a server takes back a timer before it fires; each
// arms one timer due after d and returns what takes it back.
var disarmers = []struct {
	name string
	arm  func(tw *TimingWheel, k *Keyed[int], i int, d time.Duration) (undo func())
}{
	{"AfterFunc+Stop", func(tw *TimingWheel, _ *Keyed[int], _ int, d time.Duration) func() {
		t := tw.AfterFunc(d, func() { panic("a stopped timer fired") })
		return func() { t.Stop() }
	}},
	{"NewTimer+Stop", func(tw *TimingWheel, _ *Keyed[int], _ int, d time.Duration) func() {
		t := tw.NewTimer(d)
		return func() { t.Stop() }
	}},
	{"Reset later+Stop", func(tw *TimingWheel, _ *Keyed[int], _ int, d time.Duration) func() {
		t := tw.AfterFunc(d, func() { panic("a stopped timer fired") })
		t.Reset(2 * d) // empties the bucket it was in if alone
		return func() { t.Stop() }
	}},
	{"WithTimeout+cancel", func(tw *TimingWheel, _ *Keyed[int], _ int, d time.Duration) func() {
		_, cancel := tw.WithTimeout(context.Background(), d)
		return cancel
	}},
	{"Keyed replace+Stop", func(tw *TimingWheel, k *Keyed[int], i int, d time.Duration) func() {
		k.AfterFunc(i, d, func() { panic("a stopped keyed timer fired") })
		k.AfterFunc(i, d/2+time.Millisecond, func() { panic("a stopped keyed timer fired") })
		return func() { k.Stop(i) }
	}},
	{"NewTicker+Stop", func(tw *TimingWheel, _ *Keyed[int], _ int, d time.Duration) func() {
		t := tw.NewTicker(d)
		return func() { t.Stop() }
	}},
}

// TestStoppedTimersWakeNobody arms 10,000 timers across levels 0 and 1 and
// takes each back before it is due, in random order: the delay queue is then
// empty and no level is left, and advancing the clock past every deadline
// wakes the poller for nothing. One timer armed afterwards then costs
// exactly one wake-up.
func TestStoppedTimersWakeNobody(t *testing.T) {
	for _, dis := range disarmers {
		t.Run(dis.name, func(t *testing.T) {
			clock := NewFakeClock(time.Unix(1_000_000, 0))
			tw, err := New(time.Millisecond, 64, WithClock(clock))
			require.NoError(t, err)
			defer tw.Stop()
			k := NewKeyed[int](tw)
			r := rand.New(rand.NewPCG(7, 8))
			undo := make([]func(), 10_000)
			for i := range undo {
				// 1 ms to 4 s: level 0 (under 64 ms) and level 1.
				undo[i] = dis.arm(tw, k, i, time.Millisecond+time.Duration(r.Int64N(int64(4*time.Second))))
			}
			require.Greater(t, tw.queue.Len(), 64, "the timers did not spread over many buckets")
			r.Shuffle(len(undo), func(i, j int) { undo[i], undo[j] = undo[j], undo[i] })
			for i, f := range undo {
				f()
				if i == len(undo)/2 {
					clock.Advance(time.Millisecond) // half of them stopped with time moving
				}
			}
			require.Zero(t, tw.Len(), "timers still pending")
			require.Zero(t, tw.queue.Len(), "emptied buckets still in the delay queue")
			require.Zero(t, tw.Stats().Levels, "emptied buckets still hold their levels")
			for range 100 {
				clock.Advance(50 * time.Millisecond) // past every deadline, 5 s in all
			}
			fired := make(chan struct{})
			tw.AfterFunc(time.Millisecond, func() { close(fired) })
			clock.Advance(time.Millisecond)
			select {
			case <-fired:
			case <-time.After(30 * time.Second):
				t.Fatal("the timer armed last did not fire within 30 s")
			}
			require.Equal(t, uint64(1), tw.Stats().Wakeups,
				"the poller woke for a bucket whose timers were all taken back")
		})
	}
}

// heapInUse returns the live heap after the collector has run to a fixed
// point.
func heapInUse() int64 {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestStoppedTimersHoldNoMemory: after every timer is stopped, the live heap
// is back within a few KiB of what an empty wheel of the same size holds, at
// any size and tick: the buckets, their levels' page tables and the delay
// queue's array go with the timers, not when the buckets would have been due
// (years later, on a fine tick).
func TestStoppedTimersHoldNoMemory(t *testing.T) {
	// Measured here: 0.4 KiB left after one timer, 2 KiB after 200k, 2 to
	// 7.7 KiB after 500k (a few released buckets kept for reuse, the delay
	// queue's array at its floor); before buckets were withdrawn, 132 KiB,
	// 347 KiB and 66 MB.
	const slack = 16 << 10
	for _, tc := range []struct {
		name string
		tick time.Duration
		size int
		n    int
		d    func(r *rand.Rand) time.Duration
		// system: on the System clock, whose early alarm lets each shard
		// keep its last emptied bucket (vacantFit); else on a FakeClock.
		system bool
	}{
		{"System clock, 1ms tick, 512 slots, 200k timers", time.Millisecond, 512, 200_000,
			func(r *rand.Rand) time.Duration { return time.Hour + time.Duration(r.Int64N(int64(time.Hour))) }, true},
		{"1ms tick, 2^20 slots, 500k timers", time.Millisecond, 1 << 20, 500_000,
			func(r *rand.Rand) time.Duration { return time.Duration(1+r.Int64N(1<<20)) * time.Millisecond }, false},
		{"1ns tick, 512 slots, 200k timers of 1h to 50y", time.Nanosecond, 512, 200_000,
			func(r *rand.Rand) time.Duration {
				return time.Hour + time.Duration(r.Int64N(int64(50*365*24*time.Hour)))
			}, false},
		{"1ns tick, 2^20 slots, one timer of 100y", time.Nanosecond, 1 << 20, 1,
			func(*rand.Rand) time.Duration { return 100 * 365 * 24 * time.Hour }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.n > 1 {
				t.Skip("arms hundreds of thousands of timers")
			}
			var opts []Option
			if !tc.system {
				opts = append(opts, WithClock(NewFakeClock(time.Unix(1_000_000, 0))))
			}
			tw, err := New(tc.tick, tc.size, opts...)
			require.NoError(t, err)
			defer tw.Stop()
			empty := heapInUse()
			r := rand.New(rand.NewPCG(9, 10))
			timers := make([]*Timer, tc.n)
			for i := range timers {
				timers[i] = tw.AfterFunc(tc.d(r), func() { panic("a stopped timer fired") })
			}
			armed := heapInUse()
			for _, tm := range timers {
				require.True(t, tm.Stop())
			}
			timers = nil
			stopped := heapInUse()
			t.Logf("live heap: empty wheel %d B, %d armed %+d B, all stopped %+d B", empty, tc.n, armed-empty, stopped-empty)
			require.Zero(t, tw.Len())
			require.LessOrEqual(t, stopped-empty, int64(slack),
				"stopped timers left %d B behind (armed: %d B)", stopped-empty, armed-empty)
		})
	}
}

// A stopped timer leaves nothing pending and holds no memory: the wheel
// keeps at most the emptied bucket of each shard's last timer, for the next
// timer that lands in its slot, until the alarm set for it rings.
func ExampleTimer_Stop_releases() {
	tw, _ := New(time.Millisecond, 512)
	defer tw.Stop()
	for range 1000 {
		tw.AfterFunc(time.Hour, func() {}).Stop()
	}
	fmt.Println(tw.Len(), tw.Stats().Stopped)
	// Output: 0 1000
}

// TestWakeupsOnlyForFires arms timers over levels 0 to 2 of a 64-slot wheel,
// stops nine in ten of them at random times before they are due, and
// advances the clock one tick at a time, waiting at each tick for the fires
// due there: the poller wakes at most once per tick in which some timer
// fired (plus 1%): not for buckets emptied by Stop, not to cascade a coarse
// bucket before its first timer is due, and not, for a small bucket, at the
// tick of a timer that was stopped. Every fire is checked not to be early.
func TestWakeupsOnlyForFires(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			clock := NewFakeClock(time.Unix(1_000_000, 0))
			tw, err := New(time.Millisecond, 64, WithClock(clock))
			require.NoError(t, err)
			defer tw.Stop()
			r := rand.New(rand.NewPCG(seed, 11))
			const n, ticks = 3000, 9000 // levels 0 to 2: up to 8 s
			type armed struct {
				timer *Timer
				due   int64 // the tick it is due at: deadlines are whole ticks here
				stop  int64 // the tick before which it is stopped, or -1
			}
			var fired, early atomic.Int64
			start := clock.Now()
			timers := make([]armed, n)
			byStop := map[int64][]int{}
			for i := range timers {
				d := time.Duration(1+r.Int64N(ticks-1000)) * time.Millisecond
				deadline := start.Add(d)
				a := armed{due: int64(d / time.Millisecond), stop: -1}
				a.timer = tw.AfterFunc(d, func() {
					if clock.Now().Before(deadline) {
						early.Add(1)
					}
					fired.Add(1)
				})
				if r.IntN(10) != 0 {
					a.stop = r.Int64N(a.due) // before it is due
					byStop[a.stop] = append(byStop[a.stop], i)
				}
				timers[i] = a
			}
			fireTicks := map[int64]int{} // tick: timers that fire there
			for _, a := range timers {
				if a.stop < 0 {
					fireTicks[a.due]++
				}
			}
			var want int64
			for tick := int64(0); tick < ticks; tick++ {
				for _, i := range byStop[tick] {
					require.True(t, timers[i].timer.Stop(), "timer %d fired before its stop", i)
				}
				if tick > 0 {
					clock.Advance(time.Millisecond)
				}
				want += int64(fireTicks[tick])
				deadline := time.Now().Add(30 * time.Second)
				for fired.Load() < want || !tw.idle() {
					if time.Now().After(deadline) {
						t.Fatalf("tick %d: %d of %d timers fired within 30 s (idle: %v)", tick, fired.Load(), want, tw.idle())
					}
					time.Sleep(20 * time.Microsecond)
				}
			}
			require.Equal(t, want, fired.Load(), "fires")
			require.Zero(t, early.Load(), "timers fired early")
			wakeups := tw.Stats().Wakeups
			t.Logf("%d timers, %d fired in %d distinct ticks, %d wake-ups", n, want, len(fireTicks), wakeups)
			require.LessOrEqual(t, wakeups, uint64(len(fireTicks)+len(fireTicks)/100),
				"the poller woke more often than there were ticks with a fire")
		})
	}
}

// TestResetHeldTimersWakeNobody: idle timeouts re-armed on every read stay
// in their bucket when pushed later (see holds); once every timer of a small
// bucket is due past its slot, they are filed elsewhere then and there, so
// the poller never wakes to move them: 30 connections' idle timers of 1 s,
// each re-armed every 10 ms for 6 s, wake it 0 times and never fire.
func TestResetHeldTimersWakeNobody(t *testing.T) {
	clock := NewFakeClock(time.Unix(1_000_000, 0))
	tw, err := New(time.Millisecond, 64, WithClock(clock))
	require.NoError(t, err)
	defer tw.Stop()
	idle := make([]*Timer, 30)
	for i := range idle {
		idle[i] = tw.AfterFunc(time.Second, func() { panic("an idle timeout re-armed in time fired") })
		clock.Advance(time.Millisecond / 3) // spread over ticks, as connections are
	}
	for step := range 6000 {
		clock.Advance(time.Millisecond)
		for i, tm := range idle {
			if (step+i)%10 == 0 { // each connection reads every 10 ms, at its own phase
				require.True(t, tm.Reset(time.Second))
			}
		}
		deadline := time.Now().Add(30 * time.Second)
		for !tw.idle() {
			require.False(t, time.Now().After(deadline), "the wheel did not settle within 30 s")
			time.Sleep(20 * time.Microsecond)
		}
	}
	require.Equal(t, 30, tw.Len())
	require.Zero(t, tw.Stats().Fired)
	require.Zero(t, tw.Stats().Wakeups, "the poller woke to move timers that were re-armed later")
}

// TestAloneInItsBucketAllocatesOnlyTheTimer: a timer alone in its bucket,
// and in that bucket's page, armed and stopped again and again, costs the
// Timer and nothing more, now that Stop releases the bucket: the shard
// reuses the released bucket and page.
func TestAloneInItsBucketAllocatesOnlyTheTimer(t *testing.T) {
	tw := newAllocWheel(t)
	keep := tw.AfterFunc(time.Minute, noop) // keeps the coarse levels in use
	defer keep.Stop()
	require.Equal(t, 1.0, afterFuncStopAllocs(tw, 2*time.Hour),
		"allocations per AfterFunc+Stop of a timer alone in its bucket")
}

// newAllocWheel returns a one-shard wheel of 64 slots of 1 ms on the real
// clock, for counting allocations; it skips the test under the race
// detector, which allocates on its own.
func newAllocWheel(t *testing.T) *TimingWheel {
	t.Helper()
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	t.Cleanup(tw.Stop)
	return oneShard(tw)
}

// afterFuncStopAllocs returns the allocations of an AfterFunc(d) and its
// Stop on tw, averaged over 1000 runs.
func afterFuncStopAllocs(tw *TimingWheel, d time.Duration) float64 {
	return testing.AllocsPerRun(1000, func() {
		if !tw.AfterFunc(d, noop).Stop() {
			panic("Stop of a pending timer returned false")
		}
	})
}

// TestAloneInItsShardAllocatesOnlyTheTimer: a timer alone in its shard,
// armed and stopped in turn, allocates the Timer and nothing else: the
// shard keeps its spare page and its levels' small page tables when its
// last bucket goes (before it did, each arming made a page and a table
// again: 688 B in 3 allocations). On level 0 and on a coarse level.
func TestAloneInItsShardAllocatesOnlyTheTimer(t *testing.T) {
	tw := newAllocWheel(t)
	for _, d := range []time.Duration{20 * time.Millisecond, time.Minute} {
		require.Equal(t, 1.0, afterFuncStopAllocs(tw, d),
			"allocations per AfterFunc(%v)+Stop of a timer alone in its shard", d)
	}
}
