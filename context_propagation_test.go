package timingwheel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const propagationTrials = 1000

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestChildrenDoneWhenWheelCancelReturns: every child of a wheel context,
// whether made by package context or by the wheel, is done (Done closed, Err
// set to the parent's) by the time the wheel context's cancel returns, as
// package context's children are when their parent's cancel returns; so is a
// grandchild made by package context. Package context reaches the wheel
// context through its AfterFunc method, which must call the registration
// before cancel returns.
func TestChildrenDoneWhenWheelCancelReturns(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	kinds := []struct {
		name string
		make func(parent context.Context) (context.Context, func())
	}{
		{"context.WithCancel", func(p context.Context) (context.Context, func()) {
			c, cancel := context.WithCancel(p)
			return c, cancel
		}},
		{"context.WithCancelCause", func(p context.Context) (context.Context, func()) {
			c, cancel := context.WithCancelCause(p)
			return c, func() { cancel(nil) }
		}},
		{"context.WithTimeout", func(p context.Context) (context.Context, func()) {
			c, cancel := context.WithTimeout(p, time.Minute) // before the parent's deadline
			return c, cancel
		}},
		{"grandchild of context.WithCancel", func(p context.Context) (context.Context, func()) {
			mid, cancelMid := context.WithCancel(p)
			c, cancel := context.WithCancel(mid)
			return c, func() { cancel(); cancelMid() }
		}},
		{"wheel WithTimeout", func(p context.Context) (context.Context, func()) {
			c, cancel := tw.WithTimeout(p, time.Minute) // before the parent's deadline
			require.IsType(t, (*timeoutCtx)(nil), c)
			return c, cancel
		}},
		{"context.WithCancel of a wheel child", func(p context.Context) (context.Context, func()) {
			mid, cancelMid := tw.WithTimeout(p, time.Minute)
			require.IsType(t, (*timeoutCtx)(nil), mid)
			c, cancel := context.WithCancel(mid)
			return c, func() { cancel(); cancelMid() }
		}},
	}
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			var doneClosed, errSet int
			for range propagationTrials {
				parent, cancelParent := tw.WithTimeout(context.Background(), time.Hour)
				child, cancelChild := kind.make(parent)
				done := child.Done() // obtained before the cancel, as a select loop does
				cancelParent()
				if isClosed(done) {
					doneClosed++
				}
				if errors.Is(child.Err(), context.Canceled) {
					errSet++
				}
				cancelChild()
			}
			require.Equal(t, propagationTrials, doneClosed, "children whose Done was closed when the wheel context's cancel returned")
			require.Equal(t, propagationTrials, doneClosed, "wheel children whose Done was closed when the parent's cancel returned")
			require.Equal(t, propagationTrials, errSet, "children whose Err was Canceled when the wheel context's cancel returned")
		})
	}
}

// TestChildDoneWhenWheelContextExpires: at expiry, a package context child is
// done by the time the wheel's callback that expires its parent returns,
// with the parent's error. With WithInlineCallbacks that callback runs on the
// poller, so a timer due at the same tick, armed after the context and so
// run after its expiry in the same flush, observes the child.
func TestChildDoneWhenWheelContextExpires(t *testing.T) {
	clock := NewFakeClock(time.Unix(0, 0))
	tw, err := New(time.Millisecond, 64, WithClock(clock), WithInlineCallbacks())
	require.NoError(t, err)
	defer tw.Stop()
	parent, cancelParent := tw.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancelParent()
	child, cancelChild := context.WithCancel(parent)
	defer cancelChild()
	done := child.Done()
	observed := make(chan error, 1)
	// Due after the context: the callback that expires it has returned by
	// the time this one runs on the same poller.
	tw.AfterFunc(6*time.Millisecond, func() {
		if !isClosed(done) {
			observed <- errors.New("child's Done not closed")
			return
		}
		observed <- child.Err()
	})
	clock.Advance(10 * time.Millisecond)
	select {
	case err := <-observed:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(30 * time.Second):
		t.Fatal("the observing callback did not run within 30s")
	}
}

// TestContextAfterFuncOnWheelContextRunsOnItsOwnGoroutine:
// context.AfterFunc(wheelCtx, f) still runs f in a goroutine of its own, so a
// blocking f does not hold up the cancel, and f runs once.
func TestContextAfterFuncOnWheelContextRunsOnItsOwnGoroutine(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	ctx, cancel := tw.WithTimeout(context.Background(), time.Hour)
	release := make(chan struct{})
	ran := make(chan struct{})
	context.AfterFunc(ctx, func() {
		<-release
		close(ran)
	})
	withTimeout(t, 30*time.Second, "cancel with a blocked context.AfterFunc", cancel)
	close(release)
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("context.AfterFunc's f did not run within 30s of the cancel")
	}
}

// TestChildMadeWhileWheelContextIsCancelled: package context registers a
// child through AfterFunc with the child's lock held; a wheel context
// cancelled at that moment must not call the registration on the caller's
// goroutine (it would wait for its own lock). Every child ends done.
func TestChildMadeWhileWheelContextIsCancelled(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	withTimeout(t, 60*time.Second, fmt.Sprintf("%d children made during a cancel", propagationTrials), func() {
		for range propagationTrials {
			parent, cancelParent := tw.WithTimeout(context.Background(), time.Hour)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); cancelParent() }()
			child, cancelChild := context.WithCancel(parent)
			wg.Wait()
			select {
			case <-child.Done():
			case <-time.After(30 * time.Second):
				t.Error("a child made during its parent's cancel was not done within 30s")
				cancelChild()
				return
			}
			cancelChild()
		}
	})
}

// TestWheelChildOfPackageContext pins what holds for a wheel context whose
// parent is a package context: once the parent's cancel returns, the child's
// Done channel, obtained before the cancel, is closed, and its Err and
// context.Cause report the parent's reason, in every trial; its own children
// are done later, on a goroutine package context starts, which the test
// waits for (package context cancels synchronously only the contexts it
// made, and the wheel context's Done is one of those: see inner.go).
func TestWheelChildOfPackageContext(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	cause := errors.New("client went away")
	var doneClosed, errSet, causeSet, carrierSet int
	dones := make([]<-chan struct{}, 0, propagationTrials)
	for range propagationTrials {
		parent, cancelParent := context.WithCancelCause(context.Background())
		child, cancelChild := tw.WithTimeout(parent, time.Hour)
		grandchild, cancelGrandchild := context.WithCancel(child)
		childDone := child.Done()
		dones = append(dones, grandchild.Done())
		cancelParent(cause)
		if isClosed(childDone) {
			doneClosed++
		}
		// Value first, as Go 1.24's context.Cause asks it before Err (Go
		// 1.25's asks Err first, which finishes the child for it).
		if child.Value(cancelCtxKey()) != nil {
			carrierSet++
		}
		if context.Cause(child) == cause {
			causeSet++
		}
		if errors.Is(child.Err(), context.Canceled) {
			errSet++
		}
		defer cancelGrandchild()
		defer cancelChild()
	}
	require.Equal(t, propagationTrials, doneClosed, "wheel children whose Done was closed when the parent's cancel returned")
	require.Equal(t, propagationTrials, errSet, "wheel children whose Err was Canceled when the parent's cancel returned")
	require.Equal(t, propagationTrials, carrierSet, "wheel children that gave context.Cause the parent's cause through Value when the parent's cancel returned")
	require.Equal(t, propagationTrials, causeSet, "wheel children whose Cause was the parent's when the parent's cancel returned")
	deadline := time.After(30 * time.Second)
	for i, done := range dones {
		select {
		case <-done:
		case <-deadline:
			t.Fatalf("grandchild %d of %d: Done not closed within 30s of the parent's cancel", i, len(dones))
		}
	}
}
