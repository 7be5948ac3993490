package timingwheel

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ctxAPI is one implementation of the four constructors, with its clock:
// package context on the real clock, or a wheel on a FakeClock.
type ctxAPI struct {
	name              string
	withTimeout       func(context.Context, time.Duration) (context.Context, context.CancelFunc)
	withDeadline      func(context.Context, time.Time) (context.Context, context.CancelFunc)
	withTimeoutCause  func(context.Context, time.Duration, error) (context.Context, context.CancelFunc)
	withDeadlineCause func(context.Context, time.Time, error) (context.Context, context.CancelFunc)
	now               func() time.Time
	// pass lets d pass on the clock.
	pass func(d time.Duration)
}

func packageContextAPI() ctxAPI {
	return ctxAPI{
		name:        "context",
		withTimeout: context.WithTimeout, withDeadline: context.WithDeadline,
		withTimeoutCause: context.WithTimeoutCause, withDeadlineCause: context.WithDeadlineCause,
		now:  time.Now,
		pass: time.Sleep,
	}
}

func fakeWheelAPI(t *testing.T) ctxAPI {
	fc := NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tw, err := New(time.Millisecond, 64, WithClock(fc))
	require.NoError(t, err)
	t.Cleanup(tw.Stop)
	return ctxAPI{
		name:        "wheel",
		withTimeout: tw.WithTimeout, withDeadline: tw.WithDeadline,
		withTimeoutCause: tw.WithTimeoutCause, withDeadlineCause: tw.WithDeadlineCause,
		now:  fc.Now,
		pass: fc.Advance,
	}
}

var errCause = errors.New("the cause")

// deadlineParent has a deadline on whichever clock the test uses, and is
// never done: package context's would be done on the real clock.
type deadlineParent struct {
	context.Context
	at time.Time
}

func (p deadlineParent) Deadline() (time.Time, bool) { return p.at, true }

type ctxKey struct{}

// observe describes ctx as a test compares it across implementations: done
// or not, Err, Cause, a value through it, its deadline relative to want,
// and the shape of its String.
func observe(ctx context.Context, wantDeadline time.Time, slack time.Duration) string {
	done := "open"
	select {
	case <-ctx.Done():
		done = "closed"
	default:
	}
	dl, ok := ctx.Deadline()
	where := "none"
	if ok {
		switch off := dl.Sub(wantDeadline); {
		case off >= 0 && off <= slack:
			where = "as asked"
		default:
			where = fmt.Sprintf("off by %v", off)
		}
	}
	return fmt.Sprintf("done=%s err=%v cause=%v value=%v deadline=%s string=%s",
		done, ctx.Err(), context.Cause(ctx), ctx.Value(ctxKey{}), where, stringShape(ctx))
}

// stringShape is what the String of a context made on parent says: which
// constructor made it, with its details replaced by their form.
func stringShape(ctx context.Context) string {
	s := ctx.(fmt.Stringer).String()
	switch i := strings.LastIndex(s, ".WithDeadline("); {
	case strings.HasSuffix(s, ".WithCancel"):
		return "parent.WithCancel"
	case i >= 0 && strings.HasSuffix(s, "])") && strings.Contains(s[i:], " ["):
		return "parent.WithDeadline(time [left])"
	default:
		return s
	}
}

// awaitDone waits for ctx to be done: a wheel on a FakeClock expires on its
// poller after Advance returns.
func awaitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(semWait):
		t.Fatalf("context not done %v after its deadline passed", semWait)
	}
}

// TestContextSameAsPackageContext runs each scenario on package context and
// on a wheel, and requires the same observations.
func TestContextSameAsPackageContext(t *testing.T) {
	const d = 30 * time.Millisecond
	base := context.WithValue(context.Background(), ctxKey{}, "v")
	scenarios := []struct {
		name string
		run  func(t *testing.T, api ctxAPI) []string
	}{
		{"timeout then cancel", func(t *testing.T, api ctxAPI) []string {
			start := api.now()
			ctx, cancel := api.withTimeout(base, d)
			before := observe(ctx, start.Add(d), time.Millisecond)
			cancel()
			cancel() // idempotent
			return []string{before, observe(ctx, start.Add(d), time.Millisecond)}
		}},
		{"timeout expires", func(t *testing.T, api ctxAPI) []string {
			start := api.now()
			ctx, cancel := api.withTimeout(base, d)
			defer cancel()
			api.pass(d + time.Millisecond)
			awaitDone(t, ctx)
			after := observe(ctx, start.Add(d), time.Millisecond)
			cancel()
			return []string{after, observe(ctx, start.Add(d), time.Millisecond)}
		}},
		{"timeout cause expires", func(t *testing.T, api ctxAPI) []string {
			start := api.now()
			ctx, cancel := api.withTimeoutCause(base, d, errCause)
			defer cancel()
			api.pass(d + time.Millisecond)
			awaitDone(t, ctx)
			return []string{observe(ctx, start.Add(d), time.Millisecond)}
		}},
		{"timeout cause cancelled", func(t *testing.T, api ctxAPI) []string {
			start := api.now()
			ctx, cancel := api.withTimeoutCause(base, d, errCause)
			cancel()
			return []string{observe(ctx, start.Add(d), time.Millisecond)}
		}},
		{"deadline expires", func(t *testing.T, api ctxAPI) []string {
			at := api.now().Add(d)
			ctx, cancel := api.withDeadlineCause(base, at, errCause)
			defer cancel()
			before := observe(ctx, at, 0)
			api.pass(d + time.Millisecond)
			awaitDone(t, ctx)
			return []string{before, observe(ctx, at, 0)}
		}},
		{"zero and negative timeouts, past deadline", func(t *testing.T, api ctxAPI) []string {
			var obs []string
			for _, dd := range []time.Duration{0, -time.Second, time.Duration(-1 << 63)} {
				start := api.now()
				ctx, cancel := api.withTimeout(base, dd)
				obs = append(obs, observe(ctx, start.Add(dd), time.Millisecond))
				cancel()
				obs = append(obs, observe(ctx, start.Add(dd), time.Millisecond))
			}
			at := api.now().Add(-time.Hour)
			ctx, cancel := api.withDeadlineCause(base, at, errCause)
			defer cancel()
			return append(obs, observe(ctx, at, 0))
		}},
		{"parent done before", func(t *testing.T, api ctxAPI) []string {
			parent, cancelParent := context.WithCancelCause(base)
			cancelParent(errCause)
			start := api.now()
			ctx, cancel := api.withTimeout(parent, d)
			defer cancel()
			return []string{observe(ctx, start.Add(d), time.Millisecond)}
		}},
		{"parent done after", func(t *testing.T, api ctxAPI) []string {
			parent, cancelParent := context.WithCancelCause(base)
			start := api.now()
			ctx, cancel := api.withTimeout(parent, d)
			defer cancel()
			cancelParent(errCause)
			// Done, Err and Cause are the parent's as soon as the parent's
			// cancel returns, as with package context (inner.go).
			return []string{observe(ctx, start.Add(d), time.Millisecond)}
		}},
		{"parent deadline earlier", func(t *testing.T, api ctxAPI) []string {
			at := api.now().Add(d)
			parent := deadlineParent{base, at}
			ctx, cancel := api.withTimeout(parent, time.Hour)
			cancel()
			return []string{observe(ctx, at, 0)}
		}},
		{"parent deadline later", func(t *testing.T, api ctxAPI) []string {
			start := api.now()
			parent := deadlineParent{base, start.Add(time.Hour)}
			ctx, cancel := api.withTimeout(parent, d)
			defer cancel()
			return []string{observe(ctx, start.Add(d), time.Millisecond)}
		}},
		{"children", func(t *testing.T, api ctxAPI) []string {
			start := api.now()
			ctx, cancel := api.withTimeoutCause(base, d, errCause)
			defer cancel()
			child, cancelChild := context.WithCancel(ctx)
			defer cancelChild()
			ran := make(chan struct{})
			stop := context.AfterFunc(ctx, func() { close(ran) })
			stopped := context.AfterFunc(ctx, func() { t.Error("a stopped AfterFunc ran") })
			first, second := stopped(), stopped()
			api.pass(d + time.Millisecond)
			awaitDone(t, child)
			awaitSignal(t, ran, "the context's AfterFunc")
			return []string{
				observe(child, start.Add(d), time.Millisecond),
				fmt.Sprintf("stop after run: %v; stop twice: %v %v", stop(), first, second),
			}
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			want := sc.run(t, packageContextAPI())
			got := sc.run(t, fakeWheelAPI(t))
			assert.Equal(t, want, got)
		})
	}
}

// TestContextNeverEarly watches contexts on the real clock: Err is nil
// strictly before the deadline, and the deadline is that of package context.
func TestContextNeverEarly(t *testing.T) {
	tw, err := New(time.Millisecond, 8)
	require.NoError(t, err)
	defer tw.Stop()
	var wg sync.WaitGroup
	for i := range 50 {
		d := time.Duration(i%20)*time.Millisecond + time.Duration(i)*37*time.Microsecond
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := tw.WithTimeout(context.Background(), d)
			defer cancel()
			deadline, _ := ctx.Deadline()
			for ctx.Err() == nil {
				runtime.Gosched()
			}
			now := time.Now()
			if now.Before(deadline) {
				t.Errorf("WithTimeout(%v): Err = %v %v before the deadline", d, ctx.Err(), deadline.Sub(now))
			}
			<-ctx.Done()
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.Errorf("Err = %v, want DeadlineExceeded", ctx.Err())
			}
		}()
	}
	waitWithin(t, &wg, "every context done at its deadline")
}

// TestContextChildrenCostNoGoroutine makes 1000 children of each kind on a
// pending wheel context, and wheel contexts on package context and wheel
// parents: none may start a goroutine while pending.
func TestContextChildrenCostNoGoroutine(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	cancellable, cancelCancellable := context.WithCancel(context.Background())
	defer cancelCancellable()
	wheelParent, cancelWheelParent := tw.WithTimeout(context.Background(), time.Hour)
	defer cancelWheelParent()
	makers := map[string]func(parent context.Context) (context.Context, func()){
		"context.WithCancel": func(p context.Context) (context.Context, func()) {
			c, cancel := context.WithCancel(p)
			return c, cancel
		},
		"context.WithTimeout": func(p context.Context) (context.Context, func()) {
			c, cancel := context.WithTimeout(p, time.Hour)
			return c, cancel
		},
		"context.AfterFunc": func(p context.Context) (context.Context, func()) {
			stop := context.AfterFunc(p, func() {})
			return nil, func() { stop() }
		},
		"wheel.WithTimeout": func(p context.Context) (context.Context, func()) {
			c, cancel := tw.WithTimeout(p, time.Hour)
			return c, cancel
		},
	}
	parents := map[string]context.Context{"wheel context": wheelParent}
	for name, p := range parents {
		for kind, mk := range makers {
			t.Run(kind+" on "+name, func(t *testing.T) {
				before := runtime.NumGoroutine()
				var cancels []func()
				for range 1000 {
					_, cancel := mk(p)
					cancels = append(cancels, cancel)
				}
				grew := runtime.NumGoroutine() - before
				for _, cancel := range cancels {
					cancel()
				}
				assert.Less(t, grew, 10, "goroutines started for 1000 children")
			})
		}
	}
	t.Run("wheel.WithTimeout on context.WithCancel", func(t *testing.T) {
		before := runtime.NumGoroutine()
		var cancels []func()
		for range 1000 {
			_, cancel := tw.WithTimeout(cancellable, time.Hour)
			cancels = append(cancels, cancel)
		}
		grew := runtime.NumGoroutine() - before
		for _, cancel := range cancels {
			cancel()
		}
		assert.Less(t, grew, 10, "goroutines started for 1000 wheel contexts")
	})
}

// TestContextWheelChildIsDoneWithItsParent: a wheel child of a wheel context
// is done before the parent's cancel returns, with the parent's cause.
func TestContextWheelChildIsDoneWithItsParent(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	parent, cancelParent := tw.WithTimeoutCause(context.Background(), time.Hour, errCause)
	child, cancelChild := tw.WithTimeout(parent, 2*time.Hour) // earlier parent deadline: a WithCancel
	defer cancelChild()
	wheelChild, cancelWheelChild := tw.WithTimeout(parent, time.Minute)
	defer cancelWheelChild()
	require.Equal(t, 3-1, tw.Len(), "the two wheel contexts' timers") // child is context.WithCancel
	cancelParent()
	// Done and Len first: Err would itself notice the parent is done.
	select {
	case <-wheelChild.Done():
	default:
		t.Error("wheel child's Done is open after its parent's cancel returned")
	}
	assert.Equal(t, 0, tw.Len(), "cancel of the parent released the child's timer")
	assert.ErrorIs(t, wheelChild.Err(), context.Canceled)
	assert.Equal(t, context.Canceled, context.Cause(wheelChild), "the parent was cancelled, not expired")
	awaitDone(t, child)
	assert.ErrorIs(t, child.Err(), context.Canceled)
}

// TestContextCancelReleasesTimer: the wheel's Len counts a pending context
// and drops when it is cancelled.
func TestContextCancelReleasesTimer(t *testing.T) {
	tw, err := New(time.Millisecond, 64)
	require.NoError(t, err)
	defer tw.Stop()
	var cancels []context.CancelFunc
	for i := range 100 {
		_, cancel := tw.WithTimeout(context.Background(), time.Duration(i+1)*time.Minute)
		cancels = append(cancels, cancel)
	}
	require.Equal(t, 100, tw.Len())
	for i, cancel := range cancels {
		cancel()
		cancel()
		require.Equal(t, 100-i-1, tw.Len())
	}
	assert.Equal(t, uint64(100), tw.Stats().Stopped)
}

// TestContextCancelRacesExpiry cancels contexts as they expire: each has
// exactly one outcome, with Cause consistent with Err, and each timer is
// either stopped or fired.
func TestContextCancelRacesExpiry(t *testing.T) {
	tw, err := New(time.Millisecond, 8)
	require.NoError(t, err)
	defer tw.Stop()
	const n = 2000
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	for i := range n {
		ctx, cancel := tw.WithTimeoutCause(context.Background(), time.Duration(i%5)*time.Millisecond, errCause)
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i%7) * time.Millisecond)
			cancel()
			first := ctx.Err()
			<-ctx.Done()
			for range 3 {
				if ctx.Err() != first {
					t.Errorf("Err changed from %v to %v", first, ctx.Err())
				}
			}
			switch cause := context.Cause(ctx); {
			case first == context.Canceled && cause == context.Canceled:
			case first == context.DeadlineExceeded && cause == errCause:
			default:
				t.Errorf("Err %v with Cause %v", first, cause)
			}
			mu.Lock()
			outcomes[first.Error()]++
			mu.Unlock()
		}()
	}
	waitWithin(t, &wg, "every racing goroutine")
	st := tw.Stats()
	assert.Equal(t, 0, st.Pending)
	assert.Equal(t, uint64(n*4/5), st.Fired+st.Stopped, "each context's timer fired or was stopped; d = 0 arms none")
	t.Logf("outcomes: %v", outcomes)
}

// TestContextStoppedWheel: on a stopped wheel a context never expires, and
// is still cancellable.
func TestContextStoppedWheel(t *testing.T) {
	fc := NewFakeClock(time.Unix(0, 0))
	tw, err := New(time.Millisecond, 8, WithClock(fc))
	require.NoError(t, err)
	before, cancelBefore := tw.WithTimeout(context.Background(), time.Second)
	defer cancelBefore()
	tw.Stop()
	after, cancelAfter := tw.WithTimeout(context.Background(), time.Second)
	fc.Advance(time.Hour)
	time.Sleep(10 * time.Millisecond)
	assert.NoError(t, before.Err())
	assert.NoError(t, after.Err())
	cancelAfter()
	assert.ErrorIs(t, after.Err(), context.Canceled)
	awaitDone(t, after)
}

// TestContextExpiresOnTheWheelClock: on a FakeClock, a context is done once
// the clock reaches its deadline rounded up to the tick, not before.
func TestContextExpiresOnTheWheelClock(t *testing.T) {
	fc := NewFakeClock(time.Unix(0, 0))
	tw, err := New(10*time.Millisecond, 8, WithClock(fc))
	require.NoError(t, err)
	defer tw.Stop()
	ctx, cancel := tw.WithTimeout(context.Background(), 25*time.Millisecond)
	defer cancel()
	fc.Advance(24 * time.Millisecond)
	time.Sleep(20 * time.Millisecond) // give a wrong poller time to fire
	require.NoError(t, ctx.Err(), "done before its deadline")
	fc.Advance(6 * time.Millisecond) // 30 ms: the tick after 25 ms
	awaitDone(t, ctx)
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
}

func TestContextPanics(t *testing.T) {
	tw, err := New(time.Millisecond, 8)
	require.NoError(t, err)
	defer tw.Stop()
	//lint:ignore SA1012 a nil parent is the point
	assert.PanicsWithValue(t, "cannot create context from nil parent", func() { tw.WithTimeout(nil, time.Second) })
	//lint:ignore SA1012 a nil parent is the point
	assert.PanicsWithValue(t, "cannot create context from nil parent", func() { tw.WithDeadline(nil, time.Now()) })
	ctx, cancel := tw.WithTimeout(context.Background(), time.Second)
	defer cancel()
	af := ctx.(interface{ AfterFunc(func()) func() bool })
	assert.PanicsWithValue(t, "timingwheel: AfterFunc called on a context with nil func", func() { af.AfterFunc(nil) })
}

// TestContextDeadlineAndString: WithDeadline returns the caller's deadline
// as given (location included), and String names the parent, as package
// context's does.
func TestContextDeadlineAndString(t *testing.T) {
	fc := NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tw, err := New(time.Millisecond, 64, WithClock(fc))
	require.NoError(t, err)
	defer tw.Stop()
	at := fc.Now().Add(90 * time.Second).In(time.FixedZone("X", 3600))
	ctx, cancel := tw.WithDeadline(context.Background(), at)
	defer cancel()
	got, ok := ctx.Deadline()
	assert.True(t, ok)
	assert.True(t, got == at, "Deadline() = %v, want %v as given", got, at)
	assert.Equal(t, "context.Background.WithDeadline("+at.String()+" [1m30s])", ctx.(fmt.Stringer).String())

	timeout, cancelTimeout := tw.WithTimeout(ctx, time.Minute)
	defer cancelTimeout()
	dl, _ := timeout.Deadline()
	assert.True(t, dl.Equal(fc.Now().Add(time.Minute)))
	assert.Equal(t, ctx.(fmt.Stringer).String()+".WithDeadline("+dl.String()+" [1m0s])", timeout.(fmt.Stringer).String())

	// On a package parent the inner context (inner.go) is not named.
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()
	onPackage, cancelOnPackage := tw.WithDeadline(parent, at)
	defer cancelOnPackage()
	assert.Equal(t, "context.Background.WithCancel.WithDeadline("+at.String()+" [1m30s])", onPackage.(fmt.Stringer).String())
}

// TestContextOnEveryExecutor expires a wheel context with wheel and package
// context children on each callback mode: hooks run with no lock held, also
// on the poller (inline) and on a worker.
func TestContextOnEveryExecutor(t *testing.T) {
	for name, opt := range map[string][]Option{
		"goroutines": nil,
		"inline":     {WithInlineCallbacks()},
		"pool":       {WithWorkerPool(2)},
	} {
		t.Run(name, func(t *testing.T) {
			fc := NewFakeClock(time.Unix(0, 0))
			tw, err := New(time.Millisecond, 8, append(opt, WithClock(fc))...)
			require.NoError(t, err)
			defer tw.Stop()
			parent, cancel := tw.WithTimeoutCause(context.Background(), 10*time.Millisecond, errCause)
			defer cancel()
			var children []context.Context
			for range 10 {
				w, cw := tw.WithTimeout(parent, time.Hour) // parent's deadline is earlier: a WithCancel
				defer cw()
				w2, cw2 := tw.WithDeadline(parent, time.Unix(0, 0).Add(5*time.Millisecond)) // a wheel context
				defer cw2()
				c, cc := context.WithCancel(w2)
				defer cc()
				children = append(children, w, w2, c)
			}
			fc.Advance(5 * time.Millisecond)
			for i, c := range children {
				if i%3 == 0 {
					continue // the children of parent, not yet due
				}
				awaitDone(t, c)
				assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
				assert.Equal(t, context.DeadlineExceeded, context.Cause(c))
			}
			require.NoError(t, parent.Err())
			fc.Advance(5 * time.Millisecond)
			for _, c := range children {
				awaitDone(t, c)
			}
			assert.Equal(t, errCause, context.Cause(children[0]))
			assert.Equal(t, 0, tw.Len())
		})
	}
}

// TestContextPackageLevelForms: WithTimeout, WithDeadline, WithTimeoutCause
// and WithDeadlineCause of the package make their contexts on the default
// wheel, with package context's semantics: done no earlier than the
// deadline, DeadlineExceeded, and the cause given.
func TestContextPackageLevelForms(t *testing.T) {
	const d = 2 * time.Millisecond
	for _, tc := range []struct {
		name  string
		make  func() (context.Context, context.CancelFunc)
		cause error
	}{
		{"WithTimeout", func() (context.Context, context.CancelFunc) { return WithTimeout(context.Background(), d) }, context.DeadlineExceeded},
		{"WithDeadline", func() (context.Context, context.CancelFunc) {
			return WithDeadline(context.Background(), time.Now().Add(d))
		}, context.DeadlineExceeded},
		{"WithTimeoutCause", func() (context.Context, context.CancelFunc) {
			return WithTimeoutCause(context.Background(), d, errCause)
		}, errCause},
		{"WithDeadlineCause", func() (context.Context, context.CancelFunc) {
			return WithDeadlineCause(context.Background(), time.Now().Add(d), errCause)
		}, errCause},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			ctx, cancel := tc.make()
			made := time.Now()
			defer cancel()
			c, ok := ctx.(*timeoutCtx)
			require.True(t, ok, "a %T, not a wheel context", ctx)
			require.Same(t, Default(), c.shard().wheel, "not on the default wheel")
			deadline, ok := ctx.Deadline()
			require.True(t, ok)
			require.False(t, deadline.Before(start.Add(d)) || deadline.After(made.Add(d)),
				"deadline %v is not d=%v after a time during the call (%v to %v)", deadline, d, start, made)
			awaitDone(t, ctx)
			require.GreaterOrEqual(t, time.Since(start), d, "done early")
			require.Equal(t, context.DeadlineExceeded, ctx.Err())
			require.Equal(t, tc.cause, context.Cause(ctx))
		})
	}
}
