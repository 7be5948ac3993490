// Package delayqueue is a generic delay queue: values offered with an
// expiration come out of Poll in expiration order, each no earlier than its
// expiration on the queue's Clock. It is the DelayQueue of Kafka's timer,
// written for one poller: the poller sleeps on a single reusable alarm until
// the head is due, and is woken early, without blocking the offerer, only
// when an offer moves the head earlier than the time it sleeps until.
//
// The queue knows nothing about what it holds; a timing wheel offers buckets.
package delayqueue

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/pq"
)

type entry[T any] struct {
	value      T
	expiration time.Time
}

// DelayQueue holds values until their expiration. Offer, Len and Clear are
// safe for concurrent use; at most one goroutine may be inside Poll at a time.
type DelayQueue[T any] struct {
	clock   Clock
	alarm   Alarm // used only by the poller
	armed   bool  // alarm set and not yet seen to fire; poller only
	wakeup  chan struct{}
	wakeups atomic.Uint64

	mu sync.Mutex // protects the fields below
	pq *pq.Queue[entry[T]]
	// sleeping is true while the poller waits; sleepUntil is the head's
	// expiration it waits for, or the zero Time if the queue was empty. An
	// Offer signals wakeup only if it moves that point earlier, and then
	// clears sleeping so a sleep is interrupted at most once.
	sleeping   bool
	sleepUntil time.Time
}

// New returns an empty queue on clock, or on System if clock is nil.
func New[T any](clock Clock) *DelayQueue[T] {
	if clock == nil {
		clock = System
	}
	return &DelayQueue[T]{
		clock:  clock,
		alarm:  clock.NewAlarm(),
		wakeup: make(chan struct{}, 1),
		pq: pq.New(func(a, b entry[T]) bool {
			return a.expiration.Before(b.expiration)
		}, nil),
	}
}

// Offer adds v to come out of Poll once the clock reaches expiration. It never
// blocks on the poller.
func (q *DelayQueue[T]) Offer(v T, expiration time.Time) {
	q.mu.Lock()
	q.pq.Push(entry[T]{value: v, expiration: expiration})
	if q.sleeping && (q.sleepUntil.IsZero() || expiration.Before(q.sleepUntil)) {
		q.sleeping = false
		select {
		case q.wakeup <- struct{}{}:
		default:
		}
	}
	q.mu.Unlock()
}

// Poll waits until the head of the queue is due, removes it and returns it.
// It returns ok false, at once, when exit is closed.
func (q *DelayQueue[T]) Poll(exit <-chan struct{}) (v T, ok bool) {
	for {
		q.mu.Lock()
		head, nonEmpty := q.pq.Peek()
		if nonEmpty && !q.clock.Now().Before(head.expiration) {
			q.pq.Pop()
			q.mu.Unlock()
			return head.value, true
		}
		if nonEmpty {
			q.sleepUntil = head.expiration
			q.alarm.Set(head.expiration)
			q.armed = true
		} else {
			q.sleepUntil = time.Time{}
			if q.armed {
				q.alarm.Stop()
				q.armed = false
			}
		}
		select { // a signal meant for an earlier sleep
		case <-q.wakeup:
		default:
		}
		q.sleeping = true
		q.mu.Unlock()

		select {
		case <-q.wakeup:
		case <-q.alarm.C():
			q.armed = false
		case <-exit:
			q.mu.Lock()
			q.sleeping = false
			q.mu.Unlock()
			return v, false
		}
		q.wakeups.Add(1)
		q.mu.Lock()
		q.sleeping = false
		q.mu.Unlock()
	}
}

// PollDue removes and returns the head if it is due now; it never waits.
func (q *DelayQueue[T]) PollDue() (v T, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	head, nonEmpty := q.pq.Peek()
	if !nonEmpty || q.clock.Now().Before(head.expiration) {
		return v, false
	}
	q.pq.Pop()
	return head.value, true
}

// Len reports the number of values waiting.
func (q *DelayQueue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pq.Len()
}

// Clear drops every value and releases the queue's storage.
func (q *DelayQueue[T]) Clear() {
	q.mu.Lock()
	q.pq.Clear()
	q.mu.Unlock()
}

// Wakeups reports how many times Poll has woken from a sleep: for an alarm, an
// earlier offer, or a stale alarm value. A queue whose head is not due and
// that receives no earlier offer does not wake.
func (q *DelayQueue[T]) Wakeups() uint64 { return q.wakeups.Load() }
