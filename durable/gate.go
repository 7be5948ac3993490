package durable

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// gate is one Run's flow control (see Flow): per key, what is running, the
// rate bucket, the breaker, a RetryAfter pause, and the tasks waiting, oldest
// first. Every method takes the time, so tests drive it with a fake clock.
//
// mu guards keys and waiting. The poller alone calls admit and ready, and so
// alone starts tasks (it alone takes handler slots: see runner.slots);
// handlers' goroutines call finish.
type gate struct {
	flow       *Flow
	maxWaiting int
	// sweep is set when a waiting task's context ends (Cancel, a lost lease):
	// the next ready looks through every queue, not only their heads.
	sweep atomic.Bool

	mu      sync.Mutex
	keys    map[string]*keyState
	waiting int // tasks in every queue
}

// keyState is one key's state in one Run. A key with nothing running,
// waiting, counted or pending is forgotten (tidy), so the map holds only the
// keys a Run is busy with.
type keyState struct {
	running     int
	bucket      tokenBucket
	breaker     breaker
	pausedUntil time.Time   // a RetryAfter of the key
	queue       []*delivery // waiting, oldest first
}

// flowRetry is the hand-back delay per round of a key's Concurrency ahead of
// the task: a second a round spreads a long queue over many claims rather
// than bringing it back at once to be handed back again.
const flowRetry = time.Second

func newGate(f *Flow, maxWaiting int) *gate {
	return &gate{flow: f, maxWaiting: maxWaiting, keys: map[string]*keyState{}}
}

// result is what a finished delivery tells the gate about its key.
type result struct {
	kind  resultKind
	pause time.Duration // resultPause
}

type resultKind int

const (
	resultSuccess resultKind = iota // closes the breaker
	resultFailure                   // counts toward opening it
	resultAnswer                    // neither: Permanent, or cut short by Cancel, a lost lease, the end of Run
	resultPause                     // RetryAfter: the key waits pause, and it is an answer
)

// admit decides what becomes of d, just claimed, whose key is key (not ""):
// it starts now (counted as running), or it waits, or, when MaxWaiting tasks
// wait already, one task is handed back to the store, due after delay: d
// itself or the newest waiting task of a key with more waiting than d's.
func (g *gate) admit(d *delivery, key string, now time.Time) (start bool, handBack *delivery, delay time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ks := g.state(key)
	// Behind tasks already waiting for the key, whatever the key would
	// allow now: they go first.
	if len(ks.queue) == 0 {
		if ok, _ := g.try(key, ks, now); ok {
			return true, nil, 0
		}
	}
	if g.waiting < g.maxWaiting {
		g.enqueue(ks, d)
		return false, nil, 0
	}
	victimKey, victim := key, ks
	for k, s := range g.keys {
		if len(s.queue) > len(victim.queue) {
			victimKey, victim = k, s
		}
	}
	if victim == ks {
		return false, d, g.handBackDelay(key, ks, now)
	}
	out := victim.queue[len(victim.queue)-1]
	victim.queue = victim.queue[:len(victim.queue)-1]
	delay = g.handBackDelay(victimKey, victim, now)
	g.waiting--
	g.enqueue(ks, d)
	return false, out, delay
}

func (g *gate) enqueue(ks *keyState, d *delivery) {
	ks.queue = append(ks.queue, d)
	g.waiting++
}

// ready returns the waiting tasks that may start at now, at most free of
// them, counted as running; gone, the waiting tasks whose contexts ended
// (their owner settles or drops them); and next, the earliest time a waiting
// task may start without a finish first (zero: none known).
func (g *gate) ready(now time.Time, free int) (start, gone []*delivery, next time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sweep.Swap(false) {
		for _, ks := range g.keys {
			kept := ks.queue[:0]
			for _, d := range ks.queue {
				if d.ctx.Err() != nil {
					gone = append(gone, d)
					g.waiting--
					continue
				}
				kept = append(kept, d)
			}
			clear(ks.queue[len(kept):])
			ks.queue = kept
		}
	}
	for key, ks := range g.keys {
		for len(ks.queue) > 0 && len(start) < free {
			ok, at := g.try(key, ks, now)
			if !ok {
				if !at.IsZero() && (next.IsZero() || at.Before(next)) {
					next = at
				}
				break
			}
			start = append(start, ks.queue[0])
			ks.queue[0] = nil
			ks.queue = ks.queue[1:]
			g.waiting--
		}
		g.tidy(key, ks, now)
	}
	return start, gone, next
}

// finish records that a delivery of key that admit or ready started has
// returned with r at now. It reports whether tasks wait, for which the
// poller should look again, and the breaker's move if r moved it (opened
// or closed; nil if not), for the Observer, with no Error set.
func (g *gate) finish(key string, r result, now time.Time) (waiting bool, moved *BreakerEvent) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ks := g.state(key)
	ks.running--
	switch r.kind {
	case resultSuccess:
		if ks.breaker.succeeded() {
			moved = &BreakerEvent{Key: key, State: breakerClosed.String()}
		}
	case resultFailure:
		if n := ks.breaker.failed(g.flow.breaker, now); n > 0 {
			moved = &BreakerEvent{Key: key, State: breakerOpen.String(), Failures: n, OpenUntil: ks.breaker.openUntil}
		}
	case resultPause:
		ks.breaker.answered()
		if until := now.Add(r.pause); until.After(ks.pausedUntil) {
			ks.pausedUntil = until
		}
	default:
		ks.breaker.answered()
	}
	g.tidy(key, ks, now)
	return g.waiting > 0, moved
}

// try starts a delivery of key at now if the pause, the breaker and the
// Limit allow, and otherwise says when to try again (zero: after a finish).
func (g *gate) try(key string, ks *keyState, now time.Time) (ok bool, next time.Time) {
	if now.Before(ks.pausedUntil) {
		return false, ks.pausedUntil
	}
	if ok, at := ks.breaker.allow(now); !ok {
		return false, at
	}
	l := g.flow.Limit(key)
	if l.Concurrency > 0 && ks.running >= l.Concurrency {
		return false, time.Time{}
	}
	if ok, at := ks.bucket.take(l, now); !ok {
		return false, at
	}
	ks.breaker.admit()
	ks.running++
	return true, time.Time{}
}

// handBackDelay is how long a task of key handed back at now stays away: till
// the key's known opening, plus a flowRetry for each round of its Concurrency
// waiting ahead.
func (g *gate) handBackDelay(key string, ks *keyState, now time.Time) time.Duration {
	var wait time.Duration
	if now.Before(ks.pausedUntil) {
		wait = ks.pausedUntil.Sub(now)
	}
	if ks.breaker.state == breakerOpen {
		wait = max(wait, ks.breaker.openUntil.Sub(now))
	}
	rounds := len(ks.queue)
	if c := g.flow.Limit(key).Concurrency; c > 0 {
		rounds /= c
	}
	return min(wait+time.Duration(rounds+1)*flowRetry, MaxRetryAfter)
}

func (g *gate) state(key string) *keyState {
	ks := g.keys[key]
	if ks == nil {
		ks = &keyState{}
		g.keys[key] = ks
	}
	return ks
}

// tidy forgets key when forgetting changes nothing it would admit.
func (g *gate) tidy(key string, ks *keyState, now time.Time) {
	if ks.running == 0 && len(ks.queue) == 0 && ks.breaker == (breaker{}) &&
		!now.Before(ks.pausedUntil) && ks.bucket.full(g.flow.Limit(key), now) {
		delete(g.keys, key)
	}
}

// drain empties every queue, for a stopping Run to release the tasks.
func (g *gate) drain() []*delivery {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*delivery
	for key, ks := range g.keys {
		out = append(out, ks.queue...)
		ks.queue = nil
		delete(g.keys, key)
	}
	g.waiting = 0
	return out
}

// KeyState is one flow key's state in a Run, for an operator's view.
type KeyState struct {
	Key     string
	Running int
	Waiting int
	// Breaker is "closed", "open" or "half-open".
	Breaker string
	// OpenUntil is when an open breaker lets a probe through; PausedUntil
	// the end of a RetryAfter of the key. Zero when not so.
	OpenUntil, PausedUntil time.Time
}

// snapshot reads every key the gate knows.
func (g *gate) snapshot(now time.Time) []KeyState {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]KeyState, 0, len(g.keys))
	for key, ks := range g.keys {
		s := KeyState{Key: key, Running: ks.running, Waiting: len(ks.queue), Breaker: ks.breaker.state.String()}
		if ks.breaker.state == breakerOpen {
			s.OpenUntil = ks.breaker.openUntil
		}
		if now.Before(ks.pausedUntil) {
			s.PausedUntil = ks.pausedUntil
		}
		out = append(out, s)
	}
	return out
}

// handBackError is the last error of a task handed back for its key.
func handBackError(key string) string {
	return fmt.Sprintf("durable: flow: %q saturated and MaxWaiting tasks waiting: handed back", key)
}
