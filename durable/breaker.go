package durable

import (
	"fmt"
	"time"
)

// Breaker configures the circuit breaker of each flow key: after Failures
// failed deliveries in a row the key is open, and none of its tasks starts
// for CoolDown; then one task is let through as a probe (half-open). The
// probe's success closes the breaker; its failure opens it again for twice
// the last cool-down, up to MaxCoolDown. While a key is open its tasks wait
// as they do for a saturated Limit, without counting attempts.
//
// A failure is a handler that timed out or returned an error that is neither
// Permanent nor a RetryAfter: the destination did not answer, or answered
// that it is failing (an HTTP handler's 5xx, 408, 429 without Retry-After,
// a network error). Permanent errors and RetryAfter are answers, which
// neither open nor close the breaker; a handler cut short by Cancel, a lost
// lease or the end of Run says nothing about the destination either.
//
// The zero Breaker never opens.
type Breaker struct {
	// Failures in a row that open the breaker; 0: no breaker.
	Failures int
	// CoolDown is how long the breaker stays open the first time (default
	// DefaultCoolDown).
	CoolDown time.Duration
	// MaxCoolDown caps the cool-down as failed probes double it (default
	// DefaultMaxCoolDown, at least CoolDown).
	MaxCoolDown time.Duration
}

// Defaults of Breaker's zero durations.
const (
	DefaultCoolDown    = 30 * time.Second
	DefaultMaxCoolDown = 10 * time.Minute
)

func (b Breaker) withDefaults() (Breaker, error) {
	switch {
	case b.Failures < 0:
		return b, fmt.Errorf("%w: Breaker.Failures %d (want 0 or more)", ErrFlow, b.Failures)
	case b.CoolDown < 0 || b.MaxCoolDown < 0:
		return b, fmt.Errorf("%w: Breaker cool-down %v, max %v (want 0 or more)", ErrFlow, b.CoolDown, b.MaxCoolDown)
	}
	if b.CoolDown == 0 {
		b.CoolDown = DefaultCoolDown
	}
	if b.MaxCoolDown == 0 {
		b.MaxCoolDown = max(DefaultMaxCoolDown, b.CoolDown)
	}
	if b.MaxCoolDown < b.CoolDown {
		return b, fmt.Errorf("%w: Breaker.MaxCoolDown %v below CoolDown %v", ErrFlow, b.MaxCoolDown, b.CoolDown)
	}
	return b, nil
}

// breakerState names where a key's breaker is.
type breakerState int

const (
	breakerClosed   breakerState = iota // deliveries start as their Limit allows
	breakerOpen                         // none starts before openUntil
	breakerHalfOpen                     // one probe may start; the others wait for its result
)

func (s breakerState) String() string {
	return [...]string{"closed", "open", "half-open"}[s]
}

// breaker is one key's circuit breaker in one Run.
type breaker struct {
	state     breakerState
	failures  int           // in a row, while closed
	openUntil time.Time     // while open
	coolDown  time.Duration // the last cool-down, doubled by a failed probe
	probing   bool          // half-open: the probe is running
}

// allow reports whether a delivery may start at now, and when to look again
// if not (zero: when a running delivery of the key finishes). It changes
// nothing: admit commits.
func (b *breaker) allow(now time.Time) (ok bool, next time.Time) {
	switch {
	case b.state == breakerOpen && now.Before(b.openUntil):
		return false, b.openUntil
	case b.state == breakerOpen:
		return true, time.Time{} // the cool-down is over: this one is the probe
	case b.state == breakerHalfOpen && b.probing:
		return false, time.Time{}
	}
	return true, time.Time{}
}

// admit records that a delivery allowed at now starts: from open or
// half-open, it is the probe.
func (b *breaker) admit() {
	if b.state != breakerClosed {
		b.state, b.probing = breakerHalfOpen, true
	}
}

// succeeded closes the breaker, and reports whether it was not closed.
func (b *breaker) succeeded() (closed bool) {
	closed = b.state != breakerClosed
	*b = breaker{}
	return closed
}

// failed counts a failure at now; the N-th in a row, or a failed probe, opens
// the breaker. It returns the failures in a row that opened it, 0 if it did
// not open.
func (b *breaker) failed(cfg Breaker, now time.Time) (opened int) {
	if cfg.Failures == 0 {
		return 0
	}
	switch b.state {
	case breakerClosed:
		b.failures++
		if b.failures >= cfg.Failures {
			opened = b.failures
			b.open(cfg.CoolDown, now)
		}
	case breakerHalfOpen:
		if b.probing {
			opened = 1
			b.open(min(2*b.coolDown, cfg.MaxCoolDown), now)
		}
	}
	return opened
}

// answered is a result that says nothing either way: a probe that ends so
// lets the next task probe.
func (b *breaker) answered() {
	if b.state == breakerHalfOpen {
		b.probing = false
	}
}

func (b *breaker) open(coolDown time.Duration, now time.Time) {
	b.state, b.probing, b.failures = breakerOpen, false, 0
	b.coolDown, b.openUntil = coolDown, now.Add(coolDown)
}
