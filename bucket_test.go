package timingwheel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// retainedCap is the room for timers a shard holds: the blocks of its
// buckets, its free buckets' and its pool's.
func retainedCap(s *shard) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.freeBlocks) * blockSize
	for _, b := range s.free {
		n += blocksCap(b)
	}
	for _, lv := range s.levels {
		for _, p := range lv.pages {
			if p == nil {
				continue
			}
			for _, b := range p.buckets {
				if b != nil {
					n += blocksCap(b)
				}
			}
		}
	}
	return n
}

func blocksCap(b *bucket) int {
	n := 0
	for _, c := range b.blocks {
		n += cap(c)
	}
	return n
}

// bucketTickers makes n tickers of one period in the wheel's first shard,
// all in one bucket, and returns a function that moves the clock one period,
// flushes the bucket (every ticker sends and is re-armed into the bucket of
// its next tick) and receives every tick.
func bucketTickers(t testing.TB, n int, period time.Duration) func() {
	clock := NewFakeClock(testEpoch)
	tw, err := newManual(time.Millisecond, DefaultWheelSize, WithClock(clock))
	require.NoError(t, err)
	t.Cleanup(tw.Stop)
	oneShard(tw)
	ts := make([]*Ticker, n)
	for i := range ts {
		ts[i] = tw.NewTicker(period)
	}
	return func() {
		clock.Advance(period)
		tw.step()
		for i, tk := range ts {
			select {
			case <-tk.C:
			default:
				t.Fatalf("ticker %d sent no tick", i)
			}
		}
	}
}

// TestTickersInOneBucketDoNotChurn specifies that a flush that re-arms many
// timers into one bucket reuses memory: 1000 tickers of one period share a
// bucket, and each wheel tick moves them all to the bucket of their next
// tick without an allocation. (Before the shard kept a spare array, the emptied
// bucket gave its array back and the next one regrew it: 17.5 KiB in 11
// allocations per wheel tick, BenchmarkTickerTick.)
func TestTickersInOneBucketDoNotChurn(t *testing.T) {
	for _, period := range []time.Duration{time.Millisecond, 7 * time.Millisecond} {
		t.Run(period.String(), func(t *testing.T) {
			tick := bucketTickers(t, 1000, period)
			tick() // the first flush leaves blocks in the pool
			if allocs := testing.AllocsPerRun(20, tick); allocs != 0 {
				t.Fatalf("%v allocations per wheel tick, want 0", allocs)
			}
		})
	}
}

// TestBucketMemoryFollowsPending specifies the other side: what a shard
// keeps for its buckets stays proportional to its pending timers. A bucket
// that held many timers keeps no big array once they fired, nor once all but
// one were stopped, and the blocks kept for timers re-armed are at most one
// slot per pending timer.
func TestBucketMemoryFollowsPending(t *testing.T) {
	const n = 1 << 15
	// What a shard may keep whatever it held: its free buckets' arrays and a
	// few buckets of the levels in use.
	small := (freeBuckets + 8) * blockSize

	t.Run("fired", func(t *testing.T) {
		tw, clock := newManualWheel(t, time.Millisecond, DefaultWheelSize)
		oneShard(tw)
		for range n {
			tw.AfterFunc(5*time.Millisecond, noop)
		}
		s := &tw.shards[0]
		require.GreaterOrEqual(t, retainedCap(s), n)
		clock.Advance(5 * time.Millisecond)
		tw.step()
		require.Zero(t, tw.Len())
		require.LessOrEqual(t, retainedCap(s), small)
	})

	// Schedules re-arm in the flush as Tickers do, without the weak
	// pointers whose release, after the test, would upset the live-object
	// counts of the tests that follow.
	t.Run("re-armed, then all but one stopped", func(t *testing.T) {
		tw, clock := newManualWheel(t, time.Millisecond, DefaultWheelSize)
		oneShard(tw)
		ts := make([]*Timer, n)
		for i := range ts {
			ts[i] = tw.ScheduleFunc(Every(time.Millisecond), noop)
		}
		s := &tw.shards[0]
		for range 2 {
			clock.Advance(time.Millisecond)
			tw.step()
		}
		require.Equal(t, uint64(2*n), tw.Stats().Fired)
		// The bucket of the next tick, and the pool, at most n.
		require.NotEmpty(t, s.freeBlocks, "no block kept for the next flush")
		require.LessOrEqual(t, retainedCap(s), 4*n+small)
		for _, tm := range ts[1:] {
			tm.Stop()
		}
		require.Equal(t, 1, tw.Len())
		require.LessOrEqual(t, retainedCap(s), small)
		clock.Advance(time.Millisecond) // the last one still runs
		tw.step()
		require.Equal(t, uint64(2*n+1), tw.Stats().Fired)
		require.LessOrEqual(t, retainedCap(s), small)
	})
}
