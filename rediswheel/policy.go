package rediswheel

import "time"

// A TaskOption sets part of one task's own policy when it is added: its type,
// handler timeout, attempts and backoff. Options not given fall back to the
// Queue's (Options.HandlerTimeout, MaxAttempts, Backoff). The policy is stored
// with the task, so every worker that delivers it applies the same one.
type TaskOption func(*taskPolicy)

// TaskType sets the task's type, which a Mux routes on (Task.Type). A type is
// at most MaxTypeLen bytes of printable ASCII; Add refuses others.
func TaskType(name string) TaskOption { return func(p *taskPolicy) { p.typ = name } }

// TaskTimeout bounds each delivery's handler: its context is cancelled after
// d, and a handler that has not returned by then counts as a failed attempt.
// d must be positive.
func TaskTimeout(d time.Duration) TaskOption { return func(p *taskPolicy) { p.timeout = d } }

// TaskMaxAttempts sets the deliveries after which the failing task goes to
// the dead set, instead of Options.MaxAttempts. n must be positive.
func TaskMaxAttempts(n int) TaskOption { return func(p *taskPolicy) { p.maxAttempts = n } }

// TaskBackoff makes the task's retries back off exponentially with full
// jitter from base up to limit (a random delay in [0, min(limit,
// base*2^(attempt-1))]), instead of Options.Backoff. A Go func cannot be
// stored in Redis, so a task's own backoff is this family only. base must be
// positive and limit at least base.
func TaskBackoff(base, limit time.Duration) TaskOption {
	return func(p *taskPolicy) { p.backoffBase, p.backoffLimit = base, limit }
}

// MaxTypeLen caps TaskType's name.
const MaxTypeLen = 128

// taskPolicy is a task's own policy; a zero field means the Queue's.
type taskPolicy struct {
	typ                       string
	timeout                   time.Duration
	maxAttempts               int
	backoffBase, backoffLimit time.Duration
}
