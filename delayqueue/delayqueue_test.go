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

// pollAsync runs Poll in a goroutine and returns the channel of its results.
func pollAsync[T any](q *DelayQueue[T], exit chan struct{}) <-chan T {
	out := make(chan T, 16)
	go func() {
		defer close(out)
		for {
			v, ok := q.Poll(exit)
			if !ok {
				return
			}
			out <- v
		}
	}()
	return out
}

func TestPollDueOrderAndNeverEarly(t *testing.T) {
	c := newManualClock()
	q := New[string](c)
	t0 := c.Now()
	q.Offer("c", t0.Add(3*time.Second))
	q.Offer("a", t0.Add(1*time.Second))
	q.Offer("b", t0.Add(2*time.Second))
	q.Offer("b2", t0.Add(2*time.Second))
	require.Equal(t, 4, q.Len())

	_, ok := q.PollDue()
	require.False(t, ok, "nothing is due at t0")
	c.Advance(time.Second - 1)
	_, ok = q.PollDue()
	require.False(t, ok, "one nanosecond before the head's expiration is early")
	c.Advance(1)
	v, ok := q.PollDue()
	require.True(t, ok)
	require.Equal(t, "a", v)
	c.Advance(5 * time.Second)
	var got []string
	for v, ok := q.PollDue(); ok; v, ok = q.PollDue() {
		got = append(got, v)
	}
	require.ElementsMatch(t, []string{"b", "b2"}, got[:2])
	require.Equal(t, "c", got[2])
	require.Zero(t, q.Len())
}

func TestPollSleepsUntilHeadAndWakesOnlyForEarlierOffer(t *testing.T) {
	c := newManualClock()
	q := New[int](c)
	exit := make(chan struct{})
	out := pollAsync(q, exit)
	t0 := c.Now()

	q.Offer(10, t0.Add(10*time.Second))
	require.Eventually(t, func() bool { return c.armedAt(t0.Add(10 * time.Second)) }, 5*time.Second, time.Millisecond)
	woken := q.Wakeups()

	// A later offer must not wake the poller.
	q.Offer(20, t0.Add(20*time.Second))
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, woken, q.Wakeups(), "a later offer woke the poller")

	// An earlier offer must wake it and move the alarm.
	q.Offer(5, t0.Add(5*time.Second))
	require.Eventually(t, func() bool { return c.armedAt(t0.Add(5 * time.Second)) }, 5*time.Second, time.Millisecond)
	require.Equal(t, woken+1, q.Wakeups())

	c.Advance(5 * time.Second)
	require.Equal(t, 5, <-out)
	c.Advance(15 * time.Second)
	require.Equal(t, 10, <-out)
	require.Equal(t, 20, <-out)

	close(exit)
	for range out {
	}
}

func TestPollEmptyQueueWaitsForOffer(t *testing.T) {
	c := newManualClock()
	q := New[int](c)
	exit := make(chan struct{})
	out := pollAsync(q, exit)
	time.Sleep(10 * time.Millisecond)
	q.Offer(1, c.Now()) // due at once
	select {
	case v := <-out:
		require.Equal(t, 1, v)
	case <-time.After(5 * time.Second):
		t.Fatal("poller did not wake for an offer into an empty queue")
	}
	close(exit)
	for range out {
	}
}

func TestSystemClockNeverEarly(t *testing.T) {
	q := New[time.Time](nil)
	exit := make(chan struct{})
	out := pollAsync(q, exit)
	start := time.Now()
	for _, d := range []time.Duration{30, 1, 15, 5, 0, 20} {
		q.Offer(start.Add(d*time.Millisecond), start.Add(d*time.Millisecond))
	}
	var prev time.Time
	for i := 0; i < 6; i++ {
		due := <-out
		now := time.Now()
		require.False(t, now.Before(due), "polled %v before its expiration", due.Sub(start))
		require.False(t, due.Before(prev), "out of order")
		prev = due
	}
	close(exit)
	for range out {
	}
}

func TestClear(t *testing.T) {
	q := New[int](nil)
	q.Offer(1, time.Now())
	q.Clear()
	require.Zero(t, q.Len())
	_, ok := q.PollDue()
	require.False(t, ok)
}
