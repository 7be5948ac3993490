package timingwheel

// Stats is a snapshot of a wheel's counters, summed over its shards.
type Stats struct {
	Pending int // timers that will fire unless stopped (Len)
	// Fired counts expirations: AfterFunc callbacks handed over to run,
	// values sent on a channel timer's C, runs of schedules, and every tick
	// of a Ticker that came due, including the ticks dropped because the
	// receiver had not taken the one before (C was full, and the tick was
	// not sent, as time.Ticker drops it). So Fired can exceed the values
	// received; ticks skipped without coming due (a stall, or a receiver
	// that left C full for several ticks, see NewTicker) are not counted.
	Fired   uint64
	Stopped uint64 // Stop calls that prevented a fire (not those that only discarded a value on C)
	Dropped uint64 // timers pending when the wheel stopped
	// Skipped counts the runs of SkipIfStillRunning schedules skipped
	// because the schedule's previous run had not returned; they are not
	// in Fired.
	Skipped uint64
	// Collected counts channel timers that were pending when their channel
	// became unreachable: they were released without firing, as nobody
	// could receive their value.
	Collected uint64
	// Wakeups counts the times the poller woke: its alarm rang for a due
	// bucket that no caller had flushed (on time on an idle wheel, one grace
	// late while callers advance it; a caller may still take the bucket
	// first), or, on the System clock, rang early and found nothing due (at
	// most once per setting of the alarm: see delayqueue's lazy.go), or a
	// caller kicked it to finish a bucket it left half flushed (see the
	// package documentation). It stays near zero while callers keep
	// up: 0.9% of the ticks in the purgatory load of docs/BENCHMARKS.md.
	Wakeups uint64
	// Collisions counts the arming calls (AfterFunc, NewTimer, NewTicker,
	// the contexts, Keyed) that found the shard of their P (see the package
	// documentation) held by another goroutine and armed their timer on
	// another shard: how often callers meet. The parallel AfterFunc+Stop
	// benchmark of this repository reports it per operation (collisions/op
	// in the scaling section of docs/BENCHMARKS.md).
	Collisions uint64
	// Levels is the most levels any shard holds now; a level is created
	// when a timer first needs it and released when it empties.
	Levels int
}

// counters are a shard's part of Stats. They are changed only through the
// methods below, each with the shard's mu held, and not at all once the
// shard has stopped (pending is then zero, and later arms are not counted).
type counters struct {
	pending                                                 int
	fired, skipped, stopped, dropped, collected, collisions uint64
}

func (s *shard) noteArmed() { s.counters.pending++ }

// noteFired counts one expiration; final says the timer is no longer pending
// (a one-shot timer, or a schedule's last run).
func (s *shard) noteFired(final bool) {
	s.counters.fired++
	if final {
		s.counters.pending--
	}
}

// noteSkipped counts a schedule's run skipped by SkipIfStillRunning; final
// is as for noteFired.
func (s *shard) noteSkipped(final bool) {
	s.counters.skipped++
	if final {
		s.counters.pending--
	}
}

// noteDisarmed counts a pending timer taken out by Reset, to be armed again.
func (s *shard) noteDisarmed() {
	if !s.stopped {
		s.counters.pending--
	}
}

// noteStopped counts a Stop that prevented a fire, also on a stopped wheel.
func (s *shard) noteStopped() {
	s.noteDisarmed()
	s.counters.stopped++
}

func (s *shard) noteCollected() {
	if !s.stopped {
		s.counters.pending--
		s.counters.collected++
	}
}

// noteCollision counts an arming that moved to this shard because its P's
// shard was held.
func (s *shard) noteCollision() { s.counters.collisions++ }

// noteDropped moves every pending timer to dropped as the wheel stops.
func (s *shard) noteDropped() {
	s.counters.dropped += uint64(s.counters.pending)
	s.counters.pending = 0
}

// Stats returns the wheel's counters. It locks every shard at once, so the
// totals are one consistent snapshot.
func (tw *TimingWheel) Stats() Stats {
	st := Stats{Wakeups: tw.queue.Wakeups()}
	tw.lockAll()
	for i := range tw.shards {
		s := &tw.shards[i]
		st.Pending += s.counters.pending
		st.Fired += s.counters.fired
		st.Skipped += s.counters.skipped
		st.Stopped += s.counters.stopped
		st.Dropped += s.counters.dropped
		st.Collected += s.counters.collected
		st.Collisions += s.counters.collisions
		st.Levels = max(st.Levels, len(s.levels))
	}
	tw.unlockAll()
	return st
}

// Len reports the number of pending timers: those that will fire unless
// stopped. It is exact (a snapshot of every shard at once) and zero once the
// wheel has stopped.
func (tw *TimingWheel) Len() int {
	n := 0
	tw.lockAll()
	for i := range tw.shards {
		n += tw.shards[i].counters.pending
	}
	tw.unlockAll()
	return n
}
