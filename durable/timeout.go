package durable

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrHandlerTimeout is the cause of a handler's context cancellation when the
// task's timeout (TaskTimeout, else Options.HandlerTimeout) passes, and the
// error the delivery is settled with: a failed attempt.
var ErrHandlerTimeout = errors.New("durable: handler timed out")

// handlerTimeout is how long d's handler may run: the task's own timeout,
// else the Queue's; 0 means no bound.
func (r *runner) handlerTimeout(d *delivery) time.Duration {
	if d.policy.Timeout > 0 {
		return d.policy.Timeout
	}
	return r.q.opts.HandlerTimeout
}

// bound gives d's handler context its timeout. It returns that context and
// done, which the handler's goroutine calls once the handler has returned.
//
// When the timeout passes first, expire settles the delivery at once, without
// waiting for the handler: a handler that ignores its context would otherwise
// hold its task, and have its lease extended, forever.
func (r *runner) bound(ctx context.Context, d *delivery) (context.Context, func()) {
	limit := r.handlerTimeout(d)
	if limit <= 0 {
		return ctx, func() {}
	}
	tctx, cancel := context.WithTimeoutCause(ctx, limit, ErrHandlerTimeout)
	r.handlers.Add(1) // for the func below: it may send an outcome, so Run waits for it
	stopExpire := context.AfterFunc(tctx, func() {
		defer r.handlers.Done()
		// Any other cause (Cancel, a lost lease, shutdown) leaves the
		// outcome to the handler's result, as without a timeout.
		if errors.Is(context.Cause(tctx), ErrHandlerTimeout) {
			r.expire(d, limit)
		}
	})
	return tctx, func() {
		if stopExpire() {
			r.handlers.Done() // the func will never run
		}
		cancel()
	}
}

// expire settles d as a failed attempt because its handler outlived limit,
// unless the handler's own result got there first. The handler keeps its
// place among the Run's Concurrency until it returns (overdue): a handler
// that never returns then shows as a Run that claims less, not as goroutines
// piling up without bound.
func (r *runner) expire(d *delivery, limit time.Duration) {
	// Counted before the handler can find the delivery settled, which it
	// answers by uncounting it: the count never goes below the truth, so
	// poll never claims more than it has room for.
	r.overdue.Add(1)
	if !d.settling.CompareAndSwap(false, true) {
		r.overdue.Add(-1)
		return
	}
	// heartbeat stops extending the lease; the settle gives the task up.
	r.unlease(d)
	r.outcomes <- r.q.observeFinished(r.outcomeOf(d, fmt.Errorf("%w after %v", ErrHandlerTimeout, limit))) // never blocks: one slot, one place
}
