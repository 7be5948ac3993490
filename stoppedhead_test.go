package timingwheel

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStoppedHeadWakesNobody: on the System clock, a timer stopped while it
// is the wheel's earliest leaves no alarm to ring for it: the queue moves
// the alarm on to the next head, or stops it, the first time a head at that
// expiration is emptied (delayqueue's lazy.go). The early alarm used to
// stay, and rang once for each such timer, for nothing. Each timer here is
// armed in a tick of its own, so each stopped head is the first at its
// expiration; the next head is a timer due in an hour, or none.
func TestStoppedHeadWakesNobody(t *testing.T) {
	for _, name := range []string{"alone", "beside a later timer"} {
		t.Run(name, func(t *testing.T) {
			// A stall of the whole 50 ms between arming and stopping lets
			// a timer fire, which wakes the poller rightly: such an
			// attempt proves nothing, and the next one is made.
			for attempt := range 5 {
				if wakeups, ok := stopHeads(t, name != "alone"); ok {
					require.Zero(t, wakeups, "the poller woke for stopped timers")
					return
				}
				t.Logf("attempt %d: a timer fired before its Stop (a stalled machine)", attempt)
			}
			t.Fatal("every attempt stalled past a timer's 50 ms")
		})
	}
}

// stopHeads arms and stops 5 timers due in 50 ms, each in a tick of its
// own, on a new wheel, beside a timer due in an hour if later, waits past
// their due times and returns the poller's wake-ups since the first; ok is
// false if a timer fired before its Stop.
func stopHeads(t *testing.T, later bool) (wakeups uint64, ok bool) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	if later {
		// Due in an hour, on a level whose slots span 262 s: its bucket's
		// expiration is at least 55 minutes away.
		defer tw.AfterFunc(time.Hour, func() {}).Stop()
	}
	before := tw.Stats().Wakeups
	var fired atomic.Int32
	for range 5 {
		if !tw.AfterFunc(50*time.Millisecond, func() { fired.Add(1) }).Stop() {
			return 0, false
		}
		time.Sleep(2 * time.Millisecond) // the next one in a later tick
	}
	time.Sleep(150 * time.Millisecond) // past every stopped timer's due time
	require.Zero(t, fired.Load(), "a stopped timer fired")
	return tw.Stats().Wakeups - before, true
}
