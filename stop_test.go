package timingwheel

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stopModes are the callback modes whose Stop waits for goroutines that run
// callbacks: the poller (inline) and the workers (pool).
var stopModes = []struct {
	name string
	opts []Option
}{
	{"inline", []Option{WithInlineCallbacks()}},
	{"pool", []Option{WithWorkerPool(2)}},
}

// TestStopFromCallbackWhileAnotherStopWaits: a callback calls Stop while
// another goroutine's Stop is waiting for the goroutine that runs that
// callback. The callback's Stop must return without waiting, and the outside
// Stop must return once the callback has returned and the wheel has stopped
// (the poller has exited; with a pool, the queued callbacks have run and the
// workers have exited). Before the fix the callback's Stop waited on the
// outside Stop's sync.Once, which waited for the callback: a deadlock.
func TestStopFromCallbackWhileAnotherStopWaits(t *testing.T) {
	for _, mode := range stopModes {
		t.Run(mode.name, func(t *testing.T) {
			for range 50 {
				stopFromCallbackWhileAnotherStopWaits(t, mode.opts)
				if t.Failed() {
					return
				}
			}
		})
	}
}

func stopFromCallbackWhileAnotherStopWaits(t *testing.T, opts []Option) {
	tw, err := New(time.Millisecond, 8, opts...)
	require.NoError(t, err)
	const outside = 3
	running := make(chan struct{})
	callbackStopped := make(chan struct{})
	var callbackDone, queuedRan atomic.Bool
	tw.AfterFunc(time.Millisecond, func() {
		close(running)
		// Every outside Stop has begun once the wheel reads stopped; the
		// first of them waits for this goroutine, which is busy here.
		waitUntil(t, 30*time.Second, "the outside Stop to begin", tw.stopped.Load)
		tw.Stop()
		close(callbackStopped)
		time.Sleep(time.Millisecond) // the outside Stop must wait for this too
		callbackDone.Store(true)
	})
	if tw.exec.mode == execPool {
		// Queued behind the stopping callback on a pool of two: a Stop
		// from outside waits for it.
		tw.AfterFunc(time.Millisecond, func() {
			<-callbackStopped
			queuedRan.Store(true)
		})
	}
	select {
	case <-running:
	case <-time.After(30 * time.Second):
		t.Fatal("the callback did not run within 30s")
	}
	var wg sync.WaitGroup
	returned := make(chan struct{})
	for range outside {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tw.Stop()
			// Every outside Stop returns after the wheel has wholly stopped.
			assert.True(t, callbackDone.Load(), "an outside Stop returned before the callback that stopped the wheel returned")
			select {
			case <-tw.done:
			default:
				t.Error("an outside Stop returned before the poller exited")
			}
			if tw.exec.mode == execPool {
				assert.True(t, queuedRan.Load(), "an outside Stop returned before a queued callback ran")
			}
		}()
	}
	go func() { wg.Wait(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatal("deadlock: Stop from a callback and Stop from outside did not return within 30s")
	}
}

// TestStopFromCallbackDoesNotWaitForItself: the first Stop, called from a
// callback while another callback of the same wheel is still running, returns
// without waiting for its own goroutine; a later Stop from outside waits for
// every callback the wheel's goroutines run.
func TestStopFromCallbackDoesNotWaitForItself(t *testing.T) {
	for _, mode := range stopModes {
		t.Run(mode.name, func(t *testing.T) {
			tw, err := New(time.Millisecond, 8, mode.opts...)
			require.NoError(t, err)
			stopped := make(chan struct{})
			release := make(chan struct{})
			var releaseOnce sync.Once
			defer releaseOnce.Do(func() { close(release) }) // on failure too
			var finished atomic.Bool
			tw.AfterFunc(time.Millisecond, func() {
				tw.Stop()
				close(stopped)
				<-release
				finished.Store(true)
			})
			select {
			case <-stopped:
			case <-time.After(30 * time.Second):
				t.Fatal("Stop from a callback did not return within 30s")
			}
			outside := make(chan struct{})
			go func() { tw.Stop(); close(outside) }()
			select {
			case <-outside:
				t.Fatal("Stop from outside returned while a callback of the wheel was still running")
			case <-time.After(10 * time.Millisecond):
			}
			releaseOnce.Do(func() { close(release) })
			select {
			case <-outside:
			case <-time.After(30 * time.Second):
				t.Fatal("Stop from outside did not return within 30s of the callback returning")
			}
			require.True(t, finished.Load())
		})
	}
}

// waitUntil polls cond until it holds, failing the test after d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Errorf("waited %v for %s", d, what)
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}
