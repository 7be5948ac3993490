package durablemetrics

import (
	"strconv"
	"sync"

	"github.com/go-timingwheel/timingwheel/durable"
)

// DefaultMaxOrigins is how many origins get series of their own unless
// MaxOrigins says otherwise: with 6 outcomes and 5 status classes, at most
// 30 delivery series per origin, 630 in all, and 21 breaker gauges.
const DefaultMaxOrigins = 20

// Origin label values that are not origins.
const (
	otherOrigin = "other" // past MaxOrigins
	noOrigin    = "none"  // a task the origin key gives "" for: not an HTTP task
)

// MaxOrigins sets how many origins get series of their own (default
// DefaultMaxOrigins): the first k seen by this Metrics, in the order of
// their first delivery or breaker event, keep their label for the life of
// the process; every later one is counted under origin="other". So 10,000
// destinations make at most k+1 series per outcome and status class, and the
// label is stable (a series never changes meaning), at the cost of naming
// the first origins rather than the busiest. k must be positive.
func MaxOrigins(k int) Option {
	if k <= 0 {
		panic("durablemetrics: MaxOrigins: want a positive count")
	}
	return func(c *config) { c.maxOrigins = k }
}

// OriginKey sets how a task's origin is read (default durable.HTTPOrigin,
// which gives "" for a task that is not an HTTP task: origin="none"). Use the
// Flow's key function, so that breaker gauges and delivery counts share
// their labels.
func OriginKey(key func(durable.Task) string) Option {
	if key == nil {
		panic("durablemetrics: OriginKey with nil func")
	}
	return func(c *config) { c.originKey = key }
}

// origins hands out origin label values, at most max distinct origins.
type origins struct {
	key func(durable.Task) string
	max int

	mu    sync.RWMutex
	named map[string]struct{} // grows to max, never shrinks
}

// label is the label value of origin o: itself, "other" past max, "none"
// for "".
func (s *origins) label(o string) string {
	if o == "" {
		return noOrigin
	}
	s.mu.RLock()
	_, ok := s.named[o]
	full := len(s.named) >= s.max
	s.mu.RUnlock()
	switch {
	case ok:
		return o
	case full:
		return otherOrigin
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.named[o]; ok || len(s.named) < s.max {
		s.named[o] = struct{}{}
		return o
	}
	return otherOrigin
}

// statusClass is a Result code's class: "2xx" to "5xx", or "none" for no
// code or one that is not an HTTP status.
func statusClass(code int) string {
	if code >= 200 && code < 600 {
		return strconv.Itoa(code/100) + "xx"
	}
	return "none"
}

// openBreakers tracks the flow keys whose breakers are open, so that the
// gauge moves once per open and close however many failed probes reopen a
// breaker. It holds only the keys open now.
type openBreakers struct {
	mu   sync.Mutex
	open map[string]struct{}
}

// set records key's state and reports whether it changed.
func (b *openBreakers) set(key string, open bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, was := b.open[key]
	switch {
	case open && !was:
		b.open[key] = struct{}{}
		return true
	case !open && was:
		delete(b.open, key)
		return true
	}
	return false
}
