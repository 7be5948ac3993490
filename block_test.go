package timingwheel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMovingBetweenBigBucketsAllocatesNothing specifies that a bucket grows
// and shrinks without copying itself: timers moved back and forth between
// two big buckets, as random Resets move them at millions pending, take the
// room they need from what the other bucket gave back, so that after the
// first round no move allocates. Each bucket shrinks to an eighth of its
// size or less and grows back, within what a bucket's block table keeps
// (see dropLastBlock). (With one array a bucket, each round reallocated
// both: a bucket shrunk when three quarters empty and regrew by append,
// copying every timer it held.)
func TestMovingBetweenBigBucketsAllocatesNothing(t *testing.T) {
	const n = 1 << 14
	tw, _ := newManualWheel(t, time.Millisecond, DefaultWheelSize)
	oneShard(tw)
	// Two buckets of the same level: an hour and two hours ahead, in slots
	// of 262 s (512 ms × 512).
	const early, late = time.Hour, 2 * time.Hour
	stay := tw.AfterFunc(early, noop)
	for range n/4 - 1 {
		tw.AfterFunc(early, noop) // stay in the early bucket
	}
	ts := make([]*Timer, n)
	for i := range ts {
		ts[i] = tw.AfterFunc(late, noop)
	}
	moved := ts[:n-n/8]
	round := func() {
		for _, tm := range moved {
			tm.Reset(early) // earlier: moves it
		}
		for _, tm := range moved {
			tm.Stop()
			tm.Reset(late) // stopped: arms it again
		}
	}
	require.Equal(t, n+n/4, tw.Len())
	if allocs := testing.AllocsPerRun(5, round); allocs != 0 {
		t.Fatalf("%v allocations for a round of %d moves each way, want 0", allocs, len(moved))
	}
	require.Equal(t, n+n/4, tw.Len())
	a, b := stay.bucket, ts[0].bucket
	require.True(t, a != b && a.level() == 2 && b.level() == 2, "the timers are not in two buckets of level 2")
}
