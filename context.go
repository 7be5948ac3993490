package timingwheel

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Contexts whose deadline is a timer on the wheel: context.WithTimeout and
// friends, with the wheel's cost instead of a runtime timer's.
//
// A timeoutCtx is one allocation with its Timer embedded, plus one closure
// (fire) that is the Timer's callback, the CancelFunc and the hook its
// parent calls, plus the done channel once Done is called: 240 bytes in 3
// allocations, against 384 in 5 for context.WithTimeout (BenchmarkMatrix,
// op=ctxbackground). To fit in 112 bytes it has no mutex of its own: the mu
// of its Timer's shard guards done, extra and the Timer, which also makes
// "cancel stopped the timer" and "the timer fired" one decision under one
// lock. Hooks, and the parent's methods, are called with that mu released:
// the parent, a child or an AfterFunc may live on the same shard.
//
// On a parent that is not a wheel context it stands on a
// context.WithCancel of that parent (see inner.go): 336 bytes in 5
// allocations against 384 in 5.
type timeoutCtx struct {
	parent context.Context // the caller's, or the inner context on it (inner.go)
	timer  Timer           // f is fire; its owner's shard's mu guards the fields below
	// deadline is in wheel time (since the wheel's epoch); WithDeadline keeps
	// the caller's exact time.Time in extra.
	deadline time.Duration
	done     chan struct{}             // made by Done; closedchan if done first
	result   atomic.Pointer[ctxResult] // nil until done, then never changed
	extra    *ctxExtra                 // what few contexts need; nil for most
	// stopParent releases a registration made through an AfterFunc method
	// (see watch and watchInner).
	stopParent func() bool
	// cancelInner is set, for good, when parent is the context.WithCancel of
	// the caller's parent that stands between them (see withDeadline): Done
	// is then parent's, and finish cancels parent.
	cancelInner context.CancelFunc
}

// ctxExtra holds what only some contexts need, so that the common one, a
// WithTimeout on Background with no cause, does not carry it.
type ctxExtra struct {
	cause       error     // WithTimeoutCause, WithDeadlineCause: the cause at expiry
	deadline    time.Time // WithDeadline: the caller's time, returned as given
	hasDeadline bool
	hooks       map[*ctxHook]struct{} // AfterFunc and wheel children, until done
	watching    bool                  // the context watches its inner parent for the hooks
}

// A ctxHook is a function to call once the context is done, on the
// goroutine that makes it done, before that goroutine's cancel returns: a
// wheel child's fire, or the f of an AfterFunc registration, by which
// package context watches the context for the children it makes on it. So
// every child is done as soon as its parent's cancel returns, as package
// context's children are.
type ctxHook struct {
	f func()
}

// ctxResult is why a context is done. It never changes once stored.
type ctxResult struct {
	err, cause error
	// carrier is what Value returns for package context's cancelCtxKey, so
	// that context.Cause reports cause; nil when cause is err, for which
	// Cause falls back to Err.
	carrier any
}

var (
	canceledResult = &ctxResult{err: context.Canceled, cause: context.Canceled}
	expiredResult  = &ctxResult{err: context.DeadlineExceeded, cause: context.DeadlineExceeded}
)

func newResult(err, cause error) *ctxResult {
	if cause == nil || cause == err {
		switch err {
		case context.Canceled:
			return canceledResult
		case context.DeadlineExceeded:
			return expiredResult
		}
		return &ctxResult{err: err, cause: err}
	}
	return &ctxResult{err: err, cause: cause, carrier: causeCarrier(cause)}
}

// causeCarrier returns package context's own record of a cancellation with
// cause, as context.Cause looks it up through Value. context.Cause reads the
// cause only from package context's cancelCtx, which no other package can
// make except through WithCancelCause: so one is made, cancelled with cause,
// only for the rare context done with a cause other than its error.
func causeCarrier(cause error) any {
	key := cancelCtxKey()
	if key == nil {
		return nil
	}
	cc, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	return cc.Value(key)
}

// cancelCtxKey returns the key under which package context's Cause asks a
// context for its cancelCtx, learned by asking Cause about a probe: the key
// is unexported. If a future Go stops asking, it is nil and Cause reports
// Err instead of a custom cause (TestContextSameAsPackageContext fails
// then, in "timeout cause expires").
var cancelCtxKey = sync.OnceValue(func() any {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := &keyProbe{Context: ctx}
	_ = context.Cause(p)
	return p.key
})

type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(key any) any {
	if p.key == nil {
		p.key = key
	}
	return nil
}

// closedchan is the Done channel of a context done before Done was called.
var closedchan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// WithTimeout is context.WithTimeout with its timer on the wheel: it returns
// WithDeadline(parent, now+d), now read from the wheel's clock.
//
// The returned context is done, with Err context.DeadlineExceeded, once d
// has elapsed on the wheel's clock: never before, and about one tick after
// at most (see the package documentation for the exact bound). Otherwise it
// behaves as package context's: it is done when cancel is called or when
// parent is done, whichever happens first; a d <= 0 returns a context that
// is already done; cancel is idempotent and releases the timer at once
// (Len drops). A nil parent panics.
//
// Children made on it with context.WithCancel, context.WithTimeout and the
// like, and the wheel's WithTimeout and WithDeadline, cost no goroutine while
// pending, and are done (Done closed, Err set) by the time its cancel
// returns, as package context's children are; at expiry, by the time the
// wheel's callback that expires it returns. A context.AfterFunc on it runs
// its f in a goroutine of its own, as package context does.
//
// One difference from package context: when parent is not a wheel context
// (a package context, such as an http.Request's), the returned context's
// Done is closed, and its Err and context.Cause report parent's reason, by
// the time parent's cancel returns, but its own children and AfterFuncs are
// done a moment later, on a goroutine that package context starts then,
// since package context cancels synchronously only the contexts it made
// itself. A parent made by a wheel has no such gap. And its timer stays on
// the wheel (Len counts it) until cancel is called, Err or Value notices the
// parent is done, or the deadline passes, where package context releases a
// child's timer with its parent's cancel.
//
// On a stopped wheel the timer never fires: the context is done only by
// cancel or by its parent.
func (tw *TimingWheel) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return tw.WithTimeoutCause(parent, d, nil)
}

// WithTimeoutCause is WithTimeout that also sets the cause returned by
// context.Cause when the timeout expires, as context.WithTimeoutCause does.
// The returned CancelFunc does not set the cause.
func (tw *TimingWheel) WithTimeoutCause(parent context.Context, d time.Duration, cause error) (context.Context, context.CancelFunc) {
	if parent == nil {
		panic("cannot create context from nil parent")
	}
	now := tw.now()
	return tw.withDeadline(parent, now, addDuration(now, d), time.Time{}, false, cause)
}

// WithDeadline is context.WithDeadline with its timer on the wheel: the
// returned context is done once the wheel's clock reads deadline or later,
// never before. If parent's deadline is earlier, it returns
// context.WithCancel(parent), as package context does. See WithTimeout for
// the rest of the contract.
func (tw *TimingWheel) WithDeadline(parent context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	return tw.WithDeadlineCause(parent, deadline, nil)
}

// WithDeadlineCause is WithDeadline that also sets the cause returned by
// context.Cause when the deadline is exceeded, as context.WithDeadlineCause
// does. The returned CancelFunc does not set the cause.
func (tw *TimingWheel) WithDeadlineCause(parent context.Context, deadline time.Time, cause error) (context.Context, context.CancelFunc) {
	if parent == nil {
		panic("cannot create context from nil parent")
	}
	return tw.withDeadline(parent, tw.now(), deadline.Sub(tw.epoch), deadline, true, cause)
}

// withDeadline makes the context due at wheel time at, read at wheel time
// now; exact is the caller's deadline for WithDeadline.
func (tw *TimingWheel) withDeadline(parent context.Context, now, at time.Duration, exact time.Time, hasExact bool, cause error) (context.Context, context.CancelFunc) {
	if !hasExact {
		exact = tw.timeOf(at)
	}
	if cur, ok := parent.Deadline(); ok && cur.Before(exact) {
		// The parent's deadline is earlier: the new one would never be the
		// reason, as package context reasons too.
		return context.WithCancel(parent)
	}
	c := &timeoutCtx{parent: parent, deadline: at}
	c.timer.f = c.fire
	if cause != nil || hasExact {
		c.extra = &ctxExtra{cause: cause, deadline: exact, hasDeadline: hasExact}
	}
	pdone := parent.Done()
	var done *ctxResult
	if pdone != nil {
		select {
		case <-pdone:
			// Done already: so is the child, with the parent's reason, as
			// package context decides before it looks at the deadline.
			done = newResult(parent.Err(), context.Cause(parent))
		default:
		}
	}
	if done == nil && at <= now {
		done = c.expiredLocked() // c is not shared yet
	}
	if done != nil {
		// Done from the start: the context needs a shard for its lock,
		// but no timer.
		c.timer.owner = &tw.lockShard().owner
		c.result.Store(done)
		c.timer.owner.shard.unlock()
		return c, context.CancelFunc(c.timer.f)
	}
	wp, wheelParent := parent.(*timeoutCtx)
	if pdone != nil && !wheelParent {
		// Package context registers the contexts it makes itself with their
		// parent, and closes their Done as the parent's cancel runs; so the
		// context stands on one of those (see inner.go).
		c.parent, c.cancelInner = context.WithCancel(parent)
	}
	// Due at the first tick that begins at or after the deadline, so the
	// context cannot be done early (see dueAt).
	tw.startDue(&c.timer, tw.dueAt(at), now)
	if wheelParent && c.result.Load() == nil {
		c.watch(wp)
	}
	return c, context.CancelFunc(c.timer.f)
}

// watch arranges for c to be done when p, its parent, is, without a
// goroutine while both are pending: p calls c's fire as p's cancel runs.
func (c *timeoutCtx) watch(p *timeoutCtx) {
	stop, added := p.addHook(&ctxHook{f: c.timer.f})
	if !added {
		c.timer.f() // p is done: so is c, before withDeadline returns
		return
	}
	c.keepStop(stop)
}

// keepStop keeps stop, which releases a registration just made, for finish
// to call; if c was done meanwhile, it calls stop at once.
func (c *timeoutCtx) keepStop(stop func() bool) {
	s := c.shard()
	s.mu.Lock()
	if c.result.Load() != nil {
		s.unlock()
		stop() // c was done meanwhile: nothing to watch for any more
		return
	}
	c.stopParent = stop
	s.unlock()
}

func (c *timeoutCtx) shard() *shard { return c.timer.owner.shard }

func (c *timeoutCtx) extraLocked() *ctxExtra {
	if c.extra == nil {
		c.extra = &ctxExtra{}
	}
	return c.extra
}

// expiredLocked returns the result of the deadline passing.
func (c *timeoutCtx) expiredLocked() *ctxResult {
	if c.extra != nil && c.extra.cause != nil {
		return newResult(context.DeadlineExceeded, c.extra.cause)
	}
	return expiredResult
}

// fire is the Timer's callback, the CancelFunc, and what the parent calls
// when it is done: one closure for the three saves two allocations per
// context. Which one called is read from the parent and the Timer, the
// Timer under the lock that decides it. A done parent means the parent's
// reason, as package context has cancelled its children by the time its
// parent's cancel returns. Otherwise, if the Timer was pending this is a
// cancel, and stopping it releases it from the wheel; if it has fired, the
// deadline has passed, and a cancel that comes after that but before the
// callback ran finds the context expired, as it would had the callback been
// quicker.
func (c *timeoutCtx) fire() {
	var r *ctxResult
	if parentIsDone(c.parent) { // read before the lock: parent may be on this shard
		r = newResult(c.parent.Err(), context.Cause(c.parent))
	}
	s := c.shard()
	s.mu.Lock()
	if c.result.Load() != nil {
		s.unlock()
		c.settle()
		return
	}
	stopped := s.stopLocked(&c.timer)
	if r == nil {
		r = canceledResult
		if !stopped && c.timer.state == stateFired {
			r = c.expiredLocked()
		}
	}
	c.finish(s, r)
}

// settle returns once Done is closed, for a context whose result is stored.
// finish closes an inner context's Done (inner.go) only after storing the
// result and releasing the lock; a cancel or an Err that finds the result
// in between must not return before Done is closed, as package context's
// do not. Cancelling the inner context again returns once the first cancel
// has closed it, or is that cancel.
func (c *timeoutCtx) settle() {
	if c.cancelInner != nil {
		c.cancelInner()
	}
}

func parentIsDone(parent context.Context) bool {
	if p, ok := parent.(*timeoutCtx); ok {
		return p.result.Load() != nil // without p's lock
	}
	select {
	case <-parent.Done(): // nil for Background: never
		return true
	default:
		return false
	}
}

// finish records r, closes the done channel, and with s.mu, which the caller
// holds, released, runs the hooks and releases the registration with the
// parent.
func (c *timeoutCtx) finish(s *shard, r *ctxResult) {
	c.result.Store(r)
	switch {
	case c.cancelInner != nil: // Done is the inner context's: closed below
	case c.done == nil:
		c.done = closedchan
	default:
		close(c.done)
	}
	var hooks map[*ctxHook]struct{}
	stop := c.stopParent
	c.stopParent = nil
	if x := c.extra; x != nil {
		hooks = x.hooks
		x.hooks = nil
	}
	s.unlock()
	if stop != nil {
		stop() // first: the inner parent's cancel would otherwise start its f
	}
	if c.cancelInner != nil {
		c.cancelInner() // closes Done, and releases the caller's parent
	}
	for h := range hooks {
		h.f()
	}
}

// addHook arranges for h to run once c is done and returns the function
// that cancels that; if c is done already it adds nothing and returns false,
// and the caller decides where h runs.
func (c *timeoutCtx) addHook(h *ctxHook) (stop func() bool, added bool) {
	s := c.shard()
	s.mu.Lock()
	if c.result.Load() != nil {
		s.unlock()
		return nil, false
	}
	x := c.extraLocked()
	if x.hooks == nil {
		x.hooks = make(map[*ctxHook]struct{})
	}
	x.hooks[h] = struct{}{}
	watch := c.cancelInner != nil && !x.watching
	x.watching = true
	s.unlock()
	if watch {
		c.watchInner()
	}
	return func() bool {
		s.mu.Lock()
		defer s.unlock()
		_, ok := x.hooks[h]
		delete(x.hooks, h)
		return ok
	}, true
}

var stoppedHook = func() bool { return false }

// AfterFunc arranges to call f after the context is done. Package context
// calls this method (its afterFuncer interface) to watch the context for
// each child it makes on it, with an f that cancels that child, so it must
// behave as package context does for its own children: f is called on the
// goroutine that makes the context done (its cancel, its parent's, or the
// wheel's callback at expiry), before that cancel returns, so that the
// child is done by then. If the context is done already, f is started at
// once in a goroutine of its own: package context calls AfterFunc with the
// child's lock held, which f takes. stop returns true if it stopped f from
// being called, false if f has been called or started, or already stopped.
//
// context.AfterFunc(ctx, f) still runs f in its own goroutine: package
// context passes this method an f that starts it there. Called directly, f
// must not block, since the cancel that made the context done waits for it.
// A nil f panics.
func (c *timeoutCtx) AfterFunc(f func()) (stop func() bool) {
	if f == nil {
		panic("timingwheel: AfterFunc called on a context with nil func")
	}
	stop, added := c.addHook(&ctxHook{f: f})
	if !added {
		go f()
		return stoppedHook
	}
	return stop
}

// Deadline returns the deadline: WithDeadline's as given, or WithTimeout's
// now+d on the wheel's clock.
func (c *timeoutCtx) Deadline() (time.Time, bool) {
	s := c.shard()
	s.mu.Lock()
	x := c.extra
	s.unlock()
	if x != nil && x.hasDeadline { // deadline never changes once made
		return x.deadline, true
	}
	return s.wheel.timeOf(c.deadline), true
}

// Done returns a channel closed when the context is done. It is made on the
// first call, so a context whose Done is never called costs no channel.
func (c *timeoutCtx) Done() <-chan struct{} {
	if c.cancelInner != nil {
		return c.parent.Done()
	}
	s := c.shard()
	s.mu.Lock()
	if c.done == nil {
		if c.result.Load() != nil {
			c.done = closedchan
		} else {
			c.done = make(chan struct{})
		}
	}
	d := c.done
	s.unlock()
	return d
}

// Err returns nil while the context is not done, and then why it is done.
//
// A parent that is not a wheel context does not tell the wheel context at
// once when it is done (package context cancels at once only the contexts
// it made itself: the inner context of inner.go); Err does not wait to be
// told but looks at the parent, and finishes the context if the parent is
// done, so that a child's Err, and context.Cause through Value, are set as
// soon as its parent's are, as with package context.
func (c *timeoutCtx) Err() error {
	if r := c.result.Load(); r != nil {
		c.settle()
		return r.err
	}
	if pdone := c.parent.Done(); pdone != nil {
		select {
		case <-pdone:
			c.fire() // finds the parent done
			return c.result.Load().err
		default:
		}
	}
	return nil
}

// Value returns the parent's value for key, except that package context's
// Cause finds the cause of a context done with a cause other than its error.
func (c *timeoutCtx) Value(key any) any {
	if k := cancelCtxKey(); k != nil && key == k {
		if c.Err() == nil { // Err learns at once of a done parent
			return nil // not done, so no cause; and package context then uses AfterFunc
		}
		return c.result.Load().carrier
	}
	return c.parent.Value(key)
}

// String has the shape of package context's: parent.WithDeadline(deadline
// [time left on the wheel's clock]).
func (c *timeoutCtx) String() string {
	d, _ := c.Deadline()
	name := contextName(c.parent)
	if c.cancelInner != nil {
		name = strings.TrimSuffix(name, ".WithCancel")
	}
	return name + ".WithDeadline(" + d.String() + " [" +
		d.Sub(c.shard().wheel.clock.Now()).String() + "])"
}

func contextName(c context.Context) string {
	if s, ok := c.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", c)
}

// WithTimeout is Default().WithTimeout: context.WithTimeout on the default
// wheel.
func WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return WithTimeoutCause(parent, d, nil)
}

// WithTimeoutCause is Default().WithTimeoutCause.
func WithTimeoutCause(parent context.Context, d time.Duration, cause error) (context.Context, context.CancelFunc) {
	tw, now, ok := defaultNow()
	if !ok {
		return tw.WithTimeoutCause(parent, d, cause)
	}
	if parent == nil {
		panic("cannot create context from nil parent")
	}
	return tw.withDeadline(parent, now, addDuration(now, d), time.Time{}, false, cause)
}

// WithDeadline is Default().WithDeadline: context.WithDeadline on the
// default wheel.
func WithDeadline(parent context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	return defaultWheel().WithDeadline(parent, deadline)
}

// WithDeadlineCause is Default().WithDeadlineCause.
func WithDeadlineCause(parent context.Context, deadline time.Time, cause error) (context.Context, context.CancelFunc) {
	return defaultWheel().WithDeadlineCause(parent, deadline, cause)
}
