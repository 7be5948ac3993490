package durable

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrFlow reports a bad Limit, Breaker or FlowOptions field; the error wrapping it
// names the field and the value.
var ErrFlow = errors.New("durable: bad flow control setting")

// Limit bounds the deliveries of one flow key (see Flow) in one Run. The zero
// Limit bounds nothing.
type Limit struct {
	// Concurrency is how many handlers of the key may run at once; 0: no
	// bound. A handler that outlives its timeout keeps its place until it
	// returns, as it does among Options.Concurrency.
	Concurrency int
	// Rate is how many deliveries of the key may start per second, on
	// average; 0: no bound.
	Rate float64
	// Burst is how many may start at once after an idle spell, when Rate
	// is set (a token bucket of Burst tokens refilled at Rate); 0 means 1.
	Burst int
}

// maxRate bounds Limit.Rate: a token every nanosecond is already more than
// any handler starts.
const maxRate = 1e9

func (l Limit) check() error {
	switch {
	case l.Concurrency < 0:
		return fmt.Errorf("%w: Concurrency %d (want 0 or more)", ErrFlow, l.Concurrency)
	case l.Rate < 0 || l.Rate > maxRate || math.IsNaN(l.Rate):
		return fmt.Errorf("%w: Rate %v (want 0..%g per second)", ErrFlow, l.Rate, float64(maxRate))
	case l.Burst < 0:
		return fmt.Errorf("%w: Burst %d (want 0 or more)", ErrFlow, l.Burst)
	}
	return nil
}

func (l Limit) burst() float64 { return float64(max(l.Burst, 1)) }

// String is the limit as timerd's start-up log and flags spell it.
func (l Limit) String() string {
	return fmt.Sprintf("concurrency:%d,rate:%g,burst:%d", l.Concurrency, l.Rate, l.Burst)
}

// tokenBucket is Limit.Rate's state: tokens is the count at at. The zero
// bucket (used false) is full.
type tokenBucket struct {
	used   bool // false: full
	tokens float64
	at     time.Time
}

// take spends a token of l at now if there is one; otherwise it returns when
// the next one will be there.
func (b *tokenBucket) take(l Limit, now time.Time) (ok bool, next time.Time) {
	if l.Rate == 0 {
		return true, time.Time{}
	}
	tokens := b.level(l, now)
	if tokens < 1 {
		need := time.Duration((1 - tokens) / l.Rate * float64(time.Second))
		return false, now.Add(max(need, time.Nanosecond))
	}
	b.used, b.tokens, b.at = true, tokens-1, now
	return true, time.Time{}
}

// level is the tokens at now.
func (b *tokenBucket) level(l Limit, now time.Time) float64 {
	if !b.used {
		return l.burst()
	}
	elapsed := max(now.Sub(b.at), 0).Seconds()
	return min(b.tokens+elapsed*l.Rate, l.burst())
}

// full reports whether the bucket holds as much as it ever will, so a key's
// state may be forgotten without changing what it admits.
func (b *tokenBucket) full(l Limit, now time.Time) bool {
	return !b.used || l.Rate == 0 || b.level(l, now) >= l.burst()
}
