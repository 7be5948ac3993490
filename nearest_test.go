package timingwheel

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEarliestModel arms timers into one coarse bucket and then, at
// random, stops them, resets them within the bucket (earlier and later,
// some past its slot) and arms more into it, asking the bucket for its
// earliest timer after each step: the answer is always the least due tick
// of the timers it holds, computed afresh (the reference), however stale
// the list of the last scan is. The bucket's expiration is never after it.
func TestEarliestModel(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 11))
		clock := NewFakeClock(time.Unix(1_000_000, 0))
		tw, err := New(time.Millisecond, 64, WithClock(clock))
		require.NoError(t, err)
		oneShard(tw)
		// Level 1 of a 64-slot wheel of 1 ms: slots of 64 ms. [128, 192)
		// ms is one slot, two ahead of the current one.
		in := func() time.Duration { return 128*time.Millisecond + time.Duration(r.IntN(64))*time.Millisecond }
		var timers []*Timer
		arm := func() { timers = append(timers, tw.AfterFunc(in(), noop)) }
		for range 1 + r.IntN(3*nearestMax) {
			arm()
		}
		b := timers[0].bucket
		require.Equal(t, 1, b.level())
		s := b.shard
		served := 0
		for step := range 400 {
			switch op := r.IntN(10); {
			case op < 3 && len(timers) > 1:
				i := r.IntN(len(timers))
				require.True(t, timers[i].Stop())
				timers = append(timers[:i], timers[i+1:]...)
			case op < 7:
				// Within the slot or past it (a Reset to later stays).
				tm := timers[r.IntN(len(timers))]
				d := in()
				if r.IntN(3) == 0 {
					d += time.Duration(r.IntN(500)) * time.Millisecond
				}
				tm.Reset(d)
			default:
				arm()
			}
			s.mu.Lock()
			want, held := int64(never), 0
			for _, tm := range timers {
				if tm.bucket == b {
					want = min(want, tm.due)
					held++
				}
			}
			if held > 0 && b.expiration != noExpiration {
				if listed(b) {
					served++
				}
				require.Equal(t, want, b.earliest(), "seed %d step %d: the earliest of %d timers", seed, step, held)
				require.LessOrEqual(t, b.expiration, want, "seed %d step %d: the bucket expires after its earliest timer", seed, step)
			}
			s.mu.Unlock()
		}
		require.Positive(t, served, "seed %d: every step scanned: the list served nothing", seed)
		tw.Stop()
	}
}

// TestRetargetScansOncePerList: timers Reset in the order they are due, as
// a server's idle timeouts are, each one its bucket's earliest, move the
// bucket's expiration on at every Reset, and the bucket is scanned once for
// every nearestMax of them, not at every Reset.
func TestRetargetScansOncePerList(t *testing.T) {
	tw, _ := newOneShardWheel(t)
	timers := make([]*Timer, 100)
	for i := range timers {
		// 128 ms to 191 ms: one level-1 bucket, every due tick distinct
		// but the last few.
		timers[i] = tw.AfterFunc(128*time.Millisecond+time.Duration(i*63/len(timers))*time.Millisecond, noop)
	}
	b := timers[0].bucket
	for _, tm := range timers {
		require.Same(t, b, tm.bucket)
	}
	for i, tm := range timers[:len(timers)-1] {
		tm.Reset(time.Hour) // later: stays in b (see holds)
		require.Same(t, b, tm.bucket)
		require.Equal(t, timers[i+1].due, b.expiration, "Reset %d: the expiration did not move to the next timer", i)
		require.NotNil(t, b.near, "Reset %d: retarget did not scan", i)
	}
	scans := b.near.scans
	t.Logf("%d scans for %d Resets", scans, len(timers)-1)
	require.LessOrEqual(t, scans, (len(timers)+nearestMax-1)/nearestMax+1)
}

// listed reports whether b's list from its last scan still holds a valid
// entry, so that earliest answers without scanning.
func listed(b *bucket) bool {
	if b.near == nil {
		return false
	}
	for _, e := range b.near.entries[b.near.next:] {
		if e.t.bucket == b && e.t.due == e.due {
			return true
		}
	}
	return false
}

// TestResetWithinBucketKeepsTheList: timers Reset again and again to
// random ticks of their own coarse bucket, the earliest among them now and
// then to later (which retargets the bucket), as a pool of timers among a
// million pending is in bench's headline Reset. A Reset that lands before
// the list's bound enters the list, so the bucket is scanned only when the
// list runs out: here at most once every four retargets (every one, when
// such a Reset made the list be forgotten).
func TestResetWithinBucketKeepsTheList(t *testing.T) {
	tw, _ := newOneShardWheel(t)
	r := rand.New(rand.NewPCG(5, 8))
	in := func() time.Duration { return 128*time.Millisecond + time.Duration(r.IntN(64))*time.Millisecond }
	timers := make([]*Timer, 100)
	for i := range timers {
		timers[i] = tw.AfterFunc(in(), noop)
	}
	b := timers[0].bucket
	retargets := 0
	for step := range 2000 {
		if step%4 == 0 {
			// The earliest timer leaves for later: a retarget.
			first := timers[0]
			for _, tm := range timers {
				if tm.due < first.due {
					first = tm
				}
			}
			first.Reset(time.Hour)
			retargets++
			continue
		}
		tm := timers[r.IntN(len(timers))]
		if tm.bucket == b {
			tm.Reset(in())
		}
	}
	require.NotNil(t, b.near, "no retarget scanned the bucket")
	t.Logf("%d scans for %d retargets", b.near.scans, retargets)
	require.LessOrEqual(t, b.near.scans, retargets/4)
}

// TestRandomResetsAllocateLittle: Resets of random timers among 1,000
// pending on the default wheel's geometry (1 ms × 512) to random deadlines
// of 1 to 61 minutes, as BenchmarkReset's timer=random does, empty small
// coarse buckets and fill them again, and each first scan of a bucket
// needs a list of its earliest timers: the lists of released buckets are
// kept for it (keepNear). After a warm-up, 1,000 Resets made 106
// allocations, nearly all lists; now 7: buckets of level 1, most holding
// one timer, made and released as timers come and go (a bucket, its table,
// its first array growing to 8), which is what the bound below leaves room
// for. BenchmarkReset's B/op rounds both to a few bytes or to 0.
func TestRandomResetsAllocateLittle(t *testing.T) {
	clock := NewFakeClock(time.Unix(1_000_000, 0))
	tw, err := New(time.Millisecond, 512, WithClock(clock))
	require.NoError(t, err)
	defer tw.Stop()
	oneShard(tw)
	r := rand.New(rand.NewPCG(2, 3))
	spread := func() time.Duration { return time.Minute + time.Duration(r.Int64N(int64(59*time.Minute))) }
	timers := make([]*Timer, 1000)
	for i := range timers {
		timers[i] = tw.AfterFunc(spread(), noop)
	}
	resets := func() {
		for range 1000 {
			if !timers[r.IntN(len(timers))].Reset(spread()) {
				t.Fatal("Reset of a pending timer returned false")
			}
		}
	}
	for range 100 {
		resets()
	}
	require.LessOrEqual(t, testing.AllocsPerRun(100, resets), 10.0, "allocations per 1,000 random Resets")
}

// TestLoneResetLaterAllocatesNothing: a timer alone on its wheel, Reset
// later again and again as the matrix's Reset-later cells do (from d to
// 2d in steps of d/1000), leaves its bucket's expiration behind it, and
// retarget finds its earliest timer: itself, without a list. Making a
// list (a scan) for a bucket of one timer allocated 300 B for every
// bucket the walk crossed: 1 B per Reset at 10 s and 2 h.
func TestLoneResetLaterAllocatesNothing(t *testing.T) {
	for _, d := range []time.Duration{10 * time.Second, 2 * time.Hour} {
		clock := NewFakeClock(time.Unix(1_000_000, 0))
		tw, err := New(time.Millisecond, 512, WithClock(clock))
		require.NoError(t, err)
		step := d / 1000
		tm := tw.AfterFunc(4*time.Hour, noop)
		j := 0
		walk := func() {
			for range 1000 {
				if j == 0 {
					tm.Stop()
					tm.Reset(d)
				} else if !tm.Reset(d + time.Duration(j)*step) {
					t.Fatal("Reset of a pending timer returned false")
				}
				j = (j + 1) % 1000
			}
		}
		walk()
		require.Zero(t, testing.AllocsPerRun(20, walk), "d=%v: allocations per 1,000 Resets later", d)
		tw.Stop()
	}
}
