package delayqueue

import (
	"sync/atomic"
	"time"
)

// Abandoning a value: giving up on a queued value without the queue's lock.
//
// Remove takes the queue's lock, and a value's owner that empties it and
// fills it again (a timing wheel's bucket whose one timer is armed and
// stopped in turn) would take it twice per round. Abandon instead only marks
// the value, in its Slot, and leaves it queued; the queue drops an abandoned
// value when it becomes the head, before it publishes the head and arms the
// alarm for it, so the waiter never wakes for it; and the owner that wants
// the value back before then reclaims it, again without the lock, and finds
// it still queued at its old expiration, or dropped (then it offers it
// again).
//
// The head is the one value that cannot be abandoned this way: the alarm may
// already be armed for it. Abandon tells the two apart without the lock,
// from Next: the queue publishes a new head's expiration (next) before it
// reads the head's state, and Abandon writes the state before it reads next,
// both sequentially consistent atomics; so either the queue sees the value
// abandoned and drops it, or Abandon sees it at the head and reports false,
// and the owner removes it (Remove takes an abandoned value back too), or
// both, which is harmless.

// A Slot is what a value of a NewIndexed queue keeps for the queue: where it
// is in the queue, and whether its owner abandoned it. Its zero value is a
// value that is not queued. Only the queue reads and writes it.
type Slot struct {
	// pos is the value's position in the heap plus one, 0 while it is not
	// queued: written with the queue's lock held, whenever the value moves.
	pos int32
	// state is slotLive, slotAbandoned or slotDropped: written by Abandon
	// and Reclaim without the queue's lock, and by the queue with it.
	state atomic.Int32
}

const (
	slotLive      = iota // queued or not, as pos says
	slotAbandoned        // queued, given up by its owner: the queue drops it when it is the head
	slotDropped          // abandoned and dropped: out of the queue until it is reclaimed
)

// Abandon gives up on v, queued at expiration and not yet due, without
// taking the queue's lock: v stays queued, and the queue drops it when it
// becomes the head, before the waiter's alarm is armed for it. It reports
// false, leaving v abandoned, if v may already be the head (its expiration is
// not after Next): then the alarm may be armed for it, and the caller must
// Remove it to move the alarm on.
//
// Between Abandon and Reclaim (or Remove) the owner must not Offer v, and
// expiration must be the one v was offered at. Abandon panics on a queue made
// by New.
func (q *DelayQueue[T]) Abandon(v T, expiration time.Duration) bool {
	if q.slot == nil {
		panic("delayqueue: Abandon on a queue made by New, not NewIndexed")
	}
	q.slot(v).state.Store(slotAbandoned)
	return expiration > q.Next() // read after the store: see the protocol above
}

// Reclaim takes back v, abandoned: it reports true if v is still queued, at
// the expiration it had, and false if the queue dropped it, in which case v
// is out of the queue and may be offered again. Either way v is live again.
func (q *DelayQueue[T]) Reclaim(v T) bool {
	s := q.slot(v)
	if s.state.CompareAndSwap(slotAbandoned, slotLive) {
		return true
	}
	s.state.Store(slotLive) // dropped: the queue no longer touches it
	return false
}

// dropAbandonedLocked drops h, the head, if it is abandoned, and reports
// whether it did. Callers hold mu and have published h's expiration as next.
func (q *DelayQueue[T]) dropAbandonedLocked(h T) bool {
	if q.slot == nil {
		return false
	}
	if s := q.slot(h); s.state.Load() != slotAbandoned || !s.state.CompareAndSwap(slotAbandoned, slotDropped) {
		return false
	}
	q.pq.Pop()
	return true
}
