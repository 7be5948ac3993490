//go:build go1.25

package timingwheel

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A wheel made inside a testing/synctest bubble runs on the bubble's fake
// time: its poller sleeps on a runtime timer of the bubble, so an hour-long
// timer fires after an hour of fake time, never before, in no real time.
func TestWheelInSynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tw, err := New(time.Millisecond, 512)
		require.NoError(t, err)
		defer tw.Stop() // the poller must leave the bubble before it ends

		start := time.Now()
		fired := make(chan time.Time, 1)
		tw.AfterFunc(time.Hour, func() { fired <- time.Now() })
		ctx, cancel := tw.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		tk := tw.NewTicker(10 * time.Minute)
		defer tk.Stop()

		<-ctx.Done()
		assert.GreaterOrEqual(t, time.Since(start), 30*time.Minute, "the context expired early")
		assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
		// As with time.Ticker, the 10-minute tick waited in the channel and
		// the 20- and 30-minute ones were dropped for the slow receiver.
		last := start
		for i := 1; i <= 3; i++ {
			tick := <-tk.C
			assert.GreaterOrEqual(t, tick.Sub(start), time.Duration(i)*10*time.Minute, "tick %d early", i)
			assert.Greater(t, tick, last, "tick %d not after the one before", i)
			last = tick
		}
		at := <-fired
		assert.GreaterOrEqual(t, at.Sub(start), time.Hour, "fired early")
		assert.Less(t, at.Sub(start), time.Hour+time.Second, "fired more than a second late")
	})
}
