package delayqueue

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// manualClock is the smallest fake Clock: one alarm, fired by Advance.
type manualClock struct {
	mu    sync.Mutex
	now   time.Time
	alarm *manualAlarm
	sets  int // how many times the alarm was armed
}

type manualAlarm struct {
	c        *manualClock
	ch       chan time.Time
	deadline time.Time // zero: disarmed
}

func newManualClock() *manualClock { return &manualClock{now: time.Unix(1000, 0)} }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) NewAlarm() Alarm {
	c.alarm = &manualAlarm{c: c, ch: make(chan time.Time, 1)}
	return c.alarm
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.fireLocked()
}

func (c *manualClock) fireLocked() {
	a := c.alarm
	if a != nil && !a.deadline.IsZero() && !c.now.Before(a.deadline) {
		a.deadline = time.Time{}
		a.ch <- c.now
	}
}

func (a *manualAlarm) C() <-chan time.Time { return a.ch }

func (a *manualAlarm) Set(deadline time.Time) {
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	a.drainLocked()
	a.deadline = deadline
	a.c.sets++
	a.c.fireLocked()
}

func (a *manualAlarm) Stop() {
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	a.drainLocked()
	a.deadline = time.Time{}
}

func (a *manualAlarm) drainLocked() {
	select {
	case <-a.ch:
	default:
	}
}

// armedAt reports whether the poller is asleep with its alarm set at deadline.
func (c *manualClock) armedAt(deadline time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.alarm.deadline.Equal(deadline)
}

// waitLimit bounds every wait for the poller: what must happen happens
// within it, even on a loaded 2-core machine under -race.
const waitLimit = 30 * time.Second

// receive waits, at most waitLimit, for the next value the poller takes.
func receive[T any](t *testing.T, out <-chan T) T {
	t.Helper()
	select {
	case v, ok := <-out:
		require.True(t, ok, "the poller exited")
		return v
	case <-time.After(waitLimit):
		t.Fatalf("the poller took nothing within %v", waitLimit)
		panic("unreachable")
	}
}

// drain waits, at most waitLimit, for the poller to exit after exit closed.
func drain[T any](t *testing.T, out <-chan T) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case _, ok := <-out:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("the poller did not exit within %v of its exit channel closing", waitLimit)
		}
	}
}

// pollAsync runs a poller, Wait then PollDue, in a goroutine and returns the
// channel of what it takes.
func pollAsync[T any](q *DelayQueue[T], exit chan struct{}) <-chan T {
	out := make(chan T, 16)
	go func() {
		defer close(out)
		for q.Wait(exit) {
			for v, ok := q.PollDue(q.Now()); ok; v, ok = q.PollDue(q.Now()) {
				out <- v
			}
		}
	}()
	return out
}

func TestPollDueOrderAndNeverEarly(t *testing.T) {
	c := newManualClock()
	q := New[string](c)
	q.Offer("c", 3*time.Second)
	q.Offer("a", 1*time.Second)
	q.Offer("b", 2*time.Second)
	q.Offer("b2", 2*time.Second)
	require.Equal(t, 4, q.Len())
	require.Equal(t, time.Second, q.Next())

	_, ok := q.PollDue(q.Now())
	require.False(t, ok, "nothing is due at the epoch")
	c.Advance(time.Second - 1)
	_, ok = q.PollDue(q.Now())
	require.False(t, ok, "one nanosecond before the head's expiration is early")
	c.Advance(1)
	v, ok := q.PollDue(q.Now())
	require.True(t, ok)
	require.Equal(t, "a", v)
	require.Equal(t, 2*time.Second, q.Next())
	c.Advance(5 * time.Second)
	var got []string
	for v, ok := q.PollDue(q.Now()); ok; v, ok = q.PollDue(q.Now()) {
		got = append(got, v)
	}
	require.ElementsMatch(t, []string{"b", "b2"}, got[:2])
	require.Equal(t, "c", got[2])
	require.Zero(t, q.Len())
	require.Equal(t, Never, q.Next(), "an empty queue's head is Never")
}

// PeekDue shows the due head without taking it, and PollDueIf takes the
// head only if it is the one the caller expects, never early either.
func TestPeekDueAndPollDueIf(t *testing.T) {
	c := newManualClock()
	q := New[string](c)
	q.Offer("b", 2*time.Second)
	_, ok := q.PeekDue(q.Now())
	require.False(t, ok, "nothing is due at the epoch")
	_, ok = q.PollDueIf(q.Now(), func(string) bool { return true })
	require.False(t, ok, "PollDueIf is never early")
	c.Advance(2 * time.Second)
	v, ok := q.PeekDue(q.Now())
	require.True(t, ok)
	require.Equal(t, "b", v)
	require.Equal(t, 1, q.Len(), "PeekDue takes nothing")

	// Someone offers an earlier value between the peek and the poll: the
	// poll for "b" takes nothing, and "a" is still there to peek.
	q.Offer("a", time.Second)
	_, ok = q.PollDueIf(q.Now(), func(v string) bool { return v == "b" })
	require.False(t, ok, "the head is no longer the value peeked")
	require.Equal(t, 2, q.Len())
	require.Equal(t, time.Second, q.Next())
	v, ok = q.PollDueIf(q.Now(), func(v string) bool { return v == "a" })
	require.True(t, ok)
	require.Equal(t, "a", v)
	require.Equal(t, 2*time.Second, q.Next(), "the head moves on as PollDue's does")
	v, ok = q.PollDueIf(q.Now(), nil)
	require.True(t, ok, "a nil is accepts the head")
	require.Equal(t, "b", v)
	require.Equal(t, Never, q.Next())
}

// TestAlarmFollowsTheHead: whoever changes the head moves the alarm, so the
// waiter is never woken to re-arm it: not for an earlier offer, and not when
// another goroutine takes the due head first.
func TestAlarmFollowsTheHead(t *testing.T) {
	c := newManualClock()
	q := New[int](c)
	exit := make(chan struct{})
	out := pollAsync(q, exit)
	t0 := c.Now()

	q.Offer(10, 10*time.Second)
	require.True(t, c.armedAt(t0.Add(10*time.Second)))
	q.Offer(20, 20*time.Second)
	require.True(t, c.armedAt(t0.Add(10*time.Second)), "a later offer moved the alarm")
	q.Offer(5, 5*time.Second)
	require.True(t, c.armedAt(t0.Add(5*time.Second)), "an earlier offer did not move the alarm")

	// Another goroutine takes the head before the alarm rings: the alarm
	// moves to the next head and the waiter sleeps on.
	c.mu.Lock()
	c.now = c.now.Add(5 * time.Second) // without ringing the alarm
	c.mu.Unlock()
	v, ok := q.PollDue(q.Now())
	require.True(t, ok)
	require.Equal(t, 5, v)
	require.True(t, c.armedAt(t0.Add(10*time.Second)), "taking the head did not move the alarm")
	time.Sleep(10 * time.Millisecond)
	require.Zero(t, q.Wakeups(), "the waiter woke although nothing it waited for was due")

	c.Advance(5 * time.Second)
	require.Equal(t, 10, receive(t, out))
	c.Advance(10 * time.Second)
	require.Equal(t, 20, receive(t, out))
	// One wake-up for 10, and one for 20 unless the waiter, back from
	// handing 10 over, found 20 already due (the clock is advanced as soon
	// as 10 is received; on a busy machine the waiter may not have gone
	// back to sleep by then): the count is final once 20 is received.
	require.Contains(t, []uint64{1, 2}, q.Wakeups(), "the waiter woke to re-arm its alarm")
	require.True(t, c.armedAt(time.Time{}), "the alarm of an empty queue stays armed")

	close(exit)
	drain(t, out)
}

func TestGraceDelaysTheAlarm(t *testing.T) {
	c := newManualClock()
	q := New[int](c)
	t0 := c.Now()
	q.SetGrace(time.Second)
	q.Offer(1, 10*time.Second)
	require.True(t, c.armedAt(t0.Add(11*time.Second)))
	c.Advance(10 * time.Second)
	v, ok := q.PollDue(q.Now())
	require.True(t, ok, "the grace delays the alarm, never PollDue")
	require.Equal(t, 1, v)
	q.Offer(2, 12*time.Second)
	require.True(t, c.armedAt(t0.Add(13*time.Second)))
	q.SetGrace(0)
	require.True(t, c.armedAt(t0.Add(12*time.Second)), "a new grace moves the alarm at once")
	q.Offer(3, time.Duration(Never)-1)
	require.True(t, c.armedAt(t0.Add(12*time.Second)))
	q.SetGrace(time.Hour)
	c.Advance(2 * time.Second)
	_, ok = q.PollDue(q.Now())
	require.True(t, ok)
	require.True(t, c.armedAt(t0.Add(Never-1)), "a grace that would overflow is not added")
}

func TestWaitReturnsForKickAndExit(t *testing.T) {
	q := New[int](newManualClock())
	q.Kick()
	q.Kick() // never blocks
	exit := make(chan struct{})
	require.True(t, q.Wait(exit), "a Kick before Wait")
	require.Equal(t, uint64(1), q.Wakeups())
	close(exit)
	require.False(t, q.Wait(exit))
	require.Equal(t, uint64(1), q.Wakeups(), "an exit is not a wake-up")
}

func TestPollEmptyQueueWaitsForOffer(t *testing.T) {
	c := newManualClock()
	q := New[int](c)
	exit := make(chan struct{})
	out := pollAsync(q, exit)
	time.Sleep(10 * time.Millisecond)
	q.Offer(1, q.Now()) // due at once
	select {
	case v := <-out:
		require.Equal(t, 1, v)
	case <-time.After(waitLimit):
		t.Fatal("poller did not wake for an offer into an empty queue")
	}
	close(exit)
	drain(t, out)
}

func TestSystemClockNeverEarly(t *testing.T) {
	q := New[time.Duration](nil)
	exit := make(chan struct{})
	out := pollAsync(q, exit)
	for _, d := range []time.Duration{30, 1, 15, 5, 0, 20} {
		at := q.Now() + d*time.Millisecond
		q.Offer(at, at)
	}
	var prev time.Duration
	for i := 0; i < 6; i++ {
		due := receive(t, out)
		require.GreaterOrEqual(t, q.Now(), due, "polled %v before its expiration", due)
		require.GreaterOrEqual(t, due, prev, "out of order")
		prev = due
	}
	close(exit)
	drain(t, out)
}

func TestNowRange(t *testing.T) {
	c := newManualClock()
	q := New[int](c)
	c.mu.Lock()
	c.now = c.now.Add(-time.Hour)
	c.mu.Unlock()
	require.Zero(t, q.Now(), "a clock behind the epoch reads as the epoch")
	c.mu.Lock()
	c.now = c.now.Add(time.Hour).Add(Never)
	c.mu.Unlock()
	require.PanicsWithValue(t, "delayqueue: the clock reads "+c.Now().String()+
		", at least 292 years past the queue's epoch "+q.Epoch().String(), func() { q.Now() })
}

func TestClear(t *testing.T) {
	c := newManualClock()
	q := New[int](c)
	q.Offer(1, 0)
	q.Clear()
	require.Zero(t, q.Len())
	require.Equal(t, Never, q.Next())
	require.True(t, c.armedAt(time.Time{}), "Clear leaves the alarm armed")
	_, ok := q.PollDue(q.Now())
	require.False(t, ok)
}
