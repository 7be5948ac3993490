package timingwheel

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
			tw, err := New(time.Millisecond, 64)
			require.NoError(t, err)
			defer tw.Stop()
			if name != "alone" {
				// Due in an hour, on a level whose slots span 262 s: its
				// bucket's expiration is at least 55 minutes away.
				later := tw.AfterFunc(time.Hour, func() {})
				defer later.Stop()
			}
			before := tw.Stats().Wakeups
			var fired atomic.Int32
			for range 5 {
				timer := tw.AfterFunc(20*time.Millisecond, func() { fired.Add(1) })
				require.True(t, timer.Stop())
				time.Sleep(5 * time.Millisecond) // the next one in a later tick
			}
			time.Sleep(100 * time.Millisecond) // past every stopped timer's due time
			assert.Equal(t, before, tw.Stats().Wakeups, "the poller woke for stopped timers")
			assert.Zero(t, fired.Load())
		})
	}
}
