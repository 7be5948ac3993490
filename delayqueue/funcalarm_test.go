package delayqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFuncAlarmMovesLaterOnANewTimer: the alarm of a ringing queue moves
// later by arming a timer other than the one armed (see funcAlarm), and
// moves earlier, or arms after a Stop or a ring, by resetting its timer in
// place; and it rings on time, once, at the deadline it was moved to last.
func TestFuncAlarmMovesLaterOnANewTimer(t *testing.T) {
	rang := make(chan time.Time, 4)
	a := &funcAlarm{f: func() { rang <- time.Now() }}
	now := time.Now()
	a.Set(now.Add(time.Hour))
	first := a.t
	a.Set(now.Add(30 * time.Minute)) // earlier: in place
	require.Same(t, first, a.t, "moving earlier made a timer")
	a.Set(now.Add(2 * time.Hour)) // later: a timer of its own
	require.NotSame(t, first, a.t, "moving later reset the armed timer")
	second := a.t
	a.Stop()
	a.Set(now.Add(3 * time.Hour)) // after a Stop: in place
	require.Same(t, second, a.t, "arming after a Stop made a timer")

	deadline := time.Now().Add(20 * time.Millisecond)
	a.Set(deadline) // earlier
	a.Set(deadline.Add(20 * time.Millisecond))
	select {
	case at := <-rang:
		require.False(t, at.Before(deadline.Add(20*time.Millisecond)), "rang before the deadline it was moved to")
	case <-time.After(30 * time.Second):
		t.Fatal("the alarm did not ring within 30 s")
	}
	a.rang()
	third := a.t
	a.Set(time.Now().Add(time.Hour)) // after a ring: in place
	require.Same(t, third, a.t, "arming after a ring made a timer")
	a.Stop()
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
