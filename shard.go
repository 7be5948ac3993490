package timingwheel

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A shard is one of a wheel's independent sets of levels: every timer lives
// in one shard, the one its P used last when the timer was made (see
// lockShard),
// kept for the timer's life. So goroutines running on different Ps arm, stop
// and reset timers on different locks and different cache lines, as the
// runtime keeps its timers per P, and the goroutines of one P take turns on
// one lock that is rarely contended (only when one is preempted holding it).
// The shards share the wheel's delay queue, which orders all their buckets,
// and its advancer.
type shard struct {
	wheel *TimingWheel
	index uint32 // in wheel.shards
	owner owner  // the owner of the shard's one-shot timers

	// mu protects every field below, every bucket of the shard and every
	// timer in it: a timer's bucket, slot, due tick and state. Adds, Stop,
	// Reset and the advancer's flush of the shard's buckets all hold it, so
	// an add never interleaves with an advance of the shard (Kafka's rule).
	// Lock order: the advancer's mu, then a shard's mu, then the delay
	// queue's lock; lockAll takes the shards' in index order.
	mu sync.Mutex
	// recheck is set by the delay queue when it could not tell whether a
	// new head, a bucket of this shard, is vacant, because another
	// goroutine held mu: whoever unlocks mu next asks again (see unlock and
	// dropVacant).
	recheck atomic.Bool
	// currentTick is the shard's time: the expiration of the last bucket
	// flushed, or the clock's tick when the shard last had no bucket at all;
	// never ahead of the clock. Level L's current slot is currentTick >>
	// (L*bits).
	currentTick int64
	// counters and stopped are read or written by every arming and Stop:
	// keep them beside mu and currentTick, on the cache lines those touch,
	// not after the fields only a bucket's coming or going uses
	// (docs/design/afterfuncstop.md).
	counters counters
	stopped  bool    // set by the wheel's Stop
	levels   []level // levels[L] exists once a timer needed it; trailing empty levels are released
	free     []*bucket
	// freePage is a released page kept for the next one a level needs
	// (see release), or nil.
	freePage *page
	// freeBlocks are empty blocks that buckets gave back, for the next
	// bucket that must grow past its first (see block.go): a flush that
	// re-arms the timers it takes out, as Tickers are, fills another bucket
	// as big as the one it empties, and Resets move timers from bucket to
	// bucket. At most one slot per pending timer when last checked (see
	// trimBlocks).
	freeBlocks []*block
	// spareNears are released buckets' lists of earliest timers, for the
	// next scans of buckets that have none (see keepNear).
	spareNears []*nearest
	// owed lists the strong nodes of channel timers and Tickers that the
	// next sweep weakens if they are still pending (weakdefer.go).
	owed []*chanTimer
	// buckets counts the shard's buckets (those in its levels' pages), and
	// vacant lists the vacant ones (see bucket), at most half of them, or
	// one on an early queue (vacantFit): so vacant buckets are at most as
	// many as the others, each of which holds a timer or is being flushed,
	// plus one. release withdraws the last vacant ones when a bucket goes,
	// and retire withdraws a bucket instead of leaving it vacant when one
	// more would break the bound. So a shard whose every timer was stopped
	// holds at most one bucket, vacant, on the System clock and none on
	// another clock.
	buckets int
	vacant  vacantList

	// Keeps the hot fields of neighbouring shards off each other's cache
	// lines.
	_ [64]byte
}

// numShards returns how many shards a wheel gets: 4×GOMAXPROCS when the
// wheel is made, rounded up to a power of two, at most maxShards. A P keeps its shard (see lockShard), so the extra shards are used only when
// a P loses its shard to another; they make it unlikely that two Ps then
// share one.
func numShards() int {
	n := 1
	for n < 4*runtime.GOMAXPROCS(0) && n < maxShards {
		n <<= 1
	}
	return n
}

// maxShards bounds the fixed cost of a wheel: a shard is 256 bytes before it
// holds a timer, and each comes with a P's hint of 64 (see shardHint).
const maxShards = 1024

// lockShard returns the shard for a new timer, locked: the one the calling
// goroutine's P uses (its hint, see currentp.go; P i starts on shard i). If
// that shard's lock is held, the P moves to another shard, at random, for
// this timer and later ones: so two Ps that come to share a shard part again
// at their first collision, and the goroutines of a P whose lock holder was
// preempted do not queue behind it. A P whose id is past the shards (after
// GOMAXPROCS grew) shares a hint with another P, which costs only
// collisions.
//
// Random picks per timer cost the same few nanoseconds, but then every
// shard's lock, buckets and counters move between the caches of all the Ps
// (docs/design/shards.md). Which shard a timer is in does not matter to its
// semantics: every shard follows the same clock.
func (tw *TimingWheel) lockShard() *shard {
	h := &tw.hints[currentP()&tw.shardMask]
	s := &tw.shards[h.shard.Load()]
	if !s.mu.TryLock() {
		if tw.shardMask > 0 { // another shard, never s again
			s = &tw.shards[(s.index+1+rand.Uint32N(tw.shardMask))&tw.shardMask]
			h.shard.Store(s.index)
		}
		s.mu.Lock()
		s.noteCollision()
	}
	return s
}

// startLocked arms t, which is in no bucket, to be due at the tick due, at
// wheel time now, and returns a callback to run if it fires at once.
func (s *shard) startLocked(t *Timer, due int64, now time.Duration) func() {
	t.due, t.state = due, statePending
	if s.stopped {
		return nil // dropped: pending forever, never fires
	}
	s.noteArmed()
	if len(s.levels) == 0 {
		// No bucket anywhere in the shard, so none can be overtaken: catch
		// the shard's time up with the clock, so that the timer lands on the
		// level its duration calls for rather than cascading through past
		// slots.
		s.currentTick = max(s.currentTick, s.wheel.tickOf(now))
	}
	if s.insertLocked(t) {
		return nil
	}
	if k := t.kind(); k == kindSchedule || k == kindFunc && s.wheel.exec.mode == execInline {
		// Never run a callback on the caller's goroutine: leave it to the
		// advancer at the next tick, which is already due. (A channel timer
		// has no callback: its value is sent here, at once.) Never behind a
		// bucket the advancer has taken: take moves currentTick on to it as
		// it takes it, so currentTick+1 is ahead of it (a bucket made behind
		// it would be overtaken, and a later rotation would share its index
		// while it is still queued: see take); and the clock's next tick
		// when that is later, so that a shard whose time lags the clock does
		// not run it in a past slot's bucket.
		t.due = max(s.currentTick, s.wheel.tickOf(now)) + 1
		s.insertLocked(t)
		return nil
	}
	return s.expireLocked(t)
}

// insertLocked puts t into the bucket of the finest level whose range holds
// its due tick, creating levels as needed, and reports false, without
// inserting, if t is already due.
//
// Level L covers the wheelSize slots of wheelSize^L ticks starting at the
// level's current slot. A timer lands on level L when its due tick is fewer
// than wheelSize slots of that level ahead of the current slot; then its slot
// is at least one ahead (it did not fit level L-1), so the bucket's
// expiration, the start of the slot, is after currentTick. On level 0 a slot
// is one tick and the bucket's expiration is the due tick itself; on higher
// levels the bucket only cascades its timers down when its slot begins, so the
// timers reach level 0, and fire, no earlier than their due ticks.
func (s *shard) insertLocked(t *Timer) bool {
	due, now := t.due, s.currentTick
	if due <= now {
		return false
	}
	if due == never {
		return true // pending, in no bucket
	}
	w := s.wheel
	place := s.placeOf(due)
	b := s.bucketAt(int(place/MaxWheelSize), int64(place%MaxWheelSize))
	b.push(t)
	if b.vacant != 0 {
		// Vacant (see retire): in this rotation of its slot if the
		// queue still holds it (the current slot never passes a
		// queued bucket); if the queue dropped it (expiration
		// noExpiration), maybe an earlier one, which does not matter
		// to an empty bucket. Take it back at its timer's tick, as
		// queued when that is where it is: so a timer alone in its
		// bucket, armed and stopped in turn, takes the queue's lock
		// neither to arm nor to stop.
		s.unlistVacant(b)
		if due != b.expiration {
			b.expiration = due
			w.queue.Offer(b, w.startOf(due)) // moves it, or queues it again
		}
		return true
	}
	// A bucket expires at the earliest due tick of the timers put in
	// it, not at the start of its slot as in Kafka: so the poller wakes
	// for a bucket of a coarse level when its first timer is due, fires
	// it and cascades the others in the same wake-up, rather than
	// waking once to cascade and again to fire. (On level 0 the two are
	// the same tick.) A timer stopped later leaves the expiration where
	// it was: early, never late.
	//
	// A bucket that is not queued is offered; a queued one only moves
	// earlier. A queued bucket is never shared by two rotations of its
	// slot: its slot is never behind the current one (the current tick
	// never passes a queued bucket's expiration, which is in its slot),
	// and the slots a new timer can land in (current+1 to
	// current+wheelSize-1) never share its index.
	if b.expiration == noExpiration || due < b.expiration {
		b.expiration = due
		w.queue.Offer(b, w.startOf(due))
	}
	return true
}

// placeOf returns the place (see bucket.place) of the bucket a timer due at
// the tick due is filed into: the finest level whose range holds due (see
// insertLocked). due must be after currentTick and not never.
func (s *shard) placeOf(due int64) uint32 {
	w, now := s.wheel, s.currentTick
	for l := 0; ; l++ {
		shift := uint(l) * w.bits
		if slot := due >> shift; slot-(now>>shift) < w.size {
			return uint32(l)*MaxWheelSize + uint32(slot&(w.size-1))
		}
	}
}

// expireLocked fires t, which is due and in no bucket, and returns the
// callback to hand to the executor once mu is released (nil for a channel
// timer, whose value is sent here so that Stop and Reset, which hold mu, can
// discard it).
func (s *shard) expireLocked(t *Timer) func() {
	switch t.kind() {
	case kindChan:
		c := t.owner.ch.get()
		if c == nil {
			t.state = stateFired
			s.noteCollected() // nobody can receive it
			return nil
		}
		now := s.wheel.clock.Now()
		sent := true
		select {
		case c <- now:
		default:
			// A Ticker's receiver has not taken the last tick: drop this
			// one, as time.Ticker does. (A NewTimer's buffer is drained
			// before every arming, so its send never gets here.)
			sent = false
		}
		if ct := t.owner.node; ct.period > 0 {
			s.noteFired(false)
			s.rearmTickerLocked(ct, now, sent) // stays statePending
			return nil
		}
		t.state = stateFired
		s.unoweLocked(t.owner.node)
		s.noteFired(true)
		return nil
	case kindSchedule:
		return s.rearmLocked(t)
	default:
		t.state = stateFired
		s.noteFired(true)
		return t.f
	}
}

// flush moves at most limit timers out of b, which the advancer took from the
// delay queue, each to a finer level or to fire, appending callbacks to
// ready. It reports how many it moved and whether b is done. The shard's time
// is already at b's expiration: take moved it there.
//
// Between calls no add can land in b: new timers go to slots after the
// current one, which is b's (see insertLocked).
func (s *shard) flush(b *bucket, limit int, ready *[]func()) (n int, done bool) {
	s.mu.Lock()
	defer s.unlock()
	if s.stopped {
		return 0, true
	}
	for ; n < limit && !b.empty(); n++ {
		t := b.take()
		if !s.insertLocked(t) {
			if run := s.expireLocked(t); run != nil {
				*ready = append(*ready, run)
			}
		}
	}
	if !b.empty() {
		return n, false
	}
	s.release(b)
	return n, true
}

// catchUp moves the shard's time to now, or to the earliest bucket in the
// delay queue if that is earlier, so that a shard whose buckets are all far
// ahead does not file new timers by a stale current slot (onto a coarse level
// whose bucket is already due, costing a cascade). It is safe because no
// bucket of the shard that holds a timer is behind the new current slot:
// every such bucket is in the queue (so at or after its head), except one the
// advancer has taken and not finished, and the advancer calls catchUp only
// when it has none. (A vacant bucket the queue dropped may be left behind:
// it is empty, and a timer landing in it is offered afresh.)
func (s *shard) catchUp(now time.Duration) {
	w := s.wheel
	s.mu.Lock()
	if !s.stopped {
		to := w.tickOf(now)
		if next := w.queue.Next(); next < now {
			to = w.tickOf(next)
		}
		s.currentTick = max(s.currentTick, to)
	}
	s.unlock()
}

// stop drops every pending timer of the shard and releases its storage.
func (s *shard) stop() {
	s.mu.Lock()
	defer s.unlock()
	s.stopped = true
	s.noteDropped()
	for _, lv := range s.levels {
		for _, p := range lv.pages {
			if p == nil {
				continue
			}
			for _, b := range p.buckets {
				if b != nil {
					b.detachAll()
				}
			}
		}
	}
	s.vacant.clearAll() // a ring under way may still take one from the queue
	for _, ct := range s.owed {
		ct.owed = 0
	}
	s.owed = nil
	s.levels, s.free, s.freeBlocks, s.freePage, s.spareNears = nil, nil, nil, nil, nil
	s.buckets = 0
}

// lockAll locks every shard, in index order.
func (tw *TimingWheel) lockAll() {
	for i := range tw.shards {
		tw.shards[i].mu.Lock()
	}
}

// unlockAll unlocks every shard, then makes the rechecks the queue asked
// for meanwhile (see shard.unlock): only once it holds no shard's lock,
// since a recheck takes its shard's lock again, out of lockAll's order.
func (tw *TimingWheel) unlockAll() {
	for i := range tw.shards {
		tw.shards[i].mu.Unlock()
	}
	for i := range tw.shards {
		tw.shards[i].recheckOwed()
	}
}
