package timingwheel

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The advancer moves a large bucket in chunks, releasing the shard's lock
// between them, and in inline mode runs each chunk's callbacks in that gap.
// Those callbacks may stop, reset and add timers still waiting in the same
// bucket: each must still fire exactly once per arming, or not at all.
func TestChunkedFlushCallbacksTouchTheBucket(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    time.Duration // every timer's duration: one bucket on level 0, or on level 1
	}{
		{"level 0", 5 * time.Millisecond},
		{"level 1", 40 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 4 * chunk
			tw, clock := newManualWheel(t, time.Millisecond, 8)
			oneShard(tw) // one bucket holds them all
			runs := make([]int, n)
			ranAt := make([]time.Duration, n)
			timers := make([]*Timer, n)
			stopped := make([]bool, n)
			var added []int // runs of timers added by callbacks
			for i := range timers {
				timers[i] = tw.AfterFunc(tc.d, func() {
					runs[i]++
					ranAt[i] = clock.Now().Sub(testEpoch)
					if i >= chunk {
						return
					}
					// A timer of the first chunk reaches into later chunks.
					j := i + chunk
					switch i % 4 {
					case 0:
						stopped[j] = timers[j].Stop()
						require.True(t, stopped[j], "Stop of timer %d, not yet flushed", j)
					case 1:
						require.True(t, timers[j].Reset(10*time.Millisecond), "Reset later of timer %d", j)
					case 2:
						require.True(t, timers[j].Reset(0), "Reset(0) of timer %d", j)
					case 3:
						k := len(added)
						added = append(added, 0)
						tw.AfterFunc(0, func() { added[k]++ })
					}
				})
			}
			require.Equal(t, n, tw.Len())
			for range 100 {
				clock.Advance(time.Millisecond)
				tw.step()
			}
			for i := range n {
				switch {
				case i < chunk:
					require.Equal(t, 1, runs[i], "timer %d", i)
					require.Equal(t, tc.d, ranAt[i], "timer %d", i)
				case i < 2*chunk && i%4 == 0:
					require.Zero(t, runs[i], "timer %d was stopped mid-flush", i)
				case i < 2*chunk && i%4 == 1:
					require.Equal(t, 1, runs[i], "timer %d", i)
					require.Equal(t, tc.d+10*time.Millisecond, ranAt[i], "timer %d reset 10ms later mid-flush", i)
				case i < 2*chunk && i%4 == 2:
					require.Equal(t, 1, runs[i], "timer %d", i)
					require.Equal(t, tc.d+time.Millisecond, ranAt[i], "timer %d reset to 0 mid-flush runs at the next tick", i)
				default:
					require.Equal(t, 1, runs[i], "timer %d", i)
					require.Equal(t, tc.d, ranAt[i], "timer %d", i)
				}
			}
			for k, r := range added {
				require.Equal(t, 1, r, "timer %d added mid-flush", k)
			}
			s := tw.Stats()
			require.Equal(t, uint64(chunk/4), s.Stopped)
			require.Equal(t, uint64(n-chunk/4+len(added)), s.Fired)
			require.Zero(t, s.Pending)
		})
	}
}

// A bucket far larger than a chunk, spread over the levels of a tiny wheel,
// fires every timer exactly at its tick.
func TestLargeBucketsCascadeExactly(t *testing.T) {
	for _, size := range []int{2, 4} {
		t.Run(fmt.Sprintf("size=%d", size), func(t *testing.T) {
			tw, clock := newManualWheel(t, time.Millisecond, size)
			oneShard(tw)
			const perTick, ticks = 3 * chunk / 2, 40
			got := make(map[time.Duration]int)
			for k := 1; k <= ticks; k++ {
				d := time.Duration(k) * time.Millisecond
				for range perTick {
					tw.AfterFunc(d, func() {
						require.Equal(t, d, clock.Now().Sub(testEpoch), "fired off its tick")
						got[d]++
					})
				}
			}
			for range ticks {
				clock.Advance(time.Millisecond)
				tw.step()
			}
			for k := 1; k <= ticks; k++ {
				require.Equal(t, perTick, got[time.Duration(k)*time.Millisecond], "timers of %dms", k)
			}
			require.Zero(t, tw.Len())
		})
	}
}
