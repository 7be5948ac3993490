package durable

import (
	"context"
	"errors"
	"fmt"
	"math"
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
// return:
//
//   - nil: the task is done;
//   - Permanent(err): it goes to the dead set;
//   - RetryAfter: due again after its delay (the backoff below for a delay
//     of 0), the attempt not counted;
//   - any other error: due again after the backoff the worker chose for
//     this attempt when it delivered it, the attempt counted (dead when out
//     of attempts), err's text as its last error.
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
	partition := c.partition
	o := outcome{d: &delivery{shard: partition, token: c.token, task: Task{Key: key}}}
	after, later := retryAfterOf(result)
	switch {
	case result == nil:
		o.kind = OutcomeDone
	case IsPermanent(result):
		o.kind, o.err = OutcomeDead, result.Error()
	case later:
		o.kind, o.err = OutcomeLater, result.Error()
		o.delay = durationMilliCeil(postponement(after, func() time.Duration { return q.retryDelay(c) }))
	default:
		o.kind, o.err, o.delay = OutcomeRetry, result.Error(), durationMilliCeil(q.retryDelay(c))
	}
	if len(o.err) > maxErrorText {
		o.err = o.err[:maxErrorText]
	}
	s, err := q.observedSettle(ctx, partition, []outcome{o})
	if err != nil {
		return SettleRejected, err
	}
	if len(s.Codes) != 1 {
		return SettleRejected, fmt.Errorf("durable: complete: %d codes for 1 outcome", len(s.Codes))
	}
	if s.Codes[0] == SettleRejected {
		return SettleRejected, fmt.Errorf("%w: task %q", ErrStaleToken, key)
	}
	return s.Codes[0], nil
}

// completionToken is d's Task.Token:
// "<partition>.<attempt>.<backoff base ms>.<backoff limit ms>.<store token>".
// Complete needs the partition for its Settle, and what the worker's backoff
// reads (the attempt, the task's own backoff policy, 0 when it has none),
// which Complete, in another process, cannot read from the store. Backoff
// itself is called only when Complete reports a failure, as after a
// handler's. parseToken reads it back.
func completionToken(d *delivery) string {
	return strconv.Itoa(d.shard) + "." + strconv.Itoa(d.task.Attempt) + "." +
		strconv.FormatInt(d.policy.BackoffBase.Milliseconds(), 10) + "." +
		strconv.FormatInt(d.policy.BackoffLimit.Milliseconds(), 10) + "." + d.token
}

// completion is a parsed completionToken.
type completion struct {
	partition, attempt int
	base, limit        time.Duration // the task's own backoff; 0: the Queue's
	token              string        // the store's
}

// parseToken splits a completionToken; the store token is the rest after
// the fourth dot, whatever it holds.
func (q *Queue) parseToken(token string) (completion, error) {
	parts := strings.SplitN(token, ".", 5)
	if len(parts) != 5 || parts[4] == "" {
		return completion{}, fmt.Errorf("%w: %q is not a token of a delivery", ErrToken, token)
	}
	var nums [4]int64
	for i := range nums {
		n, err := strconv.ParseInt(parts[i], 10, 64)
		if err != nil || n < 0 {
			return completion{}, fmt.Errorf("%w: %q is not a token of a delivery", ErrToken, token)
		}
		nums[i] = n
	}
	if nums[0] >= int64(q.parts) || nums[1] > math.MaxInt32 || nums[2] > math.MaxInt32 || nums[3] > math.MaxInt32 {
		return completion{}, fmt.Errorf("%w: %q: partition or numbers out of range (%d partitions)", ErrToken, token, q.parts)
	}
	return completion{partition: int(nums[0]), attempt: int(nums[1]), base: time.Duration(nums[2]) * time.Millisecond,
		limit: time.Duration(nums[3]) * time.Millisecond, token: parts[4]}, nil
}

// retryDelay is the backoff after c's failed attempt, as runner.backoff
// would choose it.
func (q *Queue) retryDelay(c completion) time.Duration {
	if c.base > 0 {
		return fullJitter(c.base, c.limit, c.attempt)
	}
	return q.opts.Backoff(c.attempt)
}

// detach moves d's lease to now+within, once, and gives its handler's place
// back: the delivery waits for Complete or its lease's end. The heartbeat no
// longer extends it (start unleased it before calling detach).
func (r *runner) detach(d *delivery, within time.Duration) {
	if o := r.q.opts.Observer; o != nil {
		o.HandlerFinished(FinishEvent{Task: d.task, Outcome: "detach", Duration: time.Since(d.began)})
	}
	// Under beat: a heartbeat round that read d's lease before unlease could
	// otherwise move it back to now+Lease after this Extend.
	r.beat.Lock()
	ctx, cancel := context.WithTimeout(r.bgctx, finalTimeout)
	codes, err := r.q.extend(ctx, d.shard, []*delivery{d}, within)
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
