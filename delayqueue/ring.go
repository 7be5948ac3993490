package delayqueue

// Ringing: on the System clock, the alarm can be a runtime timer that starts
// a goroutine, as time.AfterFunc does, instead of a timer whose channel a
// waiter sleeps on; a timing wheel uses it so that a value due alone costs
// one goroutine, as a time.AfterFunc does (see the wheel's advance.go).

// Ring makes a queue on the System clock call ring, in a goroutine of its
// own as time.AfterFunc calls its f, when the head is due (plus the grace)
// and on Kick, instead of waking a waiter in Wait: so the runtime's timer
// starts the goroutine that takes the due values, and no goroutine sleeps
// for the queue. ring should take what is due and then call Rearm. Ring
// reports false, and changes nothing, for a queue on another clock; it must
// be called before the queue is used, and Wait must not be used after it.
func (q *DelayQueue[T]) Ring(ring func()) bool {
	if !q.system {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.alarm.Stop()
	q.ring = ring
	q.alarm = &funcAlarm{f: q.rung}
	q.armedAt = Never
	q.rearmLocked()
	return true
}

// rung is the alarm's function on a ringing queue: the alarm has rung, so
// it is disarmed until Rearm, and ring runs.
func (q *DelayQueue[T]) rung() {
	q.mu.Lock()
	q.armedAt = Never
	q.mu.Unlock()
	q.wakeups.Add(1)
	q.ring()
}

// Rearm sets the alarm at the head's expiration (plus the grace), after a
// ring: Wait does it itself.
func (q *DelayQueue[T]) Rearm() {
	q.mu.Lock()
	q.rearmLocked()
	q.mu.Unlock()
}
