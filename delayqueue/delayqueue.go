// Package delayqueue is a generic delay queue: values offered with an
// expiration come out of PollDue in expiration order, each no earlier than its
// expiration on the queue's Clock. It is the DelayQueue of Kafka's timer,
// written for a process where many goroutines can take due values:
//
//   - Anyone may take what is due with PollDue, without waiting. The head's
//     expiration is readable without the lock (Next), so a goroutine can check
//     for due work for the price of an atomic load.
//   - One waiter (a poller) sleeps in Wait on a single reusable alarm, which
//     the queue keeps armed at the head's expiration: every Offer that makes a
//     new head, and every PollDue that removes one, moves the alarm there
//     directly. So the waiter is woken only when something is due, never to
//     re-arm its alarm, and not at all while others take the due values first.
//   - On the System clock, Ring replaces the waiter with a function the
//     alarm runs on a goroutine of its own, as time.AfterFunc does: then no
//     goroutine sleeps for the queue.
//   - SetGrace lets the alarm ring a little after the head is due, for a
//     process whose own goroutines usually take due values in time: the
//     waiter then stays asleep while they keep up.
//   - A queue made with NewIndexed can Remove a value before it is due, and
//     moves the alarm on when that value was the head: no alarm is set for
//     a value withdrawn in time (on the System clock one already set stays
//     and may ring once, see lazy.go). Its owner can also leave an emptied value queued
//     and have the queue ask, with DropIf, whether each new head is still
//     worth waking for: one that is not is dropped before the alarm is armed
//     for it (see drop.go).
//
// Times are durations since the queue's epoch (the Clock's reading at New), so
// the head fits in one atomic word.
//
// The queue knows nothing about what it holds; a timing wheel offers buckets.
package delayqueue

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/pq"
)

// Never is the expiration of nothing: Next reports it for an empty queue.
const Never = time.Duration(math.MaxInt64)

type entry[T any] struct {
	value      T
	expiration time.Duration
}

func earlier[T any](a, b entry[T]) bool { return a.expiration < b.expiration }

// DelayQueue holds values until their expiration. All methods are safe for
// concurrent use, except that at most one goroutine may be inside Wait at a
// time.
type DelayQueue[T any] struct {
	clock   Clock
	system  bool      // clock is System: read it with time.Since
	epoch   time.Time // the clock's reading at New; carries the monotonic reading on System
	alarm   Alarm
	kick    chan struct{} // Kick's signal to the waiter; capacity 1
	wakeups atomic.Uint64
	next    atomic.Int64 // the head's expiration, or Never; written with mu held
	grace   atomic.Int64

	mu sync.Mutex // protects the fields below, and orders every use of alarm
	pq *pq.Queue[entry[T]]
	// slot, for a NewIndexed queue, returns the Slot each value keeps for
	// the queue (see Slot).
	slot func(T) *Slot
	// drop, set by DropIf, says whether a new head is to be dropped.
	drop func(T) bool
	// armedAt is what the alarm is set to, or Never when it is disarmed or
	// has rung. Invariant, whenever mu is free: armedAt is at or before the
	// head's expiration plus the grace in force when it was set, or Never
	// for an empty queue; on a queue that is not early (see lazy.go) it is
	// exactly that.
	armedAt time.Duration
	// early lets the alarm stay set before the head (see lazy.go).
	early bool
	// ring, set by Ring, is called instead of waking a waiter.
	ring func()
	// movedLaterFor is the expiration of the last head RemoveHead took,
	// written with mu held (see lazy.go); Never before the first.
	movedLaterFor atomic.Int64
}

// New returns an empty queue on clock, or on System if clock is nil. Its
// epoch, from which every expiration is measured, is the clock's time now.
func New[T any](clock Clock) *DelayQueue[T] {
	if clock == nil {
		clock = System
	}
	q := &DelayQueue[T]{
		clock:   clock,
		system:  clock == System,
		epoch:   clock.Now(),
		alarm:   clock.NewAlarm(),
		kick:    make(chan struct{}, 1),
		armedAt: Never,
		early:   clock == System,
		pq:      pq.New(earlier[T]),
	}
	q.next.Store(int64(Never))
	q.movedLaterFor.Store(int64(Never))
	return q
}

// A Slot is what a value of a NewIndexed queue keeps for the queue: its
// position in the queue's heap plus one, 0 while it is not queued, written
// with the queue's lock held. Its zero value is a value that is not queued.
// Only the queue reads and writes it.
type Slot struct{ pos int32 }

// NewIndexed is New for values that can be removed before they are due (see
// Remove and DropIf). slot(v) must return the address of a Slot that v
// keeps for the queue, the zero Slot when v is made; only the queue reads and
// writes it. A value is in the queue at most once: Offer of a queued value
// moves it.
func NewIndexed[T any](clock Clock, slot func(T) *Slot) *DelayQueue[T] {
	if slot == nil {
		panic("delayqueue: NewIndexed called with nil slot")
	}
	q := New[T](clock)
	q.slot = slot
	q.pq = pq.NewIndexed(earlier[T], func(e entry[T], i int) { slot(e.value).pos = int32(i + 1) })
	return q
}

// Epoch returns the clock time from which the queue measures expirations.
func (q *DelayQueue[T]) Epoch() time.Time { return q.epoch }

// Now returns the clock's time since the epoch. On System it reads only the
// monotonic clock. A clock that reads before the epoch gives 0. Now panics if
// the clock reads math.MaxInt64 ns (292 years) or more past the epoch, which
// the queue cannot represent; no real clock gets there, and FakeClocks refuse
// to.
func (q *DelayQueue[T]) Now() time.Duration {
	var d time.Duration
	if q.system {
		d = time.Since(q.epoch)
	} else {
		d = q.clock.Now().Sub(q.epoch)
	}
	if d == Never {
		panic(fmt.Sprintf("delayqueue: the clock reads %v, at least 292 years past the queue's epoch %v",
			q.clock.Now(), q.epoch))
	}
	return max(d, 0)
}

// Offer adds v, to be taken once the clock reaches expiration (a duration
// since the epoch). On a NewIndexed queue that holds v already, it moves v to
// the new expiration instead. Offer never blocks on the waiter.
func (q *DelayQueue[T]) Offer(v T, expiration time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e := entry[T]{value: v, expiration: expiration}
	if q.slot != nil {
		if i := int(q.slot(v).pos) - 1; i >= 0 {
			q.pq.Set(i, e)
			if q.slot(v).pos == 1 { // it is the head: the owner offers what it wants woken for
				q.next.Store(int64(expiration))
				q.rearmLocked()
			} else if i == 0 { // it was: a new head
				q.headChangedLocked(q.drop)
			}
			return
		}
	}
	q.pq.Push(e)
	if expiration < time.Duration(q.next.Load()) {
		q.next.Store(int64(expiration))
		q.rearmLocked()
	}
}

// Next returns the head's expiration, or Never if the queue is empty, without
// taking the queue's lock. It may be stale by the time it is used; PollDue
// decides.
func (q *DelayQueue[T]) Next() time.Duration { return time.Duration(q.next.Load()) }

// PollDue removes and returns the head if its expiration is at or before now
// (a duration since the epoch, normally Now()); it never waits.
func (q *DelayQueue[T]) PollDue(now time.Duration) (v T, ok bool) {
	return q.PollDueIf(now, nil)
}

// PeekDue returns the head, without removing it, if its expiration is at or
// before now. Another caller may take it before this one acts on it: take it
// with PollDueIf(now, is) where is recognises it.
func (q *DelayQueue[T]) PeekDue(now time.Duration) (v T, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	head, ok := q.pq.Peek()
	if !ok || head.expiration > now {
		return v, false
	}
	return head.value, true
}

// PollDueIf is PollDue, except that it removes the head only if is(head)
// also holds (a nil is holds for every value): a caller that prepared for
// the value PeekDue returned (say, by taking a lock of its own) takes exactly
// that value or nothing. is runs with the queue's lock held: it must not
// call the queue.
func (q *DelayQueue[T]) PollDueIf(now time.Duration, is func(T) bool) (v T, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	head, ok := q.pq.Peek()
	if !ok || head.expiration > now || is != nil && !is(head.value) {
		return v, false
	}
	q.pq.Pop()
	q.headChangedLocked(q.drop)
	if q.early {
		q.tookLocked()
	}
	return head.value, true
}

// Remove takes v out of a NewIndexed queue before it is due, and reports
// whether it was there. When v was the head, the alarm moves on to the next
// head (or is disarmed), so the waiter does not wake for v. Remove panics
// on a queue made by New.
func (q *DelayQueue[T]) Remove(v T) bool {
	if q.slot == nil {
		panic("delayqueue: Remove on a queue made by New, not NewIndexed")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	i := int(q.slot(v).pos) - 1
	if i < 0 {
		return false
	}
	q.pq.Remove(i)
	if i == 0 {
		q.headChangedLocked(q.drop)
	}
	return true
}

// headChangedLocked drops the head while drop (nil: none) says so (see
// DropIf), publishes the expiration of the head left, and moves the alarm
// to it.
func (q *DelayQueue[T]) headChangedLocked(drop func(T) bool) {
	next := Never
	for {
		h, ok := q.pq.Peek()
		if !ok {
			break
		}
		if drop == nil || !drop(h.value) {
			next = h.expiration
			break
		}
		q.pq.Pop()
	}
	q.next.Store(int64(next))
	q.rearmLocked()
}

// Wait blocks until the head is due (plus the grace, see SetGrace), Kick is
// called, or exit is closed; it reports false for exit. It takes nothing from
// the queue: the caller follows it with PollDue. A Wait may return when
// others have already taken what was due.
func (q *DelayQueue[T]) Wait(exit <-chan struct{}) bool {
	q.mu.Lock()
	q.rearmLocked() // the alarm may have rung for an earlier Wait
	q.mu.Unlock()
	select {
	case <-q.alarm.C():
		q.mu.Lock()
		q.armedAt = Never // rung: the next Wait sets it again
		q.mu.Unlock()
	case <-q.kick:
	case <-exit:
		return false
	}
	q.wakeups.Add(1)
	return true
}

// Kick makes the waiter's current or next Wait return now, or on a queue
// that rings (see Ring) calls the ring function in a goroutine of its own.
// It never blocks.
func (q *DelayQueue[T]) Kick() {
	if q.ring != nil {
		go q.rung()
		return
	}
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// SetGrace makes the alarm ring g after the head's expiration (g < 0 counts
// as 0, the default: at the expiration), moving it now if g changes.
func (q *DelayQueue[T]) SetGrace(g time.Duration) {
	g = max(g, 0)
	if time.Duration(q.grace.Load()) == g {
		return
	}
	q.mu.Lock()
	q.grace.Store(int64(g))
	q.rearmLocked()
	q.mu.Unlock()
}

// rearmLocked moves the alarm to the head's expiration plus the grace, or
// disarms it for an empty queue, touching the alarm only if that changes it;
// an early alarm only moves earlier (see lazy.go).
func (q *DelayQueue[T]) rearmLocked() {
	want := q.wantLocked()
	if want == q.armedAt {
		return
	}
	if q.early {
		if want > q.armedAt {
			return // early, never late: see lazy.go
		}
		want = q.marginLocked(want)
	}
	q.setLocked(want)
}

// wantLocked is where an exact alarm is set: the head's expiration plus the
// grace, or Never for an empty queue.
func (q *DelayQueue[T]) wantLocked() time.Duration {
	h, ok := q.pq.Peek()
	if !ok {
		return Never
	}
	want := h.expiration
	if g := time.Duration(q.grace.Load()); want < Never-g {
		want += g
	}
	return want
}

// setLocked sets the alarm at want, or disarms it for Never.
func (q *DelayQueue[T]) setLocked(want time.Duration) {
	if want == Never {
		q.alarm.Stop()
	} else {
		q.alarm.Set(q.epoch.Add(want))
	}
	q.armedAt = want
}

// Len reports the number of values waiting.
func (q *DelayQueue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pq.Len()
}

// Clear drops every value, disarms the alarm and releases the queue's storage.
func (q *DelayQueue[T]) Clear() {
	q.mu.Lock()
	q.pq.Clear()
	q.next.Store(int64(Never))
	q.alarm.Stop() // an early alarm too: nothing is left to ring for
	q.armedAt = Never
	q.mu.Unlock()
}

// Wakeups reports how many times Wait has returned, or the ring function has
// been called, for an alarm or a Kick. On a clock other than System the alarm
// rings only when the head is due, so a queue whose values are taken by
// others in time wakes nobody; on the System clock the alarm is early, never
// late, and may also ring to find nothing due, at most once per setting
// (see lazy.go).
func (q *DelayQueue[T]) Wakeups() uint64 { return q.wakeups.Load() }
