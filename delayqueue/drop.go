package delayqueue

// Dropping a head: letting the owner decide, before the alarm is armed for
// a new head, that it is not worth waking for.
//
// A timing wheel's bucket can empty before it is due (its timers were all
// stopped) while other buckets are due before it. Removing it then takes
// the queue's lock; leaving it queued costs the waiter a wake-up for
// nothing when it reaches the head, unless the queue asks first. DropIf
// gives the queue that question: whenever a value becomes the head, the
// queue calls drop(head) with its lock held, and a value drop reports true
// for leaves the queue at once, before the alarm is armed for it. So the
// owner can leave an emptied value queued without taking the queue's lock,
// and no alarm is set for it.
//
// drop runs with the queue's lock held, so it must not call the queue, and
// it must not block: an owner that cannot tell at once (its own lock is
// held by another goroutine) reports false, arranges for the holder to ask
// again with Recheck, and the alarm is armed meanwhile.

// DropIf makes the queue call drop for every value that becomes the head,
// before it publishes the head or arms the alarm for it, and drop the value
// (take it out, as Remove would, without moving the alarm for it) while
// drop reports true. drop is called with the queue's lock held: it must not
// call the queue or block. DropIf must be called before the queue is used;
// it panics on a queue made by New.
func (q *DelayQueue[T]) DropIf(drop func(T) bool) {
	if q.slot == nil {
		panic("delayqueue: DropIf on a queue made by New, not NewIndexed")
	}
	q.drop = drop
}

// Recheck looks at the head again, as when it changes: it drops the head
// while drop reports true, then publishes the head left and moves the alarm
// to it. An owner calls it when the default drop (see DropIf) could not
// decide for a head earlier; drop is what the caller can tell now, nil for
// the default, and is called with the queue's lock held: it must not call
// the queue or block.
func (q *DelayQueue[T]) Recheck(drop func(T) bool) {
	if drop == nil {
		drop = q.drop
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.headChangedLocked(drop) // the alarm is touched only if the head changed
}
