package timingwheel

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInnerContextRaces races the three ways a wheel context on a package
// parent can be done (the parent's cancel with a cause, its own cancel, its
// deadline), with a package child and a context.AfterFunc on it; one
// iteration in four cancels the parent only after the context is done.
// Whichever wins: Done closes, Err is set for good and agrees with Cause (the parent's
// cause, Canceled, or the timeout's cause), the child reports the same Err,
// the AfterFunc runs exactly once, and no timer is left on the wheel once
// every cancel has been called.
func TestInnerContextRaces(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	parentCause := errors.New("client went away")
	const n = 2000
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	for i := range n {
		parent, cancelParent := context.WithCancelCause(context.Background())
		ctx, cancel := tw.WithTimeoutCause(parent, time.Duration(1+i%4)*time.Millisecond, errCause)
		child, cancelChild := context.WithCancel(ctx)
		var ran atomic.Int32
		stopAfter := context.AfterFunc(ctx, func() { ran.Add(1) })
		wg.Add(3)
		go func() {
			defer wg.Done()
			if i%4 == 0 {
				return // the parent is cancelled after ctx is done: Done must close without it
			}
			time.Sleep(time.Duration(i%3) * time.Millisecond)
			cancelParent(parentCause)
		}()
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i%5) * time.Millisecond)
			cancel()
		}()
		go func() {
			defer wg.Done()
			defer cancelChild()
			defer cancelParent(nil)
			<-ctx.Done()
			first := ctx.Err()
			var want error
			switch first {
			case context.Canceled:
				want = context.Canceled // own cancel
				if context.Cause(ctx) == parentCause {
					want = parentCause
				}
			case context.DeadlineExceeded:
				want = errCause
			default:
				t.Errorf("Err %v after Done closed", first)
				return
			}
			assert.Equal(t, want, context.Cause(ctx), "Cause for Err %v", first)
			awaitDone(t, child)
			assert.Equal(t, first, child.Err(), "the child's Err")
			assert.Equal(t, first, ctx.Err(), "Err changed")
			deadline := time.Now().Add(10 * time.Second)
			for ran.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			assert.False(t, stopAfter(), "AfterFunc not yet run or stopped after Done")
			assert.Equal(t, int32(1), ran.Load(), "AfterFunc runs")
			mu.Lock()
			outcomes[want.Error()]++
			mu.Unlock()
		}()
	}
	waitWithin(t, &wg, "every racing goroutine")
	assert.Equal(t, 0, tw.Len(), "timers left once every cancel was called")
	t.Logf("outcomes: %v", outcomes)
}

// TestInnerContextTellsItsHooks: with nothing calling the wheel context's
// methods, its parent's cancel still reaches its package child and its
// context.AfterFunc (watchInner), on package context's goroutine.
func TestInnerContextTellsItsHooks(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	parent, cancelParent := context.WithCancelCause(context.Background())
	ctx, cancel := tw.WithTimeout(parent, time.Hour)
	defer cancel()
	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	ran := make(chan struct{})
	context.AfterFunc(ctx, func() { close(ran) })
	cancelParent(errCause)
	for what, done := range map[string]<-chan struct{}{"the child's Done": child.Done(), "the AfterFunc": ran} {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: not done within 30 s of the parent's cancel", what)
		}
	}
	assert.Equal(t, errCause, context.Cause(child))
}

// TestInnerContextDoneWhenCancelReturns holds a wheel context on a package
// parent where finish leaves it for a moment, when an expiry on the wheel's
// goroutine has stored the result but not yet cancelled the inner context:
// a cancel or an Err that comes then returns only once Done is closed, as
// with package context (the matrix's ctxcancelparent cells check the first
// after every cancel, and failed on it once in about a million).
func TestInnerContextDoneWhenCancelReturns(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()
	for name, call := range map[string]func(context.Context, context.CancelFunc){
		"cancel": func(_ context.Context, cancel context.CancelFunc) { cancel() },
		"Err":    func(ctx context.Context, _ context.CancelFunc) { require.Error(t, ctx.Err()) },
	} {
		ctx, cancel := tw.WithTimeout(parent, time.Hour)
		c := ctx.(*timeoutCtx)
		s := c.shard()
		s.mu.Lock()
		require.True(t, s.stopLocked(&c.timer))
		c.result.Store(newResult(context.DeadlineExceeded, context.DeadlineExceeded))
		s.unlock()
		call(ctx, cancel)
		select {
		case <-ctx.Done():
		default:
			t.Errorf("%s returned before Done was closed", name)
		}
		assert.Equal(t, context.DeadlineExceeded, ctx.Err(), name)
		c.cancelInner() // what finish would have done
	}
	assert.Equal(t, 0, tw.Len())
}
