package timingwheel

import (
	"math"
	"time"
)

// never is the due tick of a timer that never fires: one whose deadline is
// past what the wheel's clock can reach (math.MaxInt64 ns, 292 years, after
// New), It is in no bucket.
const never = math.MaxInt64

// ticks converts between the wheel's time, nanoseconds since its epoch (see
// delayqueue.DelayQueue.Now), and its ticks. It is the one place where a
// deadline is rounded.
type ticks struct {
	tick    int64   // nanoseconds per tick of level 0
	perTick divider // divides by tick
}

// dueAfter returns the due tick of a timer armed at now for d.
//
// Rounding up is what makes the wheel never fire early: a timer fires only
// once its shard's currentTick has reached its due tick, and currentTick
// never runs ahead of the clock. A d <= 0 is due at tick 0, which is never
// after currentTick: due at once. A deadline now+d that overflows is past
// anything the clock can read, so the timer never fires.
func (k ticks) dueAfter(now, d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	if now > math.MaxInt64-d {
		return never
	}
	return k.dueAt(now + d)
}

// dueAt returns the first tick that begins at or after ns. It is below never
// for every ns < math.MaxInt64, even at a 1 ns tick.
func (k ticks) dueAt(ns time.Duration) int64 {
	if ns <= 0 {
		return 0
	}
	if ns == math.MaxInt64 {
		return never
	}
	// ceil(ns/tick) = floor((ns-1)/tick) + 1 for ns > 0.
	return k.perTick.div(int64(ns)-1) + 1
}

// tickOf returns the tick that ns falls in: the last one begun by ns >= 0.
func (k ticks) tickOf(ns time.Duration) int64 { return k.perTick.div(int64(ns)) }

// startOf returns the wheel time at which tick begins, saturating at
// delayqueue.Never for a tick that begins past the clock's range.
func (k ticks) startOf(tick int64) time.Duration {
	if tick > math.MaxInt64/k.tick {
		return math.MaxInt64
	}
	return time.Duration(tick * k.tick)
}
