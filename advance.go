package timingwheel

import (
	"sync"
	"time"
)

// Advancing the wheel: taking due buckets from the delay queue and flushing
// them (cascading their timers down, firing the due ones). One goroutine at a
// time does it, holding the advancer's mu: either a caller of AfterFunc,
// NewTimer or Reset that finds a bucket due, as the runtime's checkTimers
// runs due timers from the scheduler loop it is already in, or the poller,
// the fallback for a wheel nobody calls. So a busy process advances the wheel
// without any goroutine being woken for it.

// chunk is how many timers the advancer moves per hold of a shard's lock, so
// that adds wait for at most one chunk, never for a whole large bucket;
// smaller chunks cost the poller more lock handovers in an expiry burst.
// 256 moves hold the lock 5.5 µs cascading, 1.6 µs firing (BenchmarkFlushChunk).
const chunk = 256

// callerBudget bounds the work a caller does for the wheel per call: at most
// this many timers moved, and their callbacks handed over, so that a caller
// fires at most one budget per tick (one caller advances at a time) and a
// server's usual due work per tick (a few timers per shard) is done in one
// call. A caller that leaves a bucket half flushed kicks the poller to
// finish it, so too small a budget wakes the poller.
// 64 fired cost a caller about 50 µs (BenchmarkCallbackHandover); 16 woke the
// purgatory load's poller on 2-4% more ticks (docs/design/advancing.md).
const callerBudget = 64

// maxGrace bounds how long the poller's alarm rings after a due bucket while
// callers have been advancing the wheel (see graceFor). It must exceed the gap
// between bursts of callers that sleep between calls, about 1.1 ms on Linux,
// where the runtime's netpoller waits in whole milliseconds; a shorter grace
// races them and wakes the poller for work a caller was about to do.
// 2 ms: the purgatory load's poller woke on 1.7% of ticks, 9.8% at 1 ms
// (bench/cmd/purgatory -lib wheel; docs/design/advancing.md).
const maxGrace = 2 * time.Millisecond

type advancer struct {
	mu sync.Mutex
	// ringing is set while ring advances the wheel: the last callback of
	// each chunk is kept in held rather than handed to the executor, and
	// ring runs the last one kept on its own goroutine, which the runtime
	// started for it (see ring).
	ringing  bool
	held     func()
	flushing *bucket  // taken from the queue, not yet fully flushed
	ready    []func() // callbacks of the chunk just flushed, reused
	grace    time.Duration
	lastHelp time.Duration // the wheel time at which a caller last advanced the wheel
}

// graceFor returns how late, after a bucket is due, the poller's alarm rings
// while callers are advancing the wheel: two ticks, at most maxGrace. A caller
// arriving in that time flushes the bucket and moves the alarm on, so a
// process that calls the wheel more often than once a grace wakes the poller
// almost never. The cost is lateness: a bucket that falls due while callers
// are advancing the wheel may be flushed up to one grace later than on an
// idle wheel, whose poller rings on time.
func graceFor(tick time.Duration) time.Duration { return min(2*tick, maxGrace) }

// help is called by AfterFunc, NewTimer and Reset after their own work, with
// the wheel time they read: if a bucket is due and no one is advancing the
// wheel, it advances it by at most callerBudget timers. With
// WithInlineCallbacks callbacks run on the poller only, so callers never
// advance the wheel.
func (tw *TimingWheel) help(now time.Duration) {
	if now >= tw.queue.Next() { // inlined: nearly every call ends here
		tw.helpDue(now)
	}
}

// helpDue is help once a bucket is due.
func (tw *TimingWheel) helpDue(now time.Duration) {
	if tw.exec.mode == execInline || !tw.adv.mu.TryLock() {
		return
	}
	tw.queue.SetGrace(tw.adv.grace)
	tw.adv.lastHelp = now
	tw.advanceLocked(now, callerBudget)
	// A due bucket still in the queue rings the alarm within a grace, if no
	// caller takes it first; one taken and left half flushed does not.
	halfFlushed := tw.adv.flushing != nil
	tw.adv.mu.Unlock()
	if halfFlushed {
		tw.queue.Kick()
	}
}

// advanceLocked flushes the buckets due at now, moving at most budget
// timers, and reports whether due work remains. Callers hold adv.mu.
func (tw *TimingWheel) advanceLocked(now time.Duration, budget int) (more bool) {
	a := &tw.adv
	for budget > 0 {
		if tw.stopped.Load() {
			a.flushing = nil
			return false
		}
		b := a.flushing
		if b == nil {
			var ok bool
			if b, ok = tw.take(now); !ok {
				// Nothing due and nothing half flushed: every shard may
				// catch up with the clock. One lock per shard, at most
				// once per tick that had work.
				for i := range tw.shards {
					tw.shards[i].catchUp(now)
				}
				return false
			}
			a.flushing = b
		}
		n, done := b.shard.flush(b, min(budget, chunk), &a.ready)
		if done {
			a.flushing = nil
		}
		budget -= n + 1 // an empty bucket costs a little too
		if a.ringing && len(a.ready) > 0 {
			if a.held != nil {
				tw.exec.run(a.held)
			}
			a.held = a.ready[len(a.ready)-1]
			a.ready = a.ready[:len(a.ready)-1]
		}
		tw.exec.runAll(a.ready)
		clear(a.ready)
		a.ready = a.ready[:0]
	}
	return a.flushing != nil || tw.queue.Next() <= now
}

// poll is the poller of a wheel that does not ring (see ring), its only
// goroutine: it sleeps until a bucket is due (or a caller kicks it) and
// advances the wheel, until Stop. Finding a bucket due
// when it wakes, with no caller having advanced the wheel for two graces,
// means callers have stopped doing it, so it turns the grace off until they
// do again: an idle wheel fires on time. (One miss is forgiven, as callers
// that pause for a garbage collection or a burst of other work have not
// stopped.)
func (tw *TimingWheel) poll() {
	defer close(tw.done)
	if tw.exec.mode == execInline {
		tw.pollerID.Store(goroutineID())
	}
	for tw.queue.Wait(tw.exit) {
		tw.adv.mu.Lock()
		now := tw.now()
		if tw.queue.Next() <= now {
			if now-tw.adv.lastHelp > 2*tw.adv.grace {
				tw.queue.SetGrace(0)
			}
		}
		for tw.advanceLocked(now, chunk) {
			// Let a caller in between chunks; it finds the work taken or
			// takes a share.
			tw.adv.mu.Unlock()
			tw.adv.mu.Lock()
			now = tw.now()
		}
		tw.adv.mu.Unlock()
	}
}

// ring is the poller of a wheel on the System clock whose callbacks run on
// goroutines of their own (the default): what the alarm runs, on a goroutine
// the runtime starts for it as for time.AfterFunc's f. It advances the wheel
// as poll does, sets the alarm for what is due next, and then runs the last
// callback it fired itself, on the goroutine it already has. So a timer
// firing alone costs one goroutine, as time.AfterFunc's does, where poll
// costs a goroutine wake-up and then a goroutine for the callback
// (docs/design/firecost.md).
func (tw *TimingWheel) ring() {
	if tw.stopped.Load() {
		return
	}
	a := &tw.adv
	a.mu.Lock()
	a.ringing = true
	now := tw.now()
	if tw.queue.Next() <= now && now-a.lastHelp > 2*a.grace {
		tw.queue.SetGrace(0)
	}
	for tw.advanceLocked(now, chunk) {
		a.ringing = false
		a.mu.Unlock() // let a caller in between chunks, as poll does
		a.mu.Lock()
		a.ringing = true
		now = tw.now()
	}
	f := a.held
	a.held, a.ringing = nil, false
	a.mu.Unlock()
	tw.queue.Rearm()
	if f != nil {
		f()
	}
}

// take takes the bucket due at now from the queue, and moves its shard's time
// on to the bucket's expiration in the same hold of the shard's lock.
//
// Both in one hold, because callers arm timers on clock readings taken
// before they lock the shard, which may be older than the advancer's now: had
// the shard's time stayed behind the taken bucket until its flush, such a
// timer could be filed in a new bucket behind the taken one, which the flush
// then overtakes, leaving a queued bucket behind the current slot; a later
// rotation shares its index, files a timer due a whole wheel later into it
// while it is still queued for its old slot, and that timer fires early
// (TestStaleClockBehindATakenBucket). With the shard's time at the taken
// bucket's expiration, such a timer is due at once instead: its deadline is
// behind the advancer's clock, so that is not early either.
//
// Lock order is shard, then queue, as when an insert offers a bucket; a head
// that changes between the peek and the poll (an earlier bucket offered, or
// the head taken) is looked at again.
func (tw *TimingWheel) take(now time.Duration) (*bucket, bool) {
	for {
		h, ok := tw.queue.PeekDue(now)
		if !ok {
			return nil, false
		}
		s := h.shard
		s.mu.Lock()
		b, ok := tw.queue.PollDueIf(now, func(b *bucket) bool { return b == h })
		if ok {
			// Out of the queue for good: a Stop that empties it now
			// leaves it to its flush (see unlink). A vacant bucket, taken
			// at the head where an early alarm leaves one (see retire),
			// leaves the vacant list too: it is the flush's to release,
			// not release's to withdraw.
			s.currentTick = max(s.currentTick, b.expiration)
			b.expiration = noExpiration
			s.unlistVacant(b)
		}
		s.unlock()
		if ok {
			return b, true
		}
	}
}
