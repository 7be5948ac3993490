package timingwheel

import (
	"math/rand/v2"
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

// TestBlocksKeepSlots runs random pushes, removals and flushes on one bucket
// against a set of the timers it should hold: after every operation each
// timer is where its slot says, the bucket holds nothing else (every other
// entry is nil, so it keeps no stopped timer alive), no empty block stays
// at its end, and the pool holds only empty blocks, within its bound.
func TestBlocksKeepSlots(t *testing.T) {
	tw, _ := newManualWheel(t, time.Millisecond, DefaultWheelSize)
	s := &tw.shards[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &bucket{shard: s, expiration: noExpiration}
	in := map[*Timer]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	check := func(step int) {
		t.Helper()
		require.Equal(t, len(in), b.end()-int(b.taken), "step %d: count", step)
		for tm := range in {
			if tm.bucket != b || tm.slot < b.taken || b.blocks[tm.slot>>blockBits][tm.slot&blockMask] != tm {
				t.Fatalf("step %d: a timer is not at its slot %d (taken %d)", step, tm.slot, b.taken)
			}
		}
		held := 0
		for j, c := range b.blocks {
			for _, tm := range c[:cap(c)] {
				if tm != nil {
					held++
				}
			}
			if j > 0 && j == len(b.blocks)-1 {
				require.NotEmpty(t, c, "step %d: an empty last block kept", step)
			}
		}
		require.Equal(t, len(in), held, "step %d: entries not nil", step)
		require.LessOrEqual(t, len(s.freeBlocks)*blockSize, s.counters.pending, "step %d: pool over its bound", step)
		for _, c := range s.freeBlocks {
			if *c != (block{}) {
				t.Fatalf("step %d: a pooled block holds timers", step)
			}
		}
	}
	members := func() []*Timer {
		var ts []*Timer
		for tm := range b.all {
			ts = append(ts, tm)
		}
		return ts
	}
	for step := range 5000 {
		// The pool's bound follows what is pending, checked when a block
		// or the bucket empties: pending never drops here, so the bound
		// holds after every step.
		s.counters.pending = max(s.counters.pending, len(in)+100)
		switch op := r.IntN(100); {
		case b.taken > 0 || op < 3: // a flush, run to the end with removals between takes
			if len(in) == 0 {
				continue
			}
			tm := b.take()
			require.True(t, in[tm], "step %d: took a timer not in the bucket", step)
			require.Nil(t, tm.bucket)
			delete(in, tm)
			if ts := members(); len(ts) > 0 && r.IntN(4) == 0 {
				tm := ts[r.IntN(len(ts))]
				tm.unlink(true)
				delete(in, tm)
			}
		case op < 55 || len(in) == 0:
			for range 1 + r.IntN(200) {
				tm := &Timer{due: 1}
				b.push(tm)
				in[tm] = true
			}
		default:
			ts := members()
			for range min(len(ts), 1+r.IntN(200)) {
				i := r.IntN(len(ts))
				ts[i].unlink(true)
				delete(in, ts[i])
				ts[i] = ts[len(ts)-1]
				ts = ts[:len(ts)-1]
			}
		}
		check(step)
	}
	// Once nothing is pending, the bucket's last timers going empty the pool.
	s.counters.pending = 0
	for tm := range in {
		tm.unlink(true)
	}
	require.True(t, b.empty())
	require.Nil(t, s.freeBlocks)
}
