package durable

import "time"

// The Queue decides what becomes of a delivery; a store records it. Every
// outcome a Queue sends to Store.Settle is final: decide and bound are the
// only places that choose between retry, dead and postpone, for Run (a
// handler's result, a timeout, a Flow hand-back) and Complete alike, so the
// rules are written once, here, and no store repeats them (the state table
// in doc.go). Why, and what was decided on the way: docs/design/decide.md.

// MaxPostponements bounds the RetryAfter postponements of one task in a row
// (OutcomeLater, counted by the store, started over by a retry, Requeue and
// Replace): past it a RetryAfter counts as a failed attempt, so a receiver
// that says "not now" forever cannot keep a task alive forever. 100
// postponements of at most MaxRetryAfter cover a receiver that throttles for
// days, or one that asks for a minute every minute for well over an hour.
const MaxPostponements = 100

// tally is what the Queue knows of a delivery when it decides its outcome:
// what Claim read for the worker, what Get read for Complete.
type tally struct {
	attempt       int    // this delivery's, from 1
	postponements int    // OutcomeLater in a row before it
	policy        Policy // the task's own; a zero field is the Queue's
}

// decide sets o's kind, delay and error text for a delivery whose handler
// returned err (nil: done), neither a Detach nor a shutdown's cancellation:
//
//   - nil: done;
//   - Permanent: dead;
//   - RetryAfter(after): later, after postponement's wait;
//   - any other error: retry after the backoff of t's attempt;
//
// each bounded by bound.
func (q *Queue) decide(o *outcome, err error, t tally) {
	if err == nil {
		o.kind = OutcomeDone
		return
	}
	o.err = storableText(err.Error(), maxErrorText)
	after, later := retryAfterOf(err)
	switch {
	case IsPermanent(err):
		o.kind = OutcomeDead
	case later:
		if o.kind = q.bound(OutcomeLater, t); o.kind != OutcomeDead {
			o.delay = durationMilliCeil(postponement(after, func() time.Duration { return q.backoff(t) }))
		}
	default:
		if o.kind = q.bound(OutcomeRetry, t); o.kind != OutcomeDead {
			o.delay = durationMilliCeil(q.backoff(t)) // only when used: a Backoff may count its calls
		}
	}
}

// bound is the final kind of an outcome of kind k: a later past
// MaxPostponements is a failed attempt, a retry, after the same delay (so a
// "Retry-After: 0" never loops, postponed or counted, and a receiver's
// longer wait is still respected); a retry of t's last attempt (the task's
// MaxAttempts, else Options.MaxAttempts) is dead.
func (q *Queue) bound(k OutcomeKind, t tally) OutcomeKind {
	if k == OutcomeLater && t.postponements >= MaxPostponements {
		k = OutcomeRetry
	}
	if k == OutcomeRetry && t.attempt >= q.maxAttempts(t.policy) {
		k = OutcomeDead
	}
	return k
}

// maxAttempts is the deliveries a task with policy p gets before it dies.
func (q *Queue) maxAttempts(p Policy) int {
	if p.MaxAttempts > 0 {
		return p.MaxAttempts
	}
	return q.opts.MaxAttempts
}

// backoff is the delay before the delivery after t's failed attempt.
func (q *Queue) backoff(t tally) time.Duration {
	if p := t.policy; p.BackoffBase > 0 {
		return fullJitter(p.BackoffBase, p.BackoffLimit, t.attempt)
	}
	return q.opts.Backoff(t.attempt)
}
