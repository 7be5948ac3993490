package timingwheel

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// liveAfter returns the heap objects allocated and not yet freed (the
// runtime's Mallocs - Frees) after gcs collections in a row, with nothing
// in between: no sleep, so no cleanup queued by one collection is given
// time to run before the next.
func liveAfter(gcs int) int64 {
	for range gcs {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.Mallocs - m.Frees)
}

// TestStoppedTickersAndTimersGoAtOnce is Go's TestTimerGC (src/time/
// tick_test.go) for what a caller stopped: after n calls of
// NewTicker(d).Stop() or NewTimer(d).Stop() and three collections in a row,
// fewer than n objects stay live, as with package time, for periods within
// the one-second horizon up to which a channel timer holds its channel
// strongly and beyond it, where it holds it weakly with a cleanup attached.
// Stop releases that cleanup itself: nothing waits for a collection to queue
// it and for the runtime's cleanup goroutine to run it. To make sure of that,
// the test keeps that goroutine busy throughout (plugCleanups), so that a
// Stop that left its cleanup to run fails here every time, not only when the
// goroutine happens to be late.
func TestStoppedTickersAndTimersGoAtOnce(t *testing.T) {
	tw, err := New(time.Millisecond, 512)
	require.NoError(t, err)
	defer tw.Stop()
	defer plugCleanups(t)()
	const n = 10_000
	for _, d := range []time.Duration{
		time.Millisecond, 100 * time.Millisecond, strongHorizon, 2 * strongHorizon, time.Hour,
	} {
		for _, tc := range []struct {
			name string
			stop func()
		}{
			{"NewTickerStop", func() { tw.NewTicker(d).Stop() }},
			{"NewTimerStop", func() { tw.NewTimer(d).Stop() }},
			{"NewTickerResetStop", func() {
				tk := tw.NewTicker(d)
				tk.Stop()
				tk.Reset(2 * d)
				tk.Stop()
			}},
			{"NewTimerResetStop", func() {
				tm := tw.NewTimer(d)
				tm.Stop()
				tm.Reset(2 * d)
				tm.Stop()
			}},
		} {
			t.Run(tc.name+"/d="+d.String(), func(t *testing.T) {
				before := liveAfter(3)
				for range n {
					tc.stop()
				}
				live := liveAfter(3) - before
				t.Logf("%d objects live after %d stopped", live, n)
				require.Less(t, live, int64(n), "stopped tickers or timers kept objects live")
			})
		}
	}
}

// TestAbandonedTickersAndTimersGoInTwoCollections pins what an abandoned
// Ticker costs the collector, as the README states it: a Ticker or Tick
// channel that nothing references any more, never stopped, is released by
// two collections, the cleanups queued by the first having run before the
// second (a cleanup runs on a goroutine of the runtime after the collection
// that found the channel unreachable, and takes the wheel's node out of its
// bucket; the second collection frees the node). After the first alone, more
// than one object per Ticker is live still. A channel Timer due in more than
// a second is held the same way, and so is a Ticker or Timer that was
// stopped and then reset.
func TestAbandonedTickersAndTimersGoInTwoCollections(t *testing.T) {
	tw, err := New(time.Millisecond, 512)
	require.NoError(t, err)
	defer tw.Stop()
	// Only the test's own collections: one the runtime started while the
	// tickers were being made would have released some of them already.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const n = 10_000
	// An hour, so that no tick is sent while the test runs: a tick makes the
	// wheel's weak pointer to C strong for a moment, which keeps C for the
	// collection that runs then (TestTickersAbandonedAreCollected covers
	// tickers that tick).
	const d = time.Hour
	for _, tc := range []struct {
		name    string
		abandon func()
	}{
		{"NewTicker", func() { tw.NewTicker(d) }},
		{"Tick", func() { tw.Tick(d) }},
		{"NewTimer", func() { tw.NewTimer(d) }},
		// Stop took the collector off; Reset must attach a new one.
		{"NewTicker stopped and reset", func() {
			tk := tw.NewTicker(d)
			tk.Stop()
			tk.Reset(d)
		}},
		{"NewTimer stopped and reset", func() {
			tm := tw.NewTimer(d)
			tm.Stop()
			tm.Reset(d)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := liveAfter(3)
			collected := tw.Stats().Collected
			for range n {
				tc.abandon()
			}
			tw.sweepOwed() // as it runs within strongHorizon (weakdefer.go)
			first := liveAfter(1) - before
			require.Eventually(t, func() bool {
				return tw.Stats().Collected-collected == n
			}, 30*time.Second, time.Millisecond, "the cleanups of the first collection did not take the abandoned tickers or timers out of the wheel")
			second := liveAfter(1) - before
			t.Logf("%d objects live after one collection, %d after two, of %d abandoned", first, second, n)
			require.GreaterOrEqual(t, first, int64(n), "one collection released the abandoned tickers or timers: the README says two")
			require.Less(t, second, int64(n), "two collections did not release the abandoned tickers or timers")
		})
	}
}

// plugCleanups blocks the goroutine on which the runtime runs cleanups
// (runtime.AddCleanup) until the returned function is called: it attaches a
// cleanup that blocks to an object it drops, and collects until that cleanup
// has started. The runtime runs cleanups on max(GOMAXPROCS/4, 1) goroutines
// (runtime/mcleanup.go): below 8 Ps this blocks every cleanup, beyond it
// some may still run, which can only let a test pass that should fail.
func plugCleanups(t *testing.T) (unplug func()) {
	started, release := make(chan struct{}), make(chan struct{})
	dropWithBlockingCleanup(started, release)
	deadline := time.After(30 * time.Second)
	for plugged := false; !plugged; {
		runtime.GC()
		select {
		case <-started:
			plugged = true
		case <-time.After(time.Millisecond):
		case <-deadline:
			t.Fatal("the cleanup of a dropped object never started")
		}
	}
	return func() { close(release) }
}

// dropWithBlockingCleanup allocates an object and attaches to it a cleanup
// that closes started and waits for release; nothing keeps the object once
// it returns.
//
//go:noinline
func dropWithBlockingCleanup(started, release chan struct{}) {
	runtime.AddCleanup(new([16]byte), func(struct{}) {
		close(started)
		<-release
	}, struct{}{})
}
