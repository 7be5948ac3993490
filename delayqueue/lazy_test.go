package delayqueue

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type lazyValue struct {
	id   int
	slot Slot
}

// newEarly returns an indexed queue on c whose alarm may be early, as a
// System queue's is (see lazy.go).
func newEarly(c Clock) *DelayQueue[*lazyValue] {
	q := NewIndexed(c, func(v *lazyValue) *Slot { return &v.slot })
	q.early = true
	return q
}

// TestEarlyAlarmNeverMovesLater: an early alarm moves earlier at once and
// never later; when it rings for a head that has gone, the waiter takes
// nothing and the alarm is set at the head then, once.
func TestEarlyAlarmNeverMovesLater(t *testing.T) {
	c := newManualClock()
	q := newEarly(c)
	exit := make(chan struct{})
	out := pollAsync(q, exit)
	t0 := c.Now()
	sets := func() int { c.mu.Lock(); defer c.mu.Unlock(); return c.sets }

	x, y, z := &lazyValue{id: 1}, &lazyValue{id: 2}, &lazyValue{id: 3}
	q.Offer(x, 10*time.Second)
	require.Eventually(t, func() bool { return c.armedAt(t0.Add(10 * time.Second)) }, waitLimit, time.Millisecond)
	armings := sets()
	q.Offer(y, 20*time.Second)
	q.Remove(x)
	for i := range 1000 { // values that come and go, all later than the alarm
		v := &lazyValue{id: 100 + i}
		q.Offer(v, 30*time.Second+time.Duration(i)*time.Millisecond)
		q.Offer(v, 40*time.Second)
		q.Remove(v)
	}
	require.True(t, c.armedAt(t0.Add(10*time.Second)), "the alarm moved later")
	require.Equal(t, armings, sets(), "a call that moved the head later set the alarm")

	q.Offer(z, 5*time.Second)
	require.True(t, c.armedAt(t0.Add(5*time.Second)), "an earlier head did not move the alarm")
	q.Remove(z)
	require.True(t, c.armedAt(t0.Add(5*time.Second)), "the alarm moved later")
	require.Equal(t, armings+1, sets())

	// The alarm rings for z, which has gone: the waiter takes nothing and
	// sets the alarm at y, once.
	c.Advance(5 * time.Second)
	require.Eventually(t, func() bool { return c.armedAt(t0.Add(20 * time.Second)) }, waitLimit, time.Millisecond)
	require.Equal(t, uint64(1), q.Wakeups())
	require.Equal(t, armings+2, sets())
	c.Advance(15 * time.Second)
	require.Equal(t, y, receive(t, out))

	close(exit)
	drain(t, out)
}

// TestEarlyAlarmNeverLate holds an early alarm against the rule it must
// keep, after every call of a random sequence: the alarm is set no later
// than the head (disarmed only for an empty queue), and it was set only by
// a call that brought the head earlier than it, by a take (then exactly at
// the next head), or by a ring.
func TestEarlyAlarmNeverLate(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	c := newManualClock()
	q := newEarly(c)
	t0 := c.Now()
	vs := make([]*lazyValue, 16)
	for i := range vs {
		vs[i] = &lazyValue{id: i}
	}
	for step := range 20000 {
		before := c.alarm.deadline
		sets := c.sets
		head := q.Next()
		took := false
		switch op := r.IntN(10); {
		case op < 5:
			q.Offer(vs[r.IntN(len(vs))], q.Now()+time.Duration(r.IntN(100))*time.Millisecond)
		case op < 8:
			q.Remove(vs[r.IntN(len(vs))])
		case op < 9:
			_, took = q.PollDue(q.Now())
		default: // ring, as the waiter would: take what is due, set again
			c.Advance(time.Duration(r.IntN(20)) * time.Millisecond)
			select {
			case <-q.alarm.C():
				q.mu.Lock()
				q.armedAt = Never
				q.mu.Unlock()
				for _, ok := q.PollDue(q.Now()); ok; _, ok = q.PollDue(q.Now()) {
				}
				q.Rearm()
				continue
			default:
			}
		}
		after, next := c.alarm.deadline, q.Next()
		if next != Never && len(c.alarm.ch) == 0 { // not rung (a past setting rings at once)
			require.False(t, after.IsZero(), "step %d: the alarm is disarmed with a head at %v", step, next)
			require.False(t, after.After(t0.Add(next)), "step %d: the alarm is set at %v, after the head at %v", step, after.Sub(t0), next)
		}
		if took {
			if next == Never {
				require.True(t, after.IsZero(), "step %d: a take that emptied the queue left the alarm set", step)
			} else {
				require.Equal(t, t0.Add(next), after, "step %d: a take did not set the alarm at the next head", step)
			}
			continue
		}
		if c.sets != sets {
			require.Less(t, next, head, "step %d: the alarm was set although the head did not come earlier", step)
			require.True(t, before.IsZero() || t0.Add(next).Before(before), "step %d: the alarm moved later", step)
		}
	}
}

// TestRingingAloneAllocatesNoTimer: a value alone in a ringing queue,
// offered and removed in turn, as a timer alone in a wheel, armed and
// stopped, allocates no runtime timer and sets the alarm once.
func TestRingingAloneAllocatesNoTimer(t *testing.T) {
	q := NewIndexed(System, func(x *lazyValue) *Slot { return &x.slot })
	require.True(t, q.Ring(func() { q.Rearm() }))
	defer q.Clear()
	x := &lazyValue{}
	allocs := testing.AllocsPerRun(1000, func() {
		q.Offer(x, q.Now()+time.Hour)
		q.Remove(x)
	})
	require.Zero(t, allocs, "allocations per Offer+Remove of a value alone")
}

// TestRingingEarlyAlarmNeverEarly: on the System clock a ringing queue's
// alarm rings for a value removed meanwhile, finds nothing due, and rings
// again for the head; nothing is taken before its expiration.
func TestRingingEarlyAlarmNeverEarly(t *testing.T) {
	q := NewIndexed(System, func(x *lazyValue) *Slot { return &x.slot })
	taken := make(chan time.Duration, 4)
	require.True(t, q.Ring(func() {
		now := q.Now()
		if v, ok := q.PollDue(now); ok {
			taken <- now - time.Duration(v.id)
		}
		q.Rearm()
	}))
	defer q.Clear()
	// gone is removed well before it is due (a stall of 100 ms between two
	// calls would let a ring take it, and count a third wake-up).
	gone := &lazyValue{}
	q.Offer(gone, q.Now()+100*time.Millisecond)
	q.Remove(gone)
	at := q.Now() + 300*time.Millisecond
	x := &lazyValue{id: int(at)} // carries its expiration
	q.Offer(x, at)
	select {
	case late := <-taken:
		require.GreaterOrEqual(t, late, time.Duration(0), "taken %v before its expiration", -late)
	case <-time.After(waitLimit):
		t.Fatalf("not taken within %v", waitLimit)
	}
	require.GreaterOrEqual(t, q.Wakeups(), uint64(1))
	require.LessOrEqual(t, q.Wakeups(), uint64(2), "rang more than once for the removed value and once for x")
}

// TestEarlyAlarmMargin: a head that creeps earlier, a little at a time,
// sets the alarm an eighth of its time to go early once; the moves after
// that find the alarm early already and set nothing. A head that comes
// much earlier sets the alarm at the head.
func TestEarlyAlarmMargin(t *testing.T) {
	c := newManualClock()
	q := newEarly(c)
	t0 := c.Now()
	x := &lazyValue{}
	q.Offer(x, 80*time.Second)
	require.True(t, c.armedAt(t0.Add(80*time.Second)), "a first head set the alarm elsewhere than at it")
	sets := c.sets
	q.Offer(x, 79*time.Second) // a little earlier: an eighth of 79 s early
	require.True(t, c.armedAt(t0.Add(79*time.Second-79*time.Second/8)), "a small move earlier set the alarm without the margin")
	for at := 78 * time.Second; at > 70*time.Second; at -= time.Second {
		q.Offer(x, at)
	}
	require.Equal(t, sets+1, c.sets, "moves within the margin set the alarm")
	q.Offer(x, 10*time.Second) // much earlier: at the head
	require.True(t, c.armedAt(t0.Add(10*time.Second)), "a big move earlier set the alarm elsewhere than at the head")
}

// TestEarlyAlarmFollowsATake: a value taken because it is due moves an early
// alarm to the next head, later included, so that a caller taking due values
// ahead of the alarm (here within the grace) wakes nobody.
func TestEarlyAlarmFollowsATake(t *testing.T) {
	c := newManualClock()
	q := newEarly(c)
	q.SetGrace(5 * time.Second)
	exit := make(chan struct{})
	out := pollAsync(q, exit)
	t0 := c.Now()

	x, y := &lazyValue{id: 1}, &lazyValue{id: 2}
	q.Offer(x, 10*time.Second)
	q.Offer(y, 20*time.Second)
	require.Eventually(t, func() bool { return c.armedAt(t0.Add(15 * time.Second)) }, waitLimit, time.Millisecond)
	c.Advance(10 * time.Second)
	v, ok := q.PollDue(q.Now())
	require.True(t, ok)
	require.Equal(t, x, v)
	require.True(t, c.armedAt(t0.Add(25*time.Second)), "a take left the alarm at the value taken")
	c.Advance(5 * time.Second)
	v, ok = q.PollDue(q.Now())
	require.False(t, ok, "took %v", v)
	require.Equal(t, uint64(0), q.Wakeups(), "the alarm rang for a value already taken")

	close(exit)
	drain(t, out)
}

// TestRemoveHeadMovesTheAlarmOnOncePerExpiration: RemoveHead takes an
// emptied head and moves an early alarm on to the next head, later
// included, the first time a head at that expiration is emptied; a second
// head at the same expiration stays queued and the alarm where it is. It
// refuses a value that is not the head, or whose expiration is not the
// one given.
func TestRemoveHeadMovesTheAlarmOnOncePerExpiration(t *testing.T) {
	c := newManualClock()
	q := newEarly(c)
	t0 := c.Now()
	sets := func() int { c.mu.Lock(); defer c.mu.Unlock(); return c.sets }

	far, near := &lazyValue{id: 1}, &lazyValue{id: 2}
	q.Offer(far, time.Hour)
	q.Offer(near, 30*time.Millisecond)
	require.True(t, c.armedAt(t0.Add(30*time.Millisecond)))
	require.False(t, q.RemoveHead(far, time.Hour), "not the head")
	require.False(t, q.RemoveHead(near, 31*time.Millisecond), "another expiration")
	require.True(t, q.RemoveHead(near, 30*time.Millisecond))
	require.Equal(t, Slot{}, near.slot, "the head was not removed")
	require.True(t, c.armedAt(t0.Add(time.Hour)), "the alarm did not move on to the next head")
	require.Equal(t, time.Hour, q.Next())

	// A second head at the same expiration: kept, the alarm left early.
	again := &lazyValue{id: 3}
	q.Offer(again, 30*time.Millisecond)
	require.True(t, c.armedAt(t0.Add(30*time.Millisecond)))
	armings := sets()
	require.False(t, q.RemoveHead(again, 30*time.Millisecond), "moved later twice for one expiration")
	require.Equal(t, 2, q.Len())
	require.Equal(t, armings, sets())
	q.Remove(again) // the owner withdraws it: an early alarm stays
	require.True(t, c.armedAt(t0.Add(30*time.Millisecond)))

	// A head at a new expiration moves it on again; the last one empties
	// the queue and disarms the alarm.
	next := &lazyValue{id: 4}
	q.Offer(next, 40*time.Millisecond)
	require.False(t, c.armedAt(t0.Add(40*time.Millisecond)), "an early alarm moved later on Offer")
	require.False(t, q.RemoveHead(far, time.Hour), "not the head")
	q.Remove(far)
	require.True(t, q.RemoveHead(next, 40*time.Millisecond))
	require.Equal(t, Never, q.Next())
	c.mu.Lock()
	disarmed := c.alarm.deadline.IsZero()
	c.mu.Unlock()
	require.True(t, disarmed, "the alarm of an empty queue is still set")

	// A queue whose alarm is exact has Remove for this: RemoveHead refuses.
	exact := NewIndexed(c, func(v *lazyValue) *Slot { return &v.slot })
	v := &lazyValue{id: 5}
	exact.Offer(v, time.Second)
	require.False(t, exact.RemoveHead(v, time.Second))
	require.PanicsWithValue(t, "delayqueue: RemoveHead on a queue made by New, not NewIndexed",
		func() { New[int](c).RemoveHead(1, time.Second) })
}
