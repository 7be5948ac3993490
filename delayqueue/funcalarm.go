package delayqueue

import (
	"sync/atomic"
	"time"
)

// funcAlarm is the alarm of a ringing queue (see Ring): a runtime timer
// that calls its function, as time.AfterFunc does. Its methods are called
// with the queue's lock held. The queue only moves it earlier, or sets it
// again after it rang (see lazy.go).
//
// A timer that rang is out of the runtime's heap, and is set again in place
// (time.Timer.Reset adds it, O(log n) in its P's heap), so that a queue
// whose alarm rings and is set again allocates nothing. A timer that may
// still be in the heap (armed, or stopped: the runtime leaves a stopped
// timer in its heap until it reaches the top) is never Reset: the runtime
// only marks such a timer modified and fixes its heap when the modified
// time comes, by walking the whole heap of its P (runtime.(*timers).adjust),
// every runtime timer of the process that P holds. Such a timer is stopped
// and a new one takes its place instead: an allocation for each move of an
// armed alarm, which the early alarm makes rare (docs/design/alarm.md,
// "Never Reset an armed alarm").
type funcAlarm struct {
	cur *alarmTimer // nil until the first Set
	f   func()
}

// alarmTimer is one runtime timer of a funcAlarm, and whether it rang
// since it was last armed (set by its own function, before the alarm's).
type alarmTimer struct {
	t    *time.Timer
	rang atomic.Bool
}

func (a *funcAlarm) C() <-chan time.Time { return nil }

func (a *funcAlarm) Set(deadline time.Time) {
	d := time.Until(deadline)
	if c := a.cur; c != nil && c.rang.Load() {
		// Out of the heap: its function has started, after the runtime
		// took it out. (One that fired but whose function has not yet
		// started reads as armed, and is replaced: its ring comes late,
		// for nothing, as a stale ring may; the queue re-reads its head.)
		c.rang.Store(false)
		c.t.Reset(d)
		return
	}
	if a.cur != nil {
		a.cur.t.Stop()
	}
	c := &alarmTimer{}
	c.t = time.AfterFunc(d, func() {
		c.rang.Store(true)
		a.f()
	})
	a.cur = c
}

func (a *funcAlarm) Stop() {
	if a.cur != nil {
		a.cur.t.Stop() // in the heap, maybe, until it reaches the top
	}
}
