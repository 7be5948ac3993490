package delayqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFuncAlarmMovesLaterOnANewTimer: a ringing queue moves its alarm later
// on a runtime timer other than the one armed (see funcAlarm), and moves it
// earlier, or arms it after a Stop or a ring, by resetting its timer in
// place; and it rings on time, once, at the deadline it was moved to last.
func TestFuncAlarmMovesLaterOnANewTimer(t *testing.T) {
	type v struct{ slot Slot }
	q := NewIndexed(System, func(x *v) *Slot { return &x.slot })
	rang := make(chan time.Duration, 4)
	require.True(t, q.Ring(func() {
		now := q.Now()
		if _, ok := q.PollDue(now); ok {
			rang <- now
		}
		q.Rearm()
	}))
	defer q.Clear()
	a := q.alarm.(*funcAlarm)
	timer := func() *time.Timer {
		q.mu.Lock()
		defer q.mu.Unlock()
		return a.t
	}
	x := &v{}
	now := q.Now()
	q.Offer(x, now+time.Hour)
	first := timer()
	q.Offer(x, now+30*time.Minute) // earlier: in place
	require.Same(t, first, timer(), "moving earlier made a timer")
	q.Offer(x, now+2*time.Hour) // later: a timer of its own
	require.NotSame(t, first, timer(), "moving later reset the armed timer")
	second := timer()
	q.Remove(x) // the queue empties: the alarm stops
	q.Offer(x, now+3*time.Hour)
	require.Same(t, second, timer(), "arming after a Stop made a timer")

	deadline := q.Now() + 20*time.Millisecond
	q.Offer(x, deadline)                     // earlier
	q.Offer(x, deadline+20*time.Millisecond) // later
	moved := q.Now()
	// A ring may take x before the move only if the move came after it (a
	// stalled test): x is then offered anew and rings again. Any ring that
	// took x after the move is at or after the deadline it was moved to.
	for ringsBefore := 0; ; ringsBefore++ {
		var at time.Duration
		select {
		case at = <-rang:
		case <-time.After(30 * time.Second):
			t.Fatal("the alarm did not ring within 30 s")
		}
		if at >= deadline+20*time.Millisecond {
			break
		}
		require.LessOrEqual(t, at, moved, "rang at %v, after the move and before the deadline it was moved to", at)
		require.Zero(t, ringsBefore, "took x twice before it was moved")
	}
	require.Eventually(t, func() bool { // the ring has rearmed: nothing is left
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.armedAt == Never
	}, 30*time.Second, time.Millisecond)
	third := timer()
	q.Offer(x, q.Now()+time.Hour) // after a ring: in place
	require.Same(t, third, timer(), "arming after a ring made a timer")
	q.Remove(x)
	select {
	case at := <-rang:
		t.Fatalf("a stopped or replaced timer rang at %v", at)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestRingingAloneAllocatesNoTimer: a value alone in a ringing queue,
// offered and removed in turn, as a timer alone in a wheel, armed and
// stopped, makes its alarm arm and stop without allocating a runtime timer.
func TestRingingAloneAllocatesNoTimer(t *testing.T) {
	type v struct{ slot Slot }
	q := NewIndexed(System, func(x *v) *Slot { return &x.slot })
	require.True(t, q.Ring(func() { q.Rearm() }))
	defer q.Clear()
	x := &v{}
	allocs := testing.AllocsPerRun(1000, func() {
		q.Offer(x, q.Now()+time.Hour)
		q.Remove(x)
	})
	require.Zero(t, allocs, "allocations per Offer+Remove of a value alone")
}
