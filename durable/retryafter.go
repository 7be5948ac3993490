package durable

import (
	"errors"
	"fmt"
	"time"
)

// MaxRetryAfter caps the delay of RetryAfter.
const MaxRetryAfter = 24 * time.Hour

// RetryAfter asks for the task to be delivered again after d without using up
// an attempt: for a receiver that said "not now" (HTTP 429 or 503 with
// Retry-After), not one that failed. d is clamped to [0, MaxRetryAfter]. A d
// of 0 (or less: an HTTP-date in the past) asks for no particular wait, so
// the task waits its normal backoff (Options.Backoff, or its TaskBackoff,
// for its current attempt), never none: a receiver that always answers
// "Retry-After: 0" is not asked again in a loop. The postponements of a
// task in a row are bounded (MaxPostponements); past the bound a RetryAfter
// counts as a failed attempt, after the same delay.
func RetryAfter(d time.Duration) error { return RetryAfterError(d, nil) }

// RetryAfterError is RetryAfter with the error that made the handler wait:
// it is in the returned error's message and chain (errors.Is, errors.As), so
// it is the task's last error. HTTPHandler wraps its HTTPStatusError so.
// RetryAfterError(d, nil) is RetryAfter(d).
func RetryAfterError(d time.Duration, cause error) error {
	return &retryAfterError{d: min(max(d, 0), MaxRetryAfter), cause: cause}
}

type retryAfterError struct {
	d     time.Duration
	cause error // nil for RetryAfter
}

func (e *retryAfterError) Error() string {
	if e.cause == nil {
		return fmt.Sprintf("durable: retry after %v", e.d)
	}
	return fmt.Sprintf("durable: retry after %v: %v", e.d, e.cause)
}

func (e *retryAfterError) Unwrap() error { return e.cause }

// retryAfterOf reports the delay of a RetryAfter error anywhere in err's chain.
func retryAfterOf(err error) (time.Duration, bool) {
	var r *retryAfterError
	if errors.As(err, &r) {
		return r.d, true
	}
	return 0, false
}

// postponement is the wait before the next delivery of a task whose
// handler returned RetryAfter(after): after, or, when after is 0, backoff(),
// what a failure of the same attempt would wait. It is decided here, for
// Run and Complete alike, and a store only applies it; a postponement past
// MaxPostponements, counted as a failed attempt (decide.go's bound), waits
// the same delay, so "Retry-After: 0" never loops, postponed or counted.
func postponement(after time.Duration, backoff func() time.Duration) time.Duration {
	if after > 0 {
		return after
	}
	return backoff()
}
