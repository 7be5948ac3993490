package durable

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// HTTPTaskType is the type of tasks added with AddHTTP, AddHTTPAfter and
// ReplaceHTTP: register HTTPHandler under it to send them from a Mux.
const HTTPTaskType = "http"

// ErrNoHandler is wrapped by the Permanent error Mux.Handler returns for a
// task whose type has no handler.
var ErrNoHandler = errors.New("durable: no handler for task type")

// Mux routes each task to the Handler registered for its Task.Type, so tasks
// of several kinds (HTTP callbacks and Go handlers, say) share one namespace
// and one Run:
//
//	m := durable.NewMux()
//	m.Handle(durable.HTTPTaskType, durable.HTTPHandler(nil))
//	m.HandleFunc("email", sendEmail)
//	err := q.Run(ctx, m.Handler)
//
// Types match exactly; there is no pattern and no catch-all. The type ""
// is a type like the others: a handler registered under it gets the tasks
// added without TaskType, and only those. A task whose type has no handler
// goes to the dead set at once, with an error wrapping ErrNoHandler that
// names the type, rather than to a handler that would misread its payload;
// after registering one, Requeue brings such tasks back.
//
// Limit bounds the deliveries of a type (concurrency, rate) and gives it a
// circuit breaker, so that one slow kind of task cannot take every handler:
// give m.Flow() as Options.Flow, and tasks of a saturated type wait without
// a handler and without using up attempts (see Flow).
//
// A Mux is safe for concurrent use: handlers may be registered while Run
// delivers. The zero Mux is empty and ready to use.
type Mux struct {
	mu       sync.RWMutex
	handlers map[string]Handler // by Task.Type

	flowOnce sync.Once
	flow     *Flow
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{} }

// Handle registers h for tasks of type typ. It panics if h is nil, if typ is
// not a type TaskType accepts (printable ASCII, at most MaxTypeLen bytes), or
// if typ already has a handler, as http.ServeMux does: each is a mistake in
// the program, not in the data.
func (m *Mux) Handle(typ string, h Handler) {
	if h == nil {
		panic(fmt.Sprintf("durable: Mux.Handle: nil handler for type %q", typ))
	}
	if !routableType(typ) {
		panic(fmt.Sprintf("durable: Mux.Handle: type %q is not printable ASCII of at most %d bytes", typ, MaxTypeLen))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.handlers[typ]; dup {
		panic(fmt.Sprintf("durable: Mux.Handle: type %q registered twice", typ))
	}
	if m.handlers == nil {
		m.handlers = make(map[string]Handler)
	}
	m.handlers[typ] = h
}

// HandleFunc registers f for tasks of type typ, like Handle.
func (m *Mux) HandleFunc(typ string, f func(ctx context.Context, t Task) error) {
	if f == nil {
		panic(fmt.Sprintf("durable: Mux.HandleFunc: nil func for type %q", typ))
	}
	m.Handle(typ, f)
}

// Handler runs the handler registered for t.Type, and returns what it
// returns; pass m.Handler to Run. For a type without a handler it returns a
// Permanent error wrapping ErrNoHandler.
func (m *Mux) Handler(ctx context.Context, t Task) error {
	m.mu.RLock()
	h, ok := m.handlers[t.Type]
	m.mu.RUnlock()
	if !ok {
		return Permanent(fmt.Errorf("%w %q", ErrNoHandler, t.Type))
	}
	return h(ctx, t)
}

// routableType reports whether TaskType accepts typ: at most MaxTypeLen bytes
// of printable ASCII (space to tilde); "" is the type of a task added without
// TaskType. Add checks the same rule on its side (add.go).
func routableType(typ string) bool {
	if len(typ) > MaxTypeLen {
		return false
	}
	for i := 0; i < len(typ); i++ {
		if c := typ[i]; c < ' ' || c > '~' {
			return false
		}
	}
	return true
}

// Limit sets the Limit of tasks of type typ in m.Flow(), at once for running
// Runs. It panics on a Limit NewFlow would refuse (ErrFlow): a mistake in
// the program.
func (m *Mux) Limit(typ string, l Limit) {
	if err := m.Flow().SetLimit(typ, l); err != nil {
		panic(fmt.Sprintf("durable: Mux.Limit: %v", err))
	}
}

// Flow returns the Mux's flow control, keyed by task type, for
// Options.Flow: types without a Limit are not bounded, and its breaker is
// DefaultMuxBreaker. It is the same Flow at every call.
func (m *Mux) Flow() *Flow {
	m.flowOnce.Do(func() {
		f, err := NewFlow(FlowOptions{Breaker: DefaultMuxBreaker})
		if err != nil {
			panic(err) // DefaultMuxBreaker is valid
		}
		m.flow = f
	})
	return m.flow
}

// DefaultMuxBreaker is the breaker of Mux.Flow: open after 5 failures of a
// type in a row, for 30s, doubling to 10m while probes fail.
var DefaultMuxBreaker = Breaker{Failures: 5, CoolDown: DefaultCoolDown, MaxCoolDown: DefaultMaxCoolDown}
