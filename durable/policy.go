package durable

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// A TaskOption sets part of one task's own policy when it is added: its type,
// handler timeout, attempts and backoff. Options not given fall back to the
// Queue's (Options.HandlerTimeout, MaxAttempts, Backoff). The policy is stored
// with the task, so every worker that delivers it applies the same one.
//
// A bad value makes Add, AddAfter, Replace or AddBatch return an error
// wrapping ErrTaskOption and store nothing.
type TaskOption func(*taskPolicy)

// TaskType sets the task's type, which a Mux routes on (Task.Type). A type is
// at most MaxTypeLen bytes of printable ASCII; Add refuses others. "" is no
// type.
func TaskType(name string) TaskOption {
	return func(p *taskPolicy) {
		p.Type = name
		if len(name) > MaxTypeLen {
			p.fail(fmt.Errorf("%w: type of %d bytes (at most %d)", ErrTaskOption, len(name), MaxTypeLen))
		}
		for i := 0; i < len(name); i++ {
			if c := name[i]; c < 0x20 || c > 0x7e {
				p.fail(fmt.Errorf("%w: type %q has byte %#x at %d (printable ASCII only)", ErrTaskOption, name, c, i))
				return
			}
		}
	}
}

// TaskTimeout bounds each delivery's handler: its context is cancelled after
// d, and a handler that has not returned by then counts as a failed attempt.
// d must be positive; it is stored rounded up to the millisecond.
func TaskTimeout(d time.Duration) TaskOption {
	return func(p *taskPolicy) {
		p.Timeout = d
		if d <= 0 || d > maxPolicyDuration {
			p.fail(fmt.Errorf("%w: TaskTimeout %v (want > 0, at most %v)", ErrTaskOption, d, maxPolicyDuration))
		}
	}
}

// TaskMaxAttempts sets the deliveries after which the failing task goes to
// the dead set, instead of Options.MaxAttempts. n must be positive (and at
// most 2^53, the integers every store counts exactly: Redis's Lua reads
// them as doubles).
func TaskMaxAttempts(n int) TaskOption {
	return func(p *taskPolicy) {
		p.MaxAttempts = n
		if n <= 0 || uint64(n) > maxPolicyAttempts {
			p.fail(fmt.Errorf("%w: TaskMaxAttempts %d (want 1..2^53)", ErrTaskOption, n))
		}
	}
}

// TaskBackoff makes the task's retries back off exponentially with full
// jitter from base up to limit (a random delay in [0, min(limit,
// base*2^(attempt-1))]), instead of Options.Backoff. A Go func cannot be
// stored with the task, so a task's own backoff is this family only. base must be
// positive and limit at least base; both are stored rounded up to the
// millisecond.
func TaskBackoff(base, limit time.Duration) TaskOption {
	return func(p *taskPolicy) {
		p.BackoffBase, p.BackoffLimit = base, limit
		if base <= 0 || limit < base || limit > maxPolicyDuration {
			p.fail(fmt.Errorf("%w: TaskBackoff(%v, %v) (want base > 0, limit >= base, at most %v)", ErrTaskOption, base, limit, maxPolicyDuration))
		}
	}
}

// ErrTaskOption reports a bad TaskOption value given to Add, AddAfter,
// Replace or AddBatch; the error wrapping it names the option and the value.
var ErrTaskOption = errors.New("durable: bad task option")

// MaxTypeLen caps TaskType's name.
const MaxTypeLen = 128

// maxPolicyDuration caps the durations of a policy: they are stored rounded
// up to whole milliseconds, and the longest Duration would round up to one
// millisecond more than a Duration holds when read back.
const maxPolicyDuration = time.Duration(math.MaxInt64/int64(time.Millisecond)) * time.Millisecond

// maxPolicyAttempts caps TaskMaxAttempts: attempts are Redis integers that
// Lua reads as doubles (the narrowest store), exact only up to 2^53.
const maxPolicyAttempts = 1 << 53

// taskPolicy is a task's own policy as its options build it; a zero field
// means the Queue's. Durations are whole milliseconds once read back from a
// store.
type taskPolicy struct {
	Policy
	err error // the first bad option applied, for policyOf
}

func (p *taskPolicy) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// policyOf applies opts, in order, to a zero policy. Its error wraps
// ErrTaskOption; the caller stores nothing then.
func policyOf(opts []TaskOption) (taskPolicy, error) {
	var p taskPolicy
	for _, o := range opts {
		if o == nil {
			return taskPolicy{}, fmt.Errorf("%w: nil TaskOption", ErrTaskOption)
		}
		o(&p)
	}
	return p, p.err
}
