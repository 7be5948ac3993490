package delayqueue

import "time"

// funcAlarm is the alarm of a ringing queue (see Ring): a runtime timer that
// calls its function, as time.AfterFunc does. Its methods are called with
// the queue's lock held.
//
// It moves later by arming a timer it has not armed since it last rang (a
// new one, or the one that rang) and stopping the one armed, rather than by
// resetting the armed timer: the runtime takes a Reset of a timer in its
// heap as a reason to wake a thread to look at its timers (time.go's
// timer.modify: whenever no other timer of that heap was modified since
// the heap was last adjusted, earlier or later alike; with no thread in the
// network poller, wakep starts one), where arming a timer wakes one only if
// it is the heap's earliest, as time.AfterFunc does. The queue moves its
// alarm later every time its head leaves before it is due: a net/http
// server with 50 ms request deadlines, each its wheel's head while the
// request runs, used 1.075× the CPU of the same server on time.AfterFunc
// with Reset, 1.005× with a new timer at every move (medians of 5 rounds,
// bench/cmd/httpserver -deadline 50ms -conns 300). A timer stopped stays in
// the runtime's heap, as the runtime's own stopped timers do, until the
// runtime clears it; it is garbage then.
//
// Moving earlier, or arming after a ring or a Stop, resets the timer in
// place: the runtime then wakes a thread only as it would for a new timer
// due that early, and nothing is allocated, so that a timer alone in a
// wheel, armed and stopped in turn, allocates no runtime timer.
type funcAlarm struct {
	t     *time.Timer // nil until the first Set
	f     func()
	at    time.Time // t's deadline while armed
	armed bool      // t is set and has neither rung nor been stopped
}

func (a *funcAlarm) C() <-chan time.Time { return nil }

func (a *funcAlarm) Set(deadline time.Time) {
	if a.armed && deadline.After(a.at) {
		// Later: a timer of its own (see above). If the old one is ringing
		// now, its ring finds nothing due and rearms.
		a.t.Stop()
		a.t = nil
	}
	if a.t == nil {
		a.t = time.AfterFunc(time.Until(deadline), a.f)
	} else {
		a.t.Reset(time.Until(deadline))
	}
	a.at, a.armed = deadline, true
}

func (a *funcAlarm) Stop() {
	if a.t != nil {
		a.t.Stop()
	}
	a.armed = false
}

// rang notes that the timer rang: it is out of the runtime's heap, so the
// next Set resets it in place, whatever the deadline.
func (a *funcAlarm) rang() { a.armed = false }
