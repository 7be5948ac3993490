package timingwheel

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestRingRunsALoneFire: a wheel on the System clock whose callbacks run on
// goroutines of their own keeps no goroutine while it waits (its alarm is a
// runtime timer that starts one, as time.AfterFunc does), and a timer firing
// alone runs its callback on that goroutine, after the wheel is advanced and
// the alarm re-armed: one goroutine per fire, as the runtime's. On another
// clock, or with other executors, one poller goroutine sleeps on the alarm.
func TestRingRunsALoneFire(t *testing.T) {
	before := goleak.IgnoreCurrent()
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	require.NoError(t, goleak.Find(before), "a wheel on the System clock keeps a goroutine")
	stacks := make(chan string, 1)
	start := time.Now()
	tw.AfterFunc(5*time.Millisecond, func() {
		buf := make([]byte, 64<<10)
		stacks <- string(buf[:runtime.Stack(buf, false)])
	})
	select {
	case s := <-stacks:
		require.GreaterOrEqual(t, time.Since(start), 5*time.Millisecond, "fired early")
		require.Contains(t, s, "timingwheel.(*TimingWheel).ring", "the lone callback did not run on the ring's goroutine:\n%s", s)
	case <-time.After(30 * time.Second):
		t.Fatal("the timer did not fire within 30 s")
	}
	require.Equal(t, uint64(1), tw.Stats().Wakeups)

	for _, opts := range [][]Option{
		{WithClock(NewFakeClock(time.Unix(1_000_000, 0)))},
		{WithInlineCallbacks()},
		{WithWorkerPool(1)},
	} {
		tw, err := New(time.Millisecond, 64, opts...)
		require.NoError(t, err)
		require.False(t, tw.rings)
		found := false
		buf := make([]byte, 1<<20)
		for deadline := time.Now().Add(30 * time.Second); !found && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			found = strings.Contains(string(buf[:runtime.Stack(buf, true)]), "timingwheel.(*TimingWheel).poll(")
		}
		tw.Stop()
		require.True(t, found, "no poller goroutine within 30 s")
	}
}
