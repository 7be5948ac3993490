package timingwheel

import "context"

// A wheel context on a parent that is not a wheel context stands on an
// inner context, context.WithCancel(parent), kept as its parent:
//
//   - package context registers the inner context in the parent's map of
//     children, which it does for the contexts it makes itself and no other
//     package can, and cancels it as the parent's cancel runs; so the wheel
//     context's Done, the inner context's, is closed by the time the
//     parent's cancel returns, with no registration of the wheel's own;
//   - the wheel context's own result is kept apart (its Err, its cause,
//     DeadlineExceeded at expiry), and its children and AfterFuncs are its
//     hooks, not the inner context's children, which package context would
//     cancel with the inner context's Canceled;
//   - finish cancels the inner context after it stores the result, which
//     closes Done and removes the inner context from the parent's map;
//   - the hooks need to learn that the parent is done, which the inner
//     context does not tell: the first hook registers c's fire with it
//     through context.AfterFunc (watchInner), which package context calls
//     on a goroutine of its own; so a child of the wheel context is done a
//     moment after the parent's cancel returns, not before (WithTimeout).
//
// The parent's cancel does not reach the wheel context's Timer: it stays
// until cancel, until Err or Value finds the inner context done, or until
// it fires, and then finds the parent done (fire reads the inner context,
// whose Err and Cause are the parent's).

// watchInner arranges for the hooks to run once the inner context is done:
// package context then calls c's fire on a goroutine of its own.
func (c *timeoutCtx) watchInner() {
	c.keepStop(context.AfterFunc(c.parent, c.timer.f))
}
