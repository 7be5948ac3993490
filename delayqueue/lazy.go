package delayqueue

import "time"

// An early alarm: on the System clock, the queue moves its alarm earlier at
// once, and later only for a take or an emptied head (below). When the head
// leaves or moves later otherwise (a value removed or offered later, the
// queue emptied), the alarm stays where it is; when it rings, the waiter or
// the ring function finds nothing due, and the alarm is set again, at the
// head then.
//
// The rule, with the bound it gives:
//
//   - The alarm is never late: it is set at or before the head's expiration
//     (plus the grace) whenever the queue's lock is free.
//   - A call that moves the head later, or empties the queue, touches no
//     runtime timer, but for a take and RemoveHead. A call that moves it
//     earlier than the alarm moves the alarm there, as time.Timer.Reset does
//     for a timer that becomes its heap's earliest.
//   - A head that comes earlier than the alarm by less than an eighth of
//     its own time to go (a deadline tightened a little, again and again)
//     sets the alarm that eighth earlier than the head, so that the next
//     such moves find it early already; one that comes earlier by more sets
//     it at the head, so that a value that stays rings once, when due.
//   - A value taken because it is due (PollDue) was the head the alarm is
//     set for, or later: the alarm, due by now or about to be, would ring
//     for nothing. So a take sets the alarm at the next head, later
//     included. Callers that take due values ahead of the alarm, tick after
//     tick, then pay one move of the runtime timer per take instead of
//     one ring per take (see docs/design/alarm.md, "takes").
//   - A head its owner emptied before it was due (RemoveHead: the wheel's
//     bucket whose last timer was stopped) is removed and the alarm moved to
//     the next head, later included, the first time a head at that
//     expiration is emptied; after that, a head at the same expiration stays
//     queued and the alarm where it is. So the alarm moves later this way at
//     most once per head expiration (once per tick for the wheel's nearest
//     buckets), a loop that arms and stops the head pays for it once per
//     expiration, not once per call, and a queue whose head is stopped now
//     and then (a light server's request deadlines) moves its alarm on
//     instead of ringing for nothing.
//   - The alarm rings at most once for each time it is set, and it is set
//     only when it rings, when a value is taken, when a head is emptied as
//     above, or when a head comes earlier than every head since it last
//     rang. So a value removed before it is due costs at most the one ring
//     its alarm was already set for, shared with every value removed while
//     it was set; a queue whose values are all removed in time rings at most
//     once per horizon (the time from a setting to the head it was set for),
//     however many values come and go.
//
// Why: moving a runtime timer later is not free. A new runtime timer, or a
// stopped one set again, wakes a thread whenever it becomes its P's
// earliest, and a Reset of one in a P's heap wakes one whenever no other
// timer of that heap was modified since the heap was last adjusted (Go's
// runtime/time.go: maybeAdd, modify, wakeNetPoller). A queue whose head is
// the value being offered and removed — a timer alone on its wheel, a
// context on an idle wheel — paid that on every call (a lone Reset to later
// at 6–8× the runtime's cost); an early alarm pays one ring per horizon
// instead. The measurements are in docs/design/alarm.md.
//
// Other clocks keep the alarm exactly at the head, so that tests can count
// wake-ups on a FakeClock; the rule above is tested there by setting early.

// marginLocked returns where to set an early alarm for a head due at want,
// earlier than the alarm is set: want itself, or an eighth of its time to go
// before it when want is less than that before the alarm (see above).
func (q *DelayQueue[T]) marginLocked(want time.Duration) time.Duration {
	if q.armedAt == Never || want == Never {
		return want
	}
	now := q.Now()
	if m := (want - now) / 8; m > 0 && q.armedAt-want <= m {
		return want - m
	}
	return want
}

// Early reports whether the queue's alarm may be early (see above): whether
// it is on the System clock. It never changes.
func (q *DelayQueue[T]) Early() bool { return q.early }

// tookLocked moves an early alarm to the head after a take, later included
// (see above).
func (q *DelayQueue[T]) tookLocked() {
	if want := q.wantLocked(); want != q.armedAt {
		q.setLocked(want)
	}
}

// RemoveHead removes v from an early queue (see Early) if v is the head,
// its expiration is expiration, and no head at that expiration was removed
// by RemoveHead before; it then moves the alarm to the next head, later
// included, and reports true. Otherwise it changes nothing and reports
// false: the owner keeps v queued, and the alarm may ring once for it, for
// nothing (see above). It is for a value emptied before it was due, whose
// owner would otherwise leave it queued. RemoveHead panics on a queue made
// by New, as Remove does.
func (q *DelayQueue[T]) RemoveHead(v T, expiration time.Duration) bool {
	if q.slot == nil {
		panic("delayqueue: RemoveHead on a queue made by New, not NewIndexed")
	}
	// Without the lock, the common answers: a loop that arms and stops the
	// head, after the first; a value that is not the head; an exact alarm.
	if time.Duration(q.movedLaterFor.Load()) == expiration || q.Next() != expiration || !q.early {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.slot(v).pos != 1 || time.Duration(q.movedLaterFor.Load()) == expiration {
		return false
	}
	q.movedLaterFor.Store(int64(expiration))
	q.pq.Remove(0)
	q.headChangedLocked(q.drop)
	q.tookLocked()
	return true
}
