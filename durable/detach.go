package durable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Asynchronous completion: a handler that has handed its work to someone
// else (an HTTP receiver that answered 202 Accepted, a job on another
// system) returns Detach(within). The delivery then stays in flight, its
// lease moved once by Store.Extend to now+within, with no heartbeats and
// without holding a handler of Run's Concurrency, until one of:
//
//   - Complete with the delivery's Task.Token, from any process: the task is
//     settled as Complete's result says (done, retry, dead);
//   - within passes: the lease runs out, a Claim reaps it and the task is
//     delivered again, its attempt counted ("lease expired");
//   - Cancel: the task is finished as cancelled when it is completed or its
//     lease runs out, never retried.
//
// No Store operation is added: the token is the store's fencing token, so a
// Complete for a delivery that has ended (completed, reaped, redelivered) is
// a Settle with a stale token, which changes nothing.

// MaxDetach caps the completion deadline of Detach.
const MaxDetach = 7 * 24 * time.Hour

// Detach asks Run to leave the delivery in flight for within, waiting for
// Complete with its Task.Token, instead of settling it (see Complete).
// within is clamped to [1ms, MaxDetach]. A Detach error wrapped in another
// (fmt.Errorf's %w) counts too. A handler that returns Detach after its
// timeout passed is too late: the delivery was settled as failed.
func Detach(within time.Duration) error {
	return &detachError{within: min(max(within, time.Millisecond), MaxDetach)}
}

type detachError struct{ within time.Duration }

func (e *detachError) Error() string {
	return fmt.Sprintf("durable: detached for %v, waiting for Complete", e.within)
}

// detachOf reports the completion deadline of a Detach error in err's chain.
func detachOf(err error) (time.Duration, bool) {
	var d *detachError
	if errors.As(err, &d) {
		return d.within, true
	}
	return 0, false
}

// Errors of Complete, for errors.Is.
var (
	// ErrToken reports a token that no delivery was given: not the form of
	// Task.Token, or a partition the store does not have.
	ErrToken = errors.New("durable: bad completion token")
	// ErrStaleToken reports a token that is not the task's current delivery:
	// that delivery was completed already, its deadline passed (the task was
	// reaped, maybe delivered again), it was finished otherwise, or the key
	// is not the token's. Nothing was changed.
	ErrStaleToken = errors.New("durable: stale completion token")
)

// Complete finishes the detached delivery of the task under key that token
// (its Task.Token) names, from any process with a Queue on the same store,
// and returns what the store did (SettleDone, SettleRetry, SettleDead, or
// SettleCancelled when Cancel came first). result is read as a handler's
// return, and decided as Run decides one (decide.go):
//
//   - nil: the task is done;
//   - Permanent(err): it goes to the dead set;
//   - RetryAfter: due again after its delay (the backoff below for a delay
//     of 0), the attempt not counted, at most MaxPostponements times in a
//     row;
//   - any other error: due again after the backoff of this attempt, the
//     attempt counted (dead when it was the last), err's text as its last
//     error.
//
// For a failure (a Permanent one too, for the Observer), Complete reads the
// task's attempt, policy and postponements with Store.Get, then settles; a
// settle the store accepts is reported to Observer.Completed. What Get read is this
// delivery's whenever the settle is accepted: the settle is fenced by the
// token, which the claim that began the delivery made before the caller
// could hold it, so before Get; a claim after Get would have made the token
// stale, and a task in flight keeps its attempts, policy and postponements
// (Replace, Reschedule and Requeue leave it alone). If the settle is
// rejected, what Get read did not matter. The token carries nothing but
// the partition and the store's token, so a forged one can name a delivery
// at most, never change its attempt or backoff.
//
// It returns ErrToken for a malformed token and ErrStaleToken when the
// delivery is not the task's current one; either way nothing changed.
// Complete works on a delivery that has not detached too: whichever of
// Complete and the handler's own result reaches the store first counts, the
// other is stale. A store error means the completion may or may not have
// happened; calling again with the same token is safe (at worst stale).
func (q *Queue) Complete(ctx context.Context, key, token string, result error) (SettleCode, error) {
	if err := checkKey(key); err != nil {
		return SettleRejected, err
	}
	c, err := q.parseToken(token)
	if err != nil {
		return SettleRejected, err
	}
	o := outcome{d: &delivery{partition: c.partition, token: c.token, task: Task{Key: key}}}
	var t tally
	// A Permanent failure needs no tally to be decided; it is read all the
	// same, so that the Observer's CompleteEvent names the attempt that died.
	if result != nil {
		info, err := q.store.Get(ctx, key)
		if err != nil {
			return SettleRejected, err
		}
		if info == nil {
			// In no state: no delivery of it is current.
			return SettleRejected, fmt.Errorf("%w: task %q", ErrStaleToken, key)
		}
		t = tally{attempt: info.Attempts, postponements: info.Postponements, policy: Policy{
			MaxAttempts: info.MaxAttempts, BackoffBase: info.BackoffBase, BackoffLimit: info.BackoffLimit}}
	}
	q.decide(&o, result, t)
	s, err := q.observedSettle(ctx, c.partition, []outcome{o})
	if err != nil {
		return SettleRejected, err
	}
	if len(s.Codes) != 1 {
		return SettleRejected, fmt.Errorf("durable: complete: %d codes for 1 outcome", len(s.Codes))
	}
	if s.Codes[0] == SettleRejected {
		return SettleRejected, fmt.Errorf("%w: task %q", ErrStaleToken, key)
	}
	q.observeCompleted(key, t.attempt, o, s.Codes[0])
	return s.Codes[0], nil
}

// completionToken is d's Task.Token, "<partition>.<store token>": Complete
// needs the partition for its Settle, and reads everything else it decides
// from (attempt, policy, postponements) from the store. parseToken reads it
// back.
func completionToken(d *delivery) string {
	return strconv.Itoa(d.partition) + "." + d.token
}

// completion is a parsed completionToken.
type completion struct {
	partition int
	token     string // the store's
}

// parseToken splits a completionToken. It also reads the form Run gave
// before Complete read the store, "<partition>.<attempt>.<backoff base
// ms>.<backoff limit ms>.<store token>", so that a delivery detached before
// an upgrade can still be completed after it, for MaxDetach at most; it
// ignores the three middle fields, which a caller could forge. Both forms
// are told apart by their count of fields, a store token holding no dot
// (ClaimedTask.Token); any other string is ErrToken.
func (q *Queue) parseToken(token string) (completion, error) {
	bad := func(why string) (completion, error) {
		return completion{}, fmt.Errorf("%w: %q: %s", ErrToken, token, why)
	}
	parts := strings.Split(token, ".")
	switch len(parts) {
	case 2:
	case 5:
		for _, f := range parts[1:4] {
			if n, err := strconv.ParseInt(f, 10, 64); err != nil || n < 0 {
				return bad("not a token of a delivery")
			}
		}
	default:
		return bad("not a token of a delivery")
	}
	p, err := strconv.ParseInt(parts[0], 10, 64)
	switch {
	case err != nil || p < 0 || parts[len(parts)-1] == "":
		return bad("not a token of a delivery")
	case p >= int64(q.parts):
		return bad(fmt.Sprintf("partition out of range (%d partitions)", q.parts))
	}
	return completion{partition: int(p), token: parts[len(parts)-1]}, nil
}

// detach moves d's lease to now+within, once, and gives its handler's place
// back: the delivery waits for Complete or its lease's end. The heartbeat no
// longer extends it (start unleased it before calling detach).
func (r *runner) detach(d *delivery, within time.Duration) {
	if o := r.q.opts.Observer; o != nil {
		// The result (an HTTP task's 202) is the event's alone: Complete
		// settles with the result its caller gives.
		o.HandlerFinished(FinishEvent{Task: d.task, Outcome: "detach", Result: d.result.take(), Duration: time.Since(d.began)})
	}
	// Under beat: a heartbeat round that read d's lease before unlease could
	// otherwise move it back to now+Lease after this Extend.
	r.beat.Lock()
	ctx, cancel := context.WithTimeout(r.bgctx, finalTimeout)
	codes, err := r.q.extend(ctx, d.partition, []*delivery{d}, within)
	cancel()
	r.beat.Unlock()
	switch {
	case err != nil:
		// The lease ends where the last heartbeat left it: the task is
		// reaped then and delivered again (at-least-once).
		r.report("extend", err)
	case codes[0] == ExtendCancelled:
		// Cancelled while the handler ran: finish it now (as cancelled,
		// whatever the outcome) rather than keep it in flight until within.
		r.outcomes <- outcome{d: d, kind: OutcomeRelease} // never blocks: one slot, one place
		return
	}
	// ExtendLost: completed already (a fast Complete), or no longer ours.
	<-r.slots
	r.signalFreed()
}
