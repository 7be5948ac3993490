package timingwheel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLongChannelTimerStoppedSoonPaysNoSpecial: NewTimer and NewTicker armed
// beyond strongHorizon and stopped before the sweep allocate what a short
// channel timer does (no weak handle, no cleanup), and leave nothing owed.
func TestLongChannelTimerStoppedSoonPaysNoSpecial(t *testing.T) {
	tw, err := New(time.Millisecond, 512)
	require.NoError(t, err)
	defer tw.Stop()
	short := testing.AllocsPerRun(1000, func() { tw.NewTimer(100 * time.Millisecond).Stop() })
	long := testing.AllocsPerRun(1000, func() { tw.NewTimer(time.Hour).Stop() })
	require.Equal(t, short, long, "NewTimer(1h)+Stop allocates more than NewTimer(100ms)+Stop")
	ticker := testing.AllocsPerRun(1000, func() { tw.NewTicker(time.Hour).Stop() })
	require.LessOrEqual(t, ticker, short, "NewTicker+Stop allocates more than a short NewTimer+Stop")
	for i := range tw.shards {
		s := &tw.shards[i]
		s.mu.Lock()
		n := len(s.owed)
		s.mu.Unlock()
		require.Zero(t, n, "shard %d: stopped nodes left owed", i)
	}
}

// TestSweepWeakensWithinTheHorizon: a long channel timer still pending is
// weakened by the sweep, which runs by itself within strongHorizon, so that
// an abandoned one becomes collectable.
func TestSweepWeakensWithinTheHorizon(t *testing.T) {
	tw, err := New(time.Millisecond, 512)
	require.NoError(t, err)
	defer tw.Stop()
	tm := tw.NewTimer(time.Hour)
	tk := tw.NewTicker(time.Hour)
	defer tk.Stop()
	require.False(t, holdsWeakly(tm.owner.node), "weak before the sweep")
	require.Eventually(t, func() bool { return holdsWeakly(tm.owner.node) && holdsWeakly(tk.node) },
		30*time.Second, time.Millisecond, "no sweep weakened the pending timer and ticker")
	require.True(t, tm.Stop())
}
