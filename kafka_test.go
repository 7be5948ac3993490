package timingwheel

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Tests in the manner of Kafka's TimerTest and TimingWheelTest: tiny wheels,
// so that a handful of timers spreads over many levels.

var testEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newManualWheel returns a wheel without a poller: the test moves clock and
// calls step, and callbacks run inside step.
func newManualWheel(t testing.TB, tick time.Duration, size int) (*TimingWheel, *FakeClock) {
	t.Helper()
	clock := NewFakeClock(testEpoch)
	tw, err := newManual(tick, size, WithClock(clock), WithInlineCallbacks())
	require.NoError(t, err)
	t.Cleanup(tw.Stop)
	return tw, clock
}

var tinySizes = []int{2, 3}

func TestKafkaNegativeDelaysRunImmediately(t *testing.T) {
	for _, size := range tinySizes {
		t.Run(fmt.Sprintf("size=%d", size), func(t *testing.T) {
			// On its own goroutine, a due timer runs without the clock moving.
			clock := NewFakeClock(testEpoch)
			tw, err := New(time.Millisecond, size, WithClock(clock))
			require.NoError(t, err)
			defer tw.Stop()
			var wg sync.WaitGroup
			for _, d := range []time.Duration{-time.Hour, -5 * time.Millisecond, -1, 0, math.MinInt64} {
				wg.Add(1)
				tw.AfterFunc(d, wg.Done)
			}
			c := tw.NewTimer(-time.Second)
			waitWithin(t, &wg, "the callbacks of timers armed in the past")
			select {
			case v := <-c.C:
				require.Equal(t, testEpoch, v)
			case <-time.After(semWait):
				t.Fatal("NewTimer(-1s) sent nothing")
			}
			require.Zero(t, tw.Len())
			require.Equal(t, uint64(6), tw.Stats().Fired)
		})
	}
}

func TestKafkaNegativeDelaysInlineRunAtNextTick(t *testing.T) {
	for _, size := range tinySizes {
		t.Run(fmt.Sprintf("size=%d", size), func(t *testing.T) {
			tw, clock := newManualWheel(t, time.Millisecond, size)
			ran := 0
			for _, d := range []time.Duration{-time.Hour, -1, 0} {
				tw.AfterFunc(d, func() { ran++ })
			}
			tw.step()
			require.Zero(t, ran, "inline callbacks never run on the caller's goroutine, nor before the next tick")
			require.Equal(t, 3, tw.Len())
			clock.Advance(time.Millisecond)
			tw.step()
			require.Equal(t, 3, ran)
			require.Zero(t, tw.Len())
		})
	}
}

// Kafka's testAlreadyExpiredTask and testTaskExpiration: delays 0..19 ms,
// the same delays again, and larger ones with duplicate deadlines; every
// timer runs exactly once, at the first tick at or after its deadline.
func TestKafkaMixedDelaysExactlyOnce(t *testing.T) {
	for _, size := range tinySizes {
		t.Run(fmt.Sprintf("size=%d", size), func(t *testing.T) {
			const tick = time.Millisecond
			tw, clock := newManualWheel(t, tick, size)
			var delays []time.Duration
			for i := range 20 {
				delays = append(delays, time.Duration(i)*tick)
			}
			for i := 10; i < 100; i++ {
				delays = append(delays, time.Duration(i)*tick)
			}
			for i := 100; i < 500; i++ {
				delays = append(delays, time.Duration(i)*tick, time.Duration(i)*tick-1, time.Duration(i)*tick+1)
			}
			clock.Advance(tick / 3) // deadlines off the tick grid
			start := time.Duration(tick / 3)
			runs := make([]int, len(delays))
			ranAt := make([]time.Duration, len(delays))
			for i, d := range delays {
				tw.AfterFunc(d, func() {
					runs[i]++
					ranAt[i] = clock.Now().Sub(testEpoch)
				})
			}
			require.Equal(t, len(delays), tw.Len())
			for range 600 {
				clock.Advance(tick)
				tw.step()
			}
			for i, d := range delays {
				require.Equal(t, 1, runs[i], "timer %d (d=%v)", i, d)
				// Due at the first tick boundary at or after start+d (a d <= 0
				// at the next tick), run by the first step at or after it;
				// steps come at start + k ticks.
				dueTick := int64(1)
				if d > 0 {
					dueTick = ceilTick(int64(start+d), int64(tick))
				}
				want := start + time.Duration(ceilTick(int64(time.Duration(dueTick)*tick-start), int64(tick)))*tick
				require.GreaterOrEqual(t, ranAt[i], start+d, "timer %d (d=%v) fired early", i, d)
				require.Equal(t, want, ranAt[i], "timer %d (d=%v)", i, d)
			}
			require.Zero(t, tw.Len())
			require.Equal(t, uint64(len(delays)), tw.Stats().Fired)
		})
	}
}

// Kafka's "overflow wheel created once": level L exists only once a timer
// needed it, is not re-created for the next timer, and (unlike Kafka's) is
// released once it holds no bucket.
func TestKafkaOverflowLevelsCreatedOnDemand(t *testing.T) {
	const tick = time.Millisecond
	for _, tc := range []struct {
		size, bits int
	}{{2, 1}, {3, 2}} {
		t.Run(fmt.Sprintf("size=%d", tc.size), func(t *testing.T) {
			tw, clock := newManualWheel(t, tick, tc.size)
			require.Zero(t, tw.Stats().Levels, "an empty wheel has no levels")
			fired := map[int]time.Duration{}
			for k := 0; k*tc.bits < 20; k++ {
				d := time.Duration(1<<(k*tc.bits)) * tick // the first deadline needing level k
				tw.AfterFunc(d, func() { fired[k] = clock.Now().Sub(testEpoch) })
				require.Equal(t, k+1, tw.Stats().Levels, "after AfterFunc(%v)", d)
				tw.AfterFunc(d, func() {})
				require.Equal(t, k+1, tw.Stats().Levels, "a second timer in level %d re-created a level", k)
			}
			// Walk the clock one tick at a time through the first levels,
			// then in big jumps; each timer fires exactly at its deadline.
			for range 1 << 10 {
				clock.Advance(tick)
				tw.step()
			}
			for range 1 << 10 {
				clock.Advance(1 << 10 * tick)
				tw.step()
			}
			require.Zero(t, tw.Stats().Levels, "levels are released once empty")
			for k := 0; k*tc.bits < 20; k++ {
				want := time.Duration(1<<(k*tc.bits)) * tick
				if want <= 1<<10*tick {
					require.Equal(t, want, fired[k], "timer of level %d", k)
				} else {
					require.GreaterOrEqual(t, fired[k], want, "timer of level %d fired early", k)
				}
			}
			require.Zero(t, tw.Len())
		})
	}
}

// Netty's "Long.MAX_VALUE delay does not overflow", and Go's at ±MaxInt64.
func TestKafkaMaxInt64DurationDoesNotOverflow(t *testing.T) {
	for _, size := range tinySizes {
		for _, tick := range []time.Duration{time.Nanosecond, 7 * time.Millisecond} {
			t.Run(fmt.Sprintf("size=%d/tick=%v", size, tick), func(t *testing.T) {
				tw, clock := newManualWheel(t, tick, size)
				clock.Advance(time.Hour) // now+d saturates rather than wraps
				fired := false
				a := tw.AfterFunc(math.MaxInt64, func() { fired = true })
				c := tw.NewTimer(math.MaxInt64)
				require.Equal(t, 2, tw.Len())
				for range 3 {
					clock.Advance(1 << 61) // 73 years each, 219 in all
					tw.step()
				}
				require.False(t, fired)
				require.Empty(t, c.C)
				require.Equal(t, 2, tw.Len())
				require.True(t, a.Stop())
				require.True(t, c.Stop())
				require.Zero(t, tw.Len())
				require.False(t, a.Reset(math.MaxInt64))
				require.Equal(t, 1, tw.Len())
				require.True(t, a.Stop())
			})
		}
	}
}

// The same with the wheel's own poller: huge jumps of the clock cascade the
// timer down through the levels without firing it or spinning the poller.
func TestKafkaMaxInt64DurationWithPoller(t *testing.T) {
	clock := NewFakeClock(testEpoch)
	tw, err := New(time.Millisecond, 2, WithClock(clock))
	require.NoError(t, err)
	defer tw.Stop()
	fired := make(chan struct{}, 1)
	tm := tw.AfterFunc(math.MaxInt64, func() { fired <- struct{}{} })
	for range 3 {
		clock.Advance(1 << 61)
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-fired:
		t.Fatal("AfterFunc(math.MaxInt64) fired")
	default:
	}
	require.Equal(t, 1, tw.Len())
	require.Less(t, tw.Stats().Wakeups, uint64(200), "the poller spins")
	require.True(t, tm.Stop())
}
