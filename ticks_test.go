package timingwheel

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTicksRounding pins the never-early rule at its edges: a deadline is
// rounded up to a tick, overflow means never, and no real deadline is
// mistaken for never, even at a 1 ns tick.
func TestTicksRounding(t *testing.T) {
	for _, tick := range []int64{1, 2, 3, 1000, int64(time.Millisecond), int64(time.Hour)} {
		k := ticks{tick: tick, perTick: newDivider(tick)}
		require.Equal(t, int64(0), k.dueAfter(5, 0), "d = 0 is due at once")
		require.Equal(t, int64(0), k.dueAfter(5, -1), "d < 0 is due at once")
		require.Equal(t, int64(0), k.dueAfter(5, math.MinInt64))
		require.Equal(t, int64(1), k.dueAfter(0, 1), "tick %d", tick)
		require.Equal(t, int64(1), k.dueAfter(0, time.Duration(tick)), "a deadline on a tick boundary is due at that tick")
		require.Equal(t, int64(2), k.dueAfter(0, time.Duration(tick+1)))
		require.Equal(t, int64(never), k.dueAfter(1, math.MaxInt64), "a deadline past the clock's range never fires")
		require.Equal(t, int64(never), k.dueAfter(math.MaxInt64-5, 6))
		last := k.dueAfter(0, math.MaxInt64-1)
		require.Less(t, last, int64(never), "the latest reachable deadline is mistaken for never")
		require.GreaterOrEqual(t, int64(k.startOf(last)), int64(math.MaxInt64-1), "rounded down: early")
		require.Equal(t, time.Duration(math.MaxInt64), k.startOf(never), "startOf saturates")
		require.Equal(t, int64(3), k.tickOf(time.Duration(3*tick+tick-1)))
	}
}
