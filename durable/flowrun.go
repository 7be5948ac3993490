package durable

import (
	"context"
	"errors"
	"time"
)

// The worker's side of flow control (Flow, gate.go): admit decides for each
// claimed task, dispatch starts waiting tasks, flowFinished tells the gate
// what a delivery's result says about its key. Slots: a waiting task holds
// none; every claimed task takes at most one on its way through admit (to
// start, or to be handed back, itself or the waiting task it evicts), so the
// poller's claims never exceed its free handlers.

// admit starts d, or leaves it waiting for its flow key, or hands a task back.
// Only the poller calls it.
func (r *runner) admit(d *delivery) {
	if r.gate == nil {
		r.start(d)
		return
	}
	key := r.gate.flow.key(d.task)
	if key == "" {
		r.start(d)
		return
	}
	d.flowKey = key
	start, back, delay := r.gate.admit(d, key, time.Now())
	if start {
		r.start(d)
		return
	}
	if back != d {
		r.wait(d)
	}
	if back != nil {
		r.handBack(back, delay)
	}
}

// wait leases d without a handler: heartbeat extends it, and its context,
// made now, is the one its handler will get. Cancel or a lost lease ends it,
// which makes the next dispatch drop it.
func (r *runner) wait(d *delivery) {
	r.lease(d)
	d.unwatch = context.AfterFunc(d.ctx, func() {
		r.gate.sweep.Store(true)
		r.sleeper.poke()
	})
}

// handBack gives d back to the store, due after delay, its attempt not
// counted (OutcomeLater, a postponement: see Flow), bounded as a
// RetryAfter is (decide.go's bound).
func (r *runner) handBack(d *delivery, delay time.Duration) {
	if d.ctx != nil { // it was waiting
		d.unwatch()
		r.unlease(d)
	}
	r.slots <- struct{}{} // never blocks: see the top of this file
	r.outcomes <- outcome{d: d, kind: r.q.bound(OutcomeLater, d.tally()), delay: durationMilliCeil(delay), err: handBackError(d.flowKey)}
}

// dispatch starts the waiting tasks whose keys have room, as many as there
// are free handlers, and drops those whose contexts ended: a cancelled one is
// released (the store finishes it as cancelled) if a handler is free, else
// left to its lease; a lost one is no longer ours. It returns when a waiting
// task may next start without a finish first (zero: none known). Only the
// poller calls it.
func (r *runner) dispatch() time.Time {
	if r.gate == nil {
		return time.Time{}
	}
	start, gone, next := r.gate.ready(time.Now(), r.free())
	for _, d := range start {
		d.unwatch()
		r.start(d)
	}
	for _, d := range gone {
		d.unwatch()
		r.unlease(d)
		if errors.Is(context.Cause(d.ctx), ErrCanceled) && r.free() > 0 {
			r.slots <- struct{}{}
			r.outcomes <- outcome{d: d, kind: OutcomeRelease}
		}
	}
	return next
}

// flowFinished tells the gate how d's delivery, whose handler ran under hctx
// and returned err, went, and wakes the poller if tasks wait.
func (r *runner) flowFinished(d *delivery, hctx context.Context, err error) {
	if d.flowKey == "" {
		return
	}
	waiting, moved := r.gate.finish(d.flowKey, r.resultOf(hctx, err), time.Now())
	if waiting {
		r.sleeper.poke()
	}
	if o := r.q.opts.Observer; o != nil && moved != nil {
		if moved.State == breakerOpen.String() {
			moved.Error = breakerError(hctx, err)
		}
		o.BreakerChanged(*moved)
	}
}

// breakerError is the text a BreakerEvent gives for the failure that opened
// it: the handler's error, cut as a stored one is, or its timeout.
func breakerError(hctx context.Context, err error) string {
	if errors.Is(context.Cause(hctx), ErrHandlerTimeout) || err == nil {
		return ErrHandlerTimeout.Error()
	}
	s := err.Error()
	if len(s) > maxErrorText {
		s = s[:maxErrorText]
	}
	return s
}

// resultOf classifies a handler's return for the breaker (see Breaker).
func (r *runner) resultOf(hctx context.Context, err error) result {
	after, later := retryAfterOf(err)
	_, detached := detachOf(err)
	switch {
	case err == nil, detached: // a Detach: the destination took the work
		return result{kind: resultSuccess}
	case errors.Is(context.Cause(hctx), ErrHandlerTimeout):
		return result{kind: resultFailure}
	case r.work.Err() != nil || hctx.Err() != nil:
		return result{kind: resultAnswer} // Cancel, a lost lease, the end of Run
	case later:
		return result{kind: resultPause, pause: after}
	case IsPermanent(err):
		return result{kind: resultAnswer}
	}
	return result{kind: resultFailure}
}

// releaseWaiting hands every waiting task back, due at once with its attempt
// not counted, when Run stops; its handlers have all returned, so settleLoop
// frees slots as it goes.
func (r *runner) releaseWaiting() {
	if r.gate == nil {
		return
	}
	for _, d := range r.gate.drain() {
		d.unwatch()
		r.unlease(d)
		if errors.Is(context.Cause(d.ctx), ErrLeaseLost) {
			continue // no longer ours
		}
		r.slots <- struct{}{}
		r.outcomes <- outcome{d: d, kind: OutcomeRelease}
	}
}
