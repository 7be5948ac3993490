package timingwheel

import "time"

// The Timer type represents a single event on a TimingWheel, as time.Timer
// does on the runtime's timers. When the Timer expires, the current time is
// sent on C, unless the Timer was created by AfterFunc or ScheduleFunc. A
// Timer must be created with a wheel's NewTimer, AfterFunc or ScheduleFunc
// (or the package-level forms); the zero Timer panics on Stop and Reset.
//
// Channel timers follow Go 1.23 semantics: after Stop or Reset returns, no
// value prepared before the call is received on C. Unlike time.Timer's, C has
// a capacity of one, so len(C) may report a value waiting.
type Timer struct {
	C <-chan time.Time

	// bucket, slot and due are protected by the wheel's mu; C, owner and f
	// never change after construction. The six words make a Timer 48 bytes,
	// the only allocation of an AfterFunc with a non-capturing f.
	owner *owner
	f     func()
	// bucket holds the timer at bucket.timers[slot]; it is nil when the timer
	// is in none: not yet started, fired, stopped, dropped by a stopped
	// wheel, or due too far ahead to ever fire.
	bucket *bucket
	slot   int
	due    due // the due tick and the state
}

// owner is what a Timer belongs to: its wheel, and for a ScheduleFunc timer
// its schedule. One-shot timers share their wheel's owner.
type owner struct {
	wheel    *TimingWheel
	schedule *schedule
}

func (t *Timer) state() timerState      { return t.due.state() }
func (t *Timer) setState(s timerState)  { t.due = makeDue(t.due.tick(), s) }
func (t *Timer) deadline() int64        { return t.due.tick() }
func (t *Timer) setDeadline(tick int64) { t.due = makeDue(tick, t.due.state()) }

func (t *Timer) kind() timerKind {
	switch {
	case t.C != nil:
		return kindChan
	case t.owner.schedule != nil:
		return kindSchedule
	default:
		return kindFunc
	}
}

// A timerState says what Stop and Reset must report. Every transition happens
// with wheel.mu held, which is what makes "Stop returned true" and "the
// callback ran" mutually exclusive: the poller moves a timer from statePending
// to stateFired, and Stop from statePending to stateStopped, and only one of
// them finds it pending. A timer being cascaded from one level to another stays
// statePending throughout, and the cascade is done under mu, so Stop never
// sees it between buckets.
type timerState uint8

const (
	// stateIdle: never started; only a Timer whose first arming was skipped.
	stateIdle timerState = iota
	// statePending: will fire unless stopped. It is in a bucket; or its wheel
	// has stopped, or its due tick is maxDueTick, and then it never fires
	// (Stop still reports true once).
	statePending
	// stateFired: its callback was handed to the executor, or its value sent
	// on C; for a schedule, its last run was.
	stateFired
	// stateStopped: a Stop returned true.
	stateStopped
)

type timerKind uint8

const (
	kindFunc     timerKind = iota // AfterFunc: f runs on the executor
	kindChan                      // NewTimer: f sends on C, with mu held
	kindSchedule                  // ScheduleFunc: runs of f, re-armed by the poller
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
	t := &Timer{owner: &tw.owner, f: f}
	tw.start(t, d)
	return t
}

// NewTimer creates a Timer that will send the current time on its channel
// after at least duration d on the wheel's clock.
func (tw *TimingWheel) NewTimer(d time.Duration) *Timer {
	c := make(chan time.Time, 1)
	t := &Timer{C: c, owner: &tw.owner}
	clock := tw.clock
	t.f = func() {
		select {
		case c <- clock.Now():
		default: // cannot happen: the buffer is drained before every re-arming
		}
	}
	tw.start(t, d)
	return t
}

// After waits for the duration to elapse on the wheel and then sends the
// current time on the returned channel. It is equivalent to NewTimer(d).C.
func (tw *TimingWheel) After(d time.Duration) <-chan time.Time {
	return tw.NewTimer(d).C
}

func (tw *TimingWheel) start(t *Timer, d time.Duration) {
	deadline := tw.deadlineAfter(d)
	tw.mu.Lock()
	run := tw.startLocked(t, deadline)
	tw.mu.Unlock()
	if run != nil {
		tw.exec.run(run)
	}
}

// Stop prevents the Timer from firing. It returns true if the call stops the
// timer, false if the timer has already expired or been stopped. For a
// ScheduleFunc timer, it returns true if it prevented any further run; a run
// handed to the executor but not yet begun then does not run either.
//
// For every arming of a timer, exactly one of "a Stop returned true" and "the
// timer fired" holds, even when Stop races the poller cascading the timer
// between levels. For a channel timer, Stop also discards a value sent but not
// yet received, and then returns true, as time.Timer.Stop does since Go 1.23.
//
// Stop does not wait for an AfterFunc callback that has already started.
// On a stopped wheel, Stop reports true once for a timer that was pending.
func (t *Timer) Stop() bool {
	if t.owner == nil {
		panic("timingwheel: Stop called on uninitialized Timer")
	}
	tw := t.owner.wheel
	tw.mu.Lock()
	stopped := t.state() == statePending
	if stopped {
		t.unlink()
		t.setState(stateStopped)
		if !tw.stopped {
			tw.pending--
		}
		tw.stoppedCount++
		if s := t.owner.schedule; s != nil {
			s.stopGen.Add(1)
		}
	}
	if t.C != nil && drain(t.C) {
		stopped = true
	}
	tw.mu.Unlock()
	return stopped
}

// Reset changes the timer to expire after duration d, measured from now. It
// returns true if the timer had been active (pending, or for a channel timer,
// fired with its value not yet received), false if the timer had expired or
// been stopped. On an AfterFunc timer that has fired, Reset schedules f to run
// again; on a ScheduleFunc timer, it moves the next run to after d and the
// schedule continues from there.
//
// As with Stop, after Reset returns no stale value is received on C.
func (t *Timer) Reset(d time.Duration) bool {
	if t.owner == nil {
		panic("timingwheel: Reset called on uninitialized Timer")
	}
	tw, sched := t.owner.wheel, t.owner.schedule
	ns := tw.targetAfter(d)
	deadline := tw.dueTick(ns, d)
	tw.mu.Lock()
	active := t.state() == statePending
	if active && t.bucket != nil && deadline >= t.deadline() {
		// Later, as an idle timeout re-armed on every read is: leave the
		// timer where it is. Its bucket expires no later than the old
		// deadline, and the flush then re-inserts it by the new one, so it
		// cannot fire early, and the common Reset touches no list.
		t.setDeadline(deadline)
		if sched != nil {
			sched.next = tw.epoch.Add(time.Duration(ns))
		}
		tw.mu.Unlock()
		return true
	}
	if active {
		t.unlink()
		if !tw.stopped {
			tw.pending--
		}
	}
	if t.C != nil && drain(t.C) {
		active = true
	}
	if sched != nil {
		sched.next = tw.epoch.Add(time.Duration(ns))
	}
	run := tw.startLocked(t, deadline)
	tw.mu.Unlock()
	if run != nil {
		tw.exec.run(run)
	}
	return active
}

func drain(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
