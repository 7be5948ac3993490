package timingwheel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStopFromCallback: a callback may stop its own wheel in every callback
// mode; Stop must not wait for the goroutine it is running on.
func TestStopFromOwnCallbackEveryMode(t *testing.T) {
	modes := map[string][]Option{
		"goroutine": nil,
		"inline":    {WithInlineCallbacks()},
		"pool":      {WithWorkerPool(2)},
	}
	for name, opts := range modes {
		t.Run(name, func(t *testing.T) {
			tw, err := New(time.Millisecond, 8, opts...)
			require.NoError(t, err)
			later := tw.AfterFunc(time.Hour, func() { t.Error("a timer pending at Stop fired") })
			done := make(chan struct{})
			tw.AfterFunc(time.Millisecond, func() {
				tw.Stop()
				close(done)
			})
			select {
			case <-done:
			case <-time.After(semWait):
				t.Fatal("Stop called from a callback did not return")
			}
			tw.Stop() // idempotent, and now waits for the poller and workers
			require.True(t, later.Stop(), "a dropped timer reports true once")
			require.False(t, later.Stop())
		})
	}
}

// TestCallbacksMayUseTheWheel: callbacks run with no lock held, so they can
// arm, reset and stop timers of their own wheel in every mode.
func TestCallbacksMayUseTheWheel(t *testing.T) {
	for name, opts := range map[string][]Option{
		"goroutine": nil,
		"inline":    {WithInlineCallbacks()},
		"pool":      {WithWorkerPool(1)},
	} {
		t.Run(name, func(t *testing.T) {
			tw, err := New(time.Millisecond, 4, opts...)
			require.NoError(t, err)
			defer tw.Stop()
			done := make(chan struct{})
			var self *Timer
			hops := 0
			self = tw.AfterFunc(time.Hour, func() {
				hops++
				if hops == 3 {
					close(done)
					return
				}
				other := tw.AfterFunc(time.Hour, func() {})
				require.True(t, other.Stop())
				require.False(t, self.Reset(time.Millisecond), "a fired timer is not active")
			})
			// Armed for real only now, so the callback's reads of self are
			// ordered after the write above by the wheel's lock.
			require.True(t, self.Reset(time.Millisecond))
			select {
			case <-done:
			case <-time.After(semWait):
				t.Fatal("a callback that re-arms itself stalled")
			}
		})
	}
}
