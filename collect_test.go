package timingwheel

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// liveObjects returns the heap objects allocated and not yet freed, after
// collecting garbage until the runtime's cleanups have had a chance to run
// (they run on a goroutine of their own after a collection).
func liveObjects() int64 {
	var m runtime.MemStats
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond) // let queued cleanups run
	}
	runtime.ReadMemStats(&m)
	return int64(m.Mallocs - m.Frees)
}

// TestAbandonedChannelTimersAreCollected is Go's TestTimerGC for the wheel:
// a channel timer that nothing references any more, neither its Timer nor
// its C, is released by the garbage collector before it fires, so fewer than
// one object per timer stays live; the wheel counts it in Stats.Collected
// and no longer as pending. AfterFunc timers are not collected: they run.
func TestAbandonedChannelTimersAreCollected(t *testing.T) {
	const n = 10_000
	tw, err := New(time.Millisecond, 512)
	require.NoError(t, err)
	defer tw.Stop()
	for _, tc := range []struct {
		name    string
		abandon func()
	}{
		{"After", func() { tw.After(time.Hour) }},
		{"NewTimer", func() { tw.NewTimer(time.Hour) }},
		{"NewTimer fired, not received", func() { tw.NewTimer(0) }},
		{"select loop", func() {
			ready := make(chan int, 1)
			ready <- 1
			select {
			case <-ready:
			case <-tw.After(time.Minute):
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tw.Stats()
			live := liveObjects()
			for range n {
				tc.abandon()
			}
			var grown int64
			require.Eventually(t, func() bool {
				grown = liveObjects() - live
				return grown < n
			}, semWait, 10*time.Millisecond, "abandoned timers kept objects live")
			t.Logf("%d objects live after %d abandoned timers", grown, n)
			require.Eventually(t, func() bool {
				s := tw.Stats()
				return s.Pending == before.Pending && s.Collected+s.Fired-before.Collected-before.Fired == n
			}, semWait, 10*time.Millisecond, "the wheel still counts abandoned timers as pending: %+v", tw.Stats())
		})
	}

	t.Run("unreferenced AfterFunc still fires", func(t *testing.T) {
		fired := make(chan struct{}, n)
		for range n {
			tw.AfterFunc(5*time.Millisecond, func() { fired <- struct{}{} })
		}
		runtime.GC()
		runtime.GC()
		for range n {
			awaitSignal(t, fired, "a short timer's callback")
		}
	})

	t.Run("a held channel still receives", func(t *testing.T) {
		c := tw.After(5 * time.Millisecond)
		runtime.GC()
		runtime.GC()
		select {
		case <-c:
		case <-time.After(semWait):
			t.Fatal("After's channel, still held, never received")
		}
	})
}
