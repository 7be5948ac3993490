package durable

import (
	"math"
	"math/rand/v2"
	"time"
)

// fullJitter is exponential backoff with full jitter: a uniformly random
// delay in [0, min(limit, base*2^(attempt-1))], so that tasks failing
// together do not retry together. DefaultBackoff and TaskBackoff both use it.
func fullJitter(base, limit time.Duration, attempt int) time.Duration {
	ceiling := max(min(base, limit), 0)
	// Doubling stops at limit, so it neither overflows nor loops past ~63 times.
	for i := 1; i < attempt && ceiling < limit; i++ {
		if ceiling > limit/2 {
			ceiling = limit
		} else {
			ceiling *= 2
		}
	}
	if ceiling == math.MaxInt64 {
		ceiling-- // rand.N's bound is ceiling+1
	}
	return rand.N(ceiling + 1)
}
