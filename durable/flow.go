package durable

import (
	"fmt"
	"maps"
	"sync"
	"time"
)

// Flow is flow control per destination, for Options.Flow: it maps each task
// to a key (its destination: a callback's origin, a task type) and holds the
// Limit and Breaker of every key, so that one slow or failing destination
// cannot take every handler of a Run.
//
// A task whose key is saturated (its Limit reached, its breaker open, or
// paused by a RetryAfter of one of its deliveries) does not start: it waits,
// in the Run that claimed it, without a handler, its lease kept by the
// heartbeat like a running task's, while tasks of other keys start. Its
// attempt is not used up by waiting; it starts, in the order claimed, as soon
// as its key has room. A Run keeps at most FlowOptions.MaxWaiting tasks
// waiting, so their memory is bounded by that many payloads; past it, the
// newest waiting task of the key with the most waiting is handed back to the
// store, due again later (OutcomeLater, with "durable: flow: ..." as its last
// error): such a hand-back counts as a postponement, like a RetryAfter, so a
// task handed back more than MaxPostponements times uses up attempts.
//
// A RetryAfter (HTTPHandler's 429 or 503 with Retry-After) from any task of a
// key pauses the whole key for its delay, not only that task.
//
// Limits, breakers and waiting tasks are per Run: a Queue with two Runs, or
// two processes, let through twice the Limit. A Flow may be shared by several
// Queues and Runs; its methods are safe for concurrent use, and SetLimit
// applies to running Runs at the next task of the key.
type Flow struct {
	key        func(Task) string
	defLimit   Limit
	breaker    Breaker
	maxWaiting int

	mu     sync.RWMutex
	limits map[string]Limit   // overrides of defLimit, by key
	gates  map[*gate]struct{} // of the Runs using the Flow now
}

// FlowOptions configures a Flow.
type FlowOptions struct {
	// Key maps a task to its flow key; "" means the task is not flow
	// controlled and starts as without a Flow. Key must be quick and must not
	// block: the Run's poller calls it once per claimed task. nil: the task's
	// Type (Mux's routing key). HTTPOrigin keys HTTP tasks by origin.
	Key func(Task) string
	// Default is the Limit of a key without one of its own (SetLimit).
	Default Limit
	// Breaker applies to every key.
	Breaker Breaker
	// MaxWaiting caps the tasks one Run keeps waiting for their keys
	// (default 4 × Options.Concurrency).
	MaxWaiting int
}

// NewFlow returns a Flow. Its errors wrap ErrFlow.
func NewFlow(opts FlowOptions) (*Flow, error) {
	if err := opts.Default.check(); err != nil {
		return nil, fmt.Errorf("%w (Default)", err)
	}
	b, err := opts.Breaker.withDefaults()
	if err != nil {
		return nil, err
	}
	if opts.MaxWaiting < 0 {
		return nil, fmt.Errorf("%w: MaxWaiting %d (want 0 or more)", ErrFlow, opts.MaxWaiting)
	}
	key := opts.Key
	if key == nil {
		key = func(t Task) string { return t.Type }
	}
	return &Flow{key: key, defLimit: opts.Default, breaker: b, maxWaiting: opts.MaxWaiting,
		limits: map[string]Limit{}, gates: map[*gate]struct{}{}}, nil
}

// SetLimit gives key a Limit of its own instead of the Default. Its error
// wraps ErrFlow.
func (f *Flow) SetLimit(key string, l Limit) error {
	if err := l.check(); err != nil {
		return fmt.Errorf("%w (key %q)", err, key)
	}
	f.mu.Lock()
	f.limits[key] = l
	f.mu.Unlock()
	return nil
}

// DeleteLimit gives key the Default again.
func (f *Flow) DeleteLimit(key string) {
	f.mu.Lock()
	delete(f.limits, key)
	f.mu.Unlock()
}

// Limit returns the Limit that applies to key.
func (f *Flow) Limit(key string) Limit {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if l, ok := f.limits[key]; ok {
		return l
	}
	return f.defLimit
}

// Limits returns a copy of the keys' own Limits (those given to SetLimit).
func (f *Flow) Limits() map[string]Limit {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return maps.Clone(f.limits)
}

// Default returns the Limit of keys without one of their own.
func (f *Flow) Default() Limit { return f.defLimit }

// Breaker returns the breaker configuration, with its defaults filled in.
func (f *Flow) Breaker() Breaker { return f.breaker }

// States returns the keys that the Runs using f are busy with now (running,
// waiting, a breaker not closed, a pause), one entry per key and Run.
func (f *Flow) States() []KeyState {
	f.mu.RLock()
	gates := make([]*gate, 0, len(f.gates))
	for g := range f.gates {
		gates = append(gates, g)
	}
	f.mu.RUnlock()
	now := time.Now()
	var out []KeyState
	for _, g := range gates {
		out = append(out, g.snapshot(now)...)
	}
	return out
}

// attach makes the gate of a Run with concurrency handlers.
func (f *Flow) attach(concurrency int) *gate {
	w := f.maxWaiting
	if w == 0 {
		w = 4 * concurrency
	}
	g := newGate(f, w)
	f.mu.Lock()
	f.gates[g] = struct{}{}
	f.mu.Unlock()
	return g
}

func (f *Flow) detach(g *gate) {
	f.mu.Lock()
	delete(f.gates, g)
	f.mu.Unlock()
}
