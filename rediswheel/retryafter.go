package rediswheel

import (
	"errors"
	"fmt"
	"time"
)

// MaxRetryAfter caps the delay of RetryAfter.
const MaxRetryAfter = 24 * time.Hour

// RetryAfter asks for the task to be delivered again after d without using up
// an attempt: for a receiver that said "not now" (HTTP 429 or 503 with
// Retry-After), not one that failed. d is clamped to [0, MaxRetryAfter]. The
// number of such postponements per task is bounded (see Handler); past the
// bound a RetryAfter counts as a failed attempt.
func RetryAfter(d time.Duration) error {
	return &retryAfterError{d: min(max(d, 0), MaxRetryAfter)}
}

type retryAfterError struct{ d time.Duration }

func (e *retryAfterError) Error() string { return fmt.Sprintf("rediswheel: retry after %v", e.d) }

// retryAfterOf reports the delay of a RetryAfter error anywhere in err's chain.
func retryAfterOf(err error) (time.Duration, bool) {
	var r *retryAfterError
	if errors.As(err, &r) {
		return r.d, true
	}
	return 0, false
}
