package delayqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRing: a queue on the System clock that rings calls its ring function,
// on a goroutine of its own, once the head is due and never before, and
// again after Rearm for the next head; Kick rings at once; and no goroutine
// waits for the queue in between. A queue on another clock does not ring.
func TestRing(t *testing.T) {
	require.False(t, New[int](newManualClock()).Ring(func() {}), "a queue on a manual clock rings")

	q := New[int](System)
	type rang struct {
		at    time.Duration
		value int
		ok    bool
	}
	out := make(chan rang, 16)
	require.True(t, q.Ring(func() {
		now := q.Now()
		v, ok := q.PollDue(now)
		out <- rang{now, v, ok}
		q.Rearm()
	}))
	defer q.Clear()
	receive := func() rang {
		t.Helper()
		select {
		case r := <-out:
			return r
		case <-time.After(30 * time.Second):
			t.Fatal("the queue did not ring within 30 s")
			return rang{}
		}
	}
	start := q.Now()
	q.Offer(1, start+20*time.Millisecond)
	q.Offer(2, start+40*time.Millisecond)
	for _, want := range []int{1, 2} {
		r := receive()
		require.True(t, r.ok, "rang with nothing due")
		require.Equal(t, want, r.value)
		require.GreaterOrEqual(t, r.at, start+time.Duration(want)*20*time.Millisecond, "rang early")
	}
	require.Equal(t, uint64(2), q.Wakeups())
	q.Kick()
	r := receive()
	require.False(t, r.ok, "a Kick on an empty queue found something due")
	require.Equal(t, uint64(3), q.Wakeups())
	q.Offer(3, q.Now()+time.Hour)
	q.Clear()
	select {
	case r := <-out:
		t.Fatalf("rang after Clear: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestRingNeverResetsAnArmedTimer: a ringing queue's alarm, moved earlier
// while armed, goes to a new runtime timer (the old one stopped), because
// the runtime fixes a heap holding a timer Reset in place by walking the
// whole heap of its P; after it rang, it is set again on the same timer,
// which is out of the heap. The moved alarm still rings once, for the
// value it was moved for: its first ring takes it.
func TestRingNeverResetsAnArmedTimer(t *testing.T) {
	q := New[int](System)
	rings := make(chan int, 16)
	require.True(t, q.Ring(func() {
		v, ok := q.PollDue(q.Now())
		if !ok {
			v = 0 // rang and found nothing due
		}
		rings <- v
		q.Rearm()
	}))
	defer q.Clear()
	timer := func() *alarmTimer {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.alarm.(*funcAlarm).cur
	}
	start := q.Now()
	q.Offer(1, start+time.Hour)
	first := timer()
	require.NotNil(t, first)
	q.Offer(2, start+30*time.Millisecond) // far earlier than the armed alarm: it moves
	moved := timer()
	require.NotSame(t, first, moved, "the armed alarm was Reset in place")
	require.False(t, first.t.Stop(), "the replaced timer was left armed")
	select {
	case v := <-rings:
		// The first ring: one that found nothing would be for the old
		// setting, or early.
		require.Equal(t, 2, v, "the first ring did not take the value it was moved for")
		require.Equal(t, uint64(1), q.Wakeups())
	case <-time.After(30 * time.Second):
		t.Fatal("the moved alarm did not ring within 30 s")
	}
	// The ring's Rearm set the alarm for value 1, on the timer that rang.
	require.Eventually(t, func() bool { return timer() == moved && !moved.rang.Load() },
		30*time.Second, time.Millisecond, "the alarm was not set again on the timer that rang")
}
