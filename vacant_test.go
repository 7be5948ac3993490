package timingwheel

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Buckets emptied while other buckets are due before them are left vacant,
// abandoned in the delay queue rather than withdrawn (see retire): these
// tests hold that a vacant bucket still wakes nobody, is taken back by the
// next timer that lands in it, and that a shard keeps no more of them than
// of its other buckets.

// settle waits until the wheel has done everything due at the fake clock's
// time and fired has reached want (callbacks run on their own goroutines).
func settle(t *testing.T, tw *TimingWheel, fired *atomic.Int64, want int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !tw.idle() || fired.Load() < want {
		if time.Now().After(deadline) {
			t.Fatal("the wheel did not settle within 30 s")
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// newOneShardWheel returns a wheel of 64 slots of 1 ms on a fake clock,
// with its poller, whose timers all go to one shard, so that the tests can
// tell which bucket a timer lands in and count the poller's wake-ups.
func newOneShardWheel(t *testing.T) (*TimingWheel, *FakeClock) {
	t.Helper()
	clock := NewFakeClock(time.Unix(1_000_000, 0))
	tw, err := New(time.Millisecond, 64, WithClock(clock))
	require.NoError(t, err)
	t.Cleanup(tw.Stop)
	return oneShard(tw), clock
}

// vacantCount returns how many vacant buckets the wheel's shards hold, and
// fails unless every shard keeps at most as many as its others (plus one
// on an early queue: vacantFit).
func vacantCount(t *testing.T, tw *TimingWheel) int {
	t.Helper()
	tw.lockAll()
	defer tw.unlockAll()
	n := 0
	for i := range tw.shards {
		s := &tw.shards[i]
		require.True(t, s.vacantFit(s.vacant.n),
			"shard %d: %d vacant buckets of %d", i, s.vacant.n, s.buckets)
		n += s.vacant.n
	}
	return n
}

// TestAloneInItsBucketStaysQueued: a timer alone in its bucket, armed and
// stopped in turn while another bucket is due first, leaves its bucket
// vacant, still queued, and takes it back at the next arming (the queue's
// lock is taken neither to arm nor to stop); when the other bucket fires,
// the vacant one goes with it, and the poller never wakes for it.
func TestAloneInItsBucketStaysQueued(t *testing.T) {
	tw, clock := newOneShardWheel(t)
	var fired atomic.Int64
	tw.AfterFunc(time.Minute, func() { fired.Add(1) })
	require.Equal(t, 1, tw.queue.Len())
	var lone *bucket
	for i := range 100 {
		tm := tw.AfterFunc(2*time.Hour, func() { panic("a stopped timer fired") })
		b := tm.bucket
		if lone == nil {
			lone = b
		}
		require.Same(t, lone, b, "arming %d: the timer did not land in the vacant bucket", i)
		require.True(t, tm.Stop())
		require.Equal(t, 2, tw.queue.Len(), "arming %d: the emptied bucket left the queue", i)
		require.Equal(t, 1, vacantCount(t, tw))
	}
	clock.Advance(time.Minute)
	settle(t, tw, &fired, 1)
	require.Zero(t, tw.queue.Len(), "the vacant bucket outlived the shard's last timer")
	require.Zero(t, vacantCount(t, tw))
	require.Zero(t, tw.Stats().Levels)
	clock.Advance(3 * time.Hour)
	settle(t, tw, &fired, 1)
	require.Equal(t, uint64(1), tw.Stats().Wakeups, "the poller woke for a vacant bucket")
}

// TestVacantBucketDroppedBeforeTheAlarm: a vacant bucket behind the head is
// dropped by the queue when the head before it fires, so the poller sleeps
// through its expiration; a timer landing in its slot a rotation later, in
// the very bucket left in its level, is queued afresh and fires on time.
func TestVacantBucketDroppedBeforeTheAlarm(t *testing.T) {
	tw, clock := newOneShardWheel(t)
	start := clock.Now()
	var fired atomic.Int64
	tw.AfterFunc(10*time.Millisecond, func() { fired.Add(1) })
	stopped := tw.AfterFunc(20*time.Millisecond, func() { panic("a stopped timer fired") })
	tw.AfterFunc(25*time.Millisecond, func() { fired.Add(1) }) // moves the shard's time past the vacant slot
	tw.AfterFunc(time.Minute, noop)                            // keeps a bucket, so that one may be vacant
	b := stopped.bucket
	require.True(t, stopped.Stop())
	require.Equal(t, 1, vacantCount(t, tw), "the emptied bucket was not left vacant")
	require.Equal(t, 4, tw.queue.Len())
	clock.Advance(10 * time.Millisecond)
	settle(t, tw, &fired, 1)
	require.Equal(t, 2, tw.queue.Len(), "the vacant bucket was not dropped when it reached the head")
	require.Equal(t, 1, vacantCount(t, tw), "the dropped bucket left its level")
	clock.Advance(20 * time.Millisecond) // past the vacant bucket's expiration, to the third timer's
	settle(t, tw, &fired, 2)
	require.Equal(t, uint64(2), tw.Stats().Wakeups, "the poller woke for the vacant bucket")
	// 20 ms + 64 ms: the same slot of level 0, a rotation later.
	due := start.Add(84 * time.Millisecond)
	var onTime atomic.Int64
	tm := tw.AfterFunc(due.Sub(clock.Now()), func() {
		if clock.Now().Before(due) {
			panic("fired early")
		}
		onTime.Add(1)
	})
	require.Same(t, b, tm.bucket, "the timer did not land in the vacant bucket")
	require.Zero(t, vacantCount(t, tw))
	clock.Advance(due.Sub(clock.Now()) - time.Millisecond)
	settle(t, tw, &onTime, 0)
	require.Equal(t, uint64(2), tw.Stats().Fired, "the timer in the reused bucket fired early")
	clock.Advance(time.Millisecond)
	settle(t, tw, &onTime, 1) // "fired early" panics
	require.Equal(t, uint64(3), tw.Stats().Wakeups)
}

// TestVacantBucketsAtMostTheOthers arms timers over many buckets of levels
// 0 and 1 of one shard and stops them in random order: after every Stop the
// shard holds at most as many vacant buckets as others, and the delay queue
// at most the buckets the shard holds; after the last, none.
func TestVacantBucketsAtMostTheOthers(t *testing.T) {
	tw, _ := newOneShardWheel(t)
	r := rand.New(rand.NewPCG(3, 4))
	timers := make([]*Timer, 5000)
	for i := range timers {
		timers[i] = tw.AfterFunc(time.Millisecond+time.Duration(r.Int64N(int64(4*time.Second))), noop)
	}
	r.Shuffle(len(timers), func(i, j int) { timers[i], timers[j] = timers[j], timers[i] })
	most := 0
	for _, tm := range timers {
		require.True(t, tm.Stop())
		most = max(most, vacantCount(t, tw))
		s := &tw.shards[0]
		s.mu.Lock()
		buckets := s.buckets
		s.mu.Unlock()
		require.LessOrEqual(t, tw.queue.Len(), buckets, "the queue holds buckets the shard let go")
	}
	t.Logf("at most %d buckets vacant at once", most)
	require.Greater(t, most, 16, "few buckets were left vacant: the test measured nothing")
	require.Zero(t, vacantCount(t, tw))
	require.Zero(t, tw.queue.Len())
	require.Zero(t, tw.Stats().Levels)
}

// TestVacantHeadOfTheCallersShardIsDropped: when the Stop that withdraws the
// head makes a vacant bucket of its own shard the new head, the queue cannot
// ask the shard (the Stop holds its lock): it sets the shard's recheck flag,
// and the Stop, as it unlocks, has the queue drop the vacant head before it
// returns, so the alarm moves past it and the poller never wakes for it.
func TestVacantHeadOfTheCallersShardIsDropped(t *testing.T) {
	tw, clock := newOneShardWheel(t)
	var fired atomic.Int64
	head := tw.AfterFunc(10*time.Millisecond, func() { panic("a stopped timer fired") })
	vacant := tw.AfterFunc(20*time.Millisecond, func() { panic("a stopped timer fired") })
	next := tw.AfterFunc(30*time.Millisecond, func() { fired.Add(1) })
	tw.AfterFunc(time.Minute, noop) // keeps a bucket, so that one may be vacant
	require.True(t, vacant.Stop())
	require.Equal(t, 1, vacantCount(t, tw), "the emptied bucket was not left vacant")
	require.Equal(t, 4, tw.queue.Len())
	require.True(t, head.Stop()) // withdraws the head: the vacant bucket is next
	require.False(t, tw.shards[0].recheck.Load(), "the Stop left the recheck to the next unlock")
	require.Equal(t, 2, tw.queue.Len(), "the vacant bucket, now the head, was not dropped")
	require.Equal(t, tw.startOf(next.due), tw.queue.Next(), "the head is not the next live bucket")
	clock.Advance(30 * time.Millisecond)
	settle(t, tw, &fired, 1)
	require.Equal(t, uint64(1), tw.Stats().Wakeups, "the poller woke for the vacant bucket")
}

// TestVacantListReusesItsFront: buckets joining at the end while the
// oldest leave, as a shard keeping a few vacant buckets sees them, reuse
// the list's space: no allocation once it has warmed up, and a capacity
// of a few times the buckets it holds (it grew, copying itself, for ever).
func TestVacantListReusesItsFront(t *testing.T) {
	var v vacantList
	ring := make([]*bucket, 8)
	for i := range ring {
		ring[i] = &bucket{}
	}
	i := 0
	round := func() {
		v.push(ring[i%len(ring)])
		i++
		if v.n > 4 {
			v.remove(v.oldest())
		}
	}
	for range 1000 {
		round()
	}
	if allocs := testing.AllocsPerRun(10000, round); allocs != 0 {
		t.Errorf("%v allocations a round, want 0", allocs)
	}
	if c := cap(v.list); c > 64 {
		t.Errorf("list capacity %d for %d vacant buckets, want at most 64", c, v.n)
	}
	for k, b := range v.list[v.head:] {
		if b != nil && int(b.vacant) != v.head+k+1 {
			t.Fatalf("bucket at %d has vacant %d, want %d", v.head+k, b.vacant, v.head+k+1)
		}
	}
}
