package timingwheel

import "time"

// The Timer type represents a single event on a TimingWheel, as time.Timer
// does on the runtime's timers. When the Timer expires, the current time is
// sent on C, unless the Timer was created by AfterFunc or ScheduleFunc. A
// Timer must be created with a wheel's NewTimer, AfterFunc or ScheduleFunc
// (or the package-level forms); the zero Timer panics on Stop and Reset.
//
// Channel timers follow Go 1.23 semantics: after Stop or Reset returns, no
// value prepared before the call is received on C, and a channel timer that
// nothing references any more is released by the garbage collector before
// it fires. Unlike time.Timer's, C has a capacity of one, so len(C) may
// report a value waiting.
type Timer struct {
	C <-chan time.Time

	// bucket, slot, due and state are protected by the mu of the timer's
	// shard; C, owner and f never change after construction. The six words
	// make a Timer 48 bytes, the only allocation of an AfterFunc with a
	// non-capturing f.
	owner *owner
	f     func()
	// bucket holds the timer at index slot (see block.go); it is nil when the timer
	// is in none: not yet started, fired, stopped, dropped by a stopped
	// wheel, or due never.
	bucket *bucket
	due    int64 // the tick at which it fires, or never
	slot   uint32
	state  timerState
	// drops counts a Ticker node's consecutive ticks dropped for a full C
	// (see rearmTickerLocked); it sits in what would be padding, so the
	// Timer stays 48 bytes.
	drops uint8
}

// owner is what a Timer belongs to: its shard, and for a ScheduleFunc timer
// its schedule, for a NewTimer its entry in the wheel. One-shot AfterFunc
// timers share their shard's owner.
type owner struct {
	shard    *shard
	schedule *schedule
	// node holds the Timer the wheel keeps in its buckets for a channel
	// timer or a Ticker (see chantimer.go); ch is its channel, held strongly
	// while the timer is due soon, weakly once it may not be.
	node *chanTimer
	ch   chanRef
}

// entry returns the Timer that is in the wheel's buckets for t, whose owner
// o is: t itself, or for a channel timer the node that stands for it.
func (o *owner) entry(t *Timer) *Timer {
	if n := o.node; n != nil {
		return &n.node
	}
	return t
}

func (t *Timer) kind() timerKind {
	switch {
	case t.owner.node != nil:
		return kindChan
	case t.owner.schedule != nil:
		return kindSchedule
	default:
		return kindFunc
	}
}

// A timerState says what Stop and Reset must report. Every transition happens
// with the shard's mu held, which is what makes "Stop returned true" and "the
// callback ran" mutually exclusive: the advancer moves a timer from
// statePending to stateFired, and Stop from statePending to stateStopped, and
// only one of them finds it pending. A timer being cascaded from one level to
// another stays statePending throughout, and the cascade is done under mu, so
// Stop never sees it between buckets.
type timerState uint8

const (
	// stateIdle: never started: the zero value, which every constructor
	// replaces (ScheduleFunc panics rather than return an idle Timer).
	//lint:ignore U1000 named for the state machine's documentation
	stateIdle timerState = iota
	// statePending: will fire unless stopped. It is in a bucket; or its wheel
	// has stopped, or it is due never, and then it never fires (Stop still
	// reports true once).
	statePending
	// stateFired: its callback was handed to the executor, or its value sent
	// on C; for a schedule, its last run was.
	stateFired
	// stateStopped: a Stop returned true, or its channel was collected.
	stateStopped
)

type timerKind uint8

const (
	kindFunc     timerKind = iota // AfterFunc: f runs on the executor
	kindChan                      // NewTimer and NewTicker: the node sends on C, with mu held
	kindSchedule                  // ScheduleFunc: runs of f, re-armed by the advancer
)

// AfterFunc waits for the duration to elapse on the wheel and then calls f in
// its own goroutine (or as WithWorkerPool or WithInlineCallbacks say). It
// returns a Timer that can be used to cancel the call using its Stop method.
// The returned Timer's C field is not used and will be nil.
//
// f never starts before d has elapsed on the wheel's clock, and at most about
// one tick after (plus scheduling delay). A d <= 0 runs f promptly, never on
// the caller's goroutine. AfterFunc on a stopped wheel returns a Timer that
// never fires. A nil f panics.
func (tw *TimingWheel) AfterFunc(d time.Duration, f func()) *Timer {
	if f == nil {
		panic("timingwheel: AfterFunc called with nil func")
	}
	t := &Timer{f: f}
	tw.start(t, d)
	return t
}

// afterFuncAt is AfterFunc with the clock read by the caller: wheel time now.
func (tw *TimingWheel) afterFuncAt(d time.Duration, f func(), now time.Duration) *Timer {
	if f == nil {
		panic("timingwheel: AfterFunc called with nil func")
	}
	t := &Timer{f: f}
	tw.startDue(t, tw.dueAfter(now, d), now)
	return t
}

// start puts t, which is new, in the calling P's shard, arms it for d, then
// helps advance the wheel. t's owner is nil, for a one-shot AfterFunc timer,
// which takes its shard's owner, or its own, whose shard start sets.
func (tw *TimingWheel) start(t *Timer, d time.Duration) {
	now := tw.now()
	tw.startDue(t, tw.dueAfter(now, d), now)
}

// startDue is start for a timer due at the tick due, armed at wheel time
// now.
func (tw *TimingWheel) startDue(t *Timer, due int64, now time.Duration) {
	tw.startOwing(t, due, now, nil)
}

// startOwing is startDue, which also makes owe, the node of a channel timer
// or Ticker that t is, owed to the sweep if it is still pending (see
// weakdefer.go).
func (tw *TimingWheel) startOwing(t *Timer, due int64, now time.Duration, owe *chanTimer) {
	s := tw.lockShard()
	if t.owner == nil {
		t.owner = &s.owner
	} else {
		t.owner.shard = s
	}
	run := s.startLocked(t, due, now)
	if owe != nil && t.state == statePending {
		s.oweLocked(owe)
	}
	s.mu.Unlock()
	if s.recheck.Load() { // s.unlock, written out: it is too big to inline
		s.recheckOwed()
	}
	if run != nil {
		tw.exec.run(run)
	}
	tw.help(now)
}

// Stop prevents the Timer from firing. It returns true if the call stops the
// timer, false if the timer has already expired or been stopped. For a
// ScheduleFunc timer, it returns true if it prevented any further run; a run
// handed to the executor but not yet begun then does not run either.
//
// For every arming of a timer, exactly one of "a Stop returned true" and "the
// timer fired" holds, even when Stop races the advancer cascading the timer
// between levels. For a channel timer, Stop also discards a value sent but not
// yet received, and then returns true, as time.Timer.Stop does since Go 1.23.
//
// Stop does not wait for an AfterFunc callback that has already started, and
// does not advance the wheel (it reads no clock). On a stopped wheel, Stop
// reports true once for a timer that was pending.
func (t *Timer) Stop() bool {
	o := t.owner
	if o == nil {
		panic("timingwheel: Stop called on uninitialized Timer")
	}
	e, s := o.entry(t), o.shard
	s.mu.Lock()
	stopped := s.stopLocked(e)
	if t.C == nil { // an AfterFunc timer: no channel, so no collector either
		s.mu.Unlock()
		if s.recheck.Load() { // s.unlock, written out: it is too big to inline
			s.recheckOwed()
		}
		return stopped
	}
	if drain(t.C) {
		stopped = true
	}
	collector := e.detachCollectorLocked()
	s.unlock()
	stopCollector(collector, t.C)
	return stopped
}

// stopLocked stops e, which is in s, if it is pending, and reports whether
// it was.
func (s *shard) stopLocked(e *Timer) bool {
	if e.state != statePending {
		return false
	}
	e.unlink(true)
	e.state = stateStopped
	s.noteStopped()
	if sched := e.owner.schedule; sched != nil {
		sched.stopGen.Add(1)
	}
	return true
}

// Reset changes the timer to expire after duration d, measured from now. It
// returns true if the timer had been active (pending, or for a channel timer,
// fired with its value not yet received), false if the timer had expired or
// been stopped.
//
// For a timer created with AfterFunc(d, f), Reset either reschedules when f
// will run, and returns true: f then never runs for the earlier setting; or,
// if f has already been handed over to run, schedules f to run again, and
// returns false. A Reset racing the firing is one or the other, never both:
// it moves the pending f, or it finds f handed over, lets it run, and arms
// the timer again. As with time.Timer.Reset, Reset does not wait for the
// prior f to complete before returning, and does not guarantee that the f it
// schedules does not run concurrently with the prior one (with d <= 0 it is
// handed over at once). A caller that needs to know whether the prior f has
// completed must coordinate with f explicitly.
//
// On a ScheduleFunc timer, Reset moves the next run to after d and the
// schedule continues from there.
//
// For a channel timer, as with Stop, no value for the earlier setting is
// received from C after Reset returns (package time's behaviour since Go
// 1.23).
func (t *Timer) Reset(d time.Duration) bool {
	o := t.owner
	if o == nil {
		panic("timingwheel: Reset called on uninitialized Timer")
	}
	return t.reset(o, d, o.shard.wheel.now())
}

// resetAt is Reset with the clock read by the caller: wheel time now.
func (t *Timer) resetAt(d, now time.Duration) bool { return t.reset(t.owner, d, now) }

// reset is Reset with t's owner o, which is also its entry's, loaded once.
func (t *Timer) reset(o *owner, d, now time.Duration) bool {
	e := o.entry(t)
	s, sched := o.shard, o.schedule
	tw := s.wheel
	due := tw.dueAfter(now, d)
	s.mu.Lock()
	if sched != nil {
		due = sched.resetLocked(tw, now, d, due)
	}
	if ct := o.node; ct != nil && d > strongHorizon {
		s.rearmWeakLocked(ct) // before the node may sit in a bucket past the horizon
	}
	active := e.state == statePending
	if b := e.bucket; active && b != nil && (b.holds(due, e.due) || b.files(due)) {
		// No earlier than its bucket expires, as an idle timeout re-armed
		// on every read is, or into the bucket it is in: leave the timer
		// where it is. The flush of its bucket re-inserts it by its due
		// tick, so it cannot fire early, and most Resets touch no bucket.
		old := e.due
		e.due = due
		b.noteDue(e)
		switch {
		case due < b.expiration: // files: the bucket comes earlier with it
			b.expiration = b.earlyExpiration(due)
			tw.queue.Offer(b, tw.startOf(b.expiration))
		case due > old && b.nearExpiration(old) && !b.nearExpiration(due):
			b.retarget()
		}
		s.mu.Unlock()
		if s.recheck.Load() { // s.unlock, written out: it is too big to inline
			s.recheckOwed()
		}
		tw.help(now)
		return true
	}
	if active {
		e.unlink(false)
		s.noteDisarmed()
	}
	if t.C != nil && drain(t.C) {
		active = true
	}
	run := s.startLocked(e, due, now)
	s.unlock()
	if run != nil {
		tw.exec.run(run)
	}
	tw.help(now)
	return active
}

// addDuration returns now+d, saturating at math.MaxInt64 instead of wrapping.
func addDuration(now, d time.Duration) time.Duration {
	if d > 0 && now > never-d {
		return never
	}
	return now + d
}

func drain(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
