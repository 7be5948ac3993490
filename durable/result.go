package durable

import (
	"context"
	"sync"
)

// MaxResultBody is the most of a Result's Body a delivery's history entry
// keeps: a longer body is cut to its first MaxResultBody bytes and
// Result.Truncated is set. It bounds what one entry adds to a task's stored
// history (Options.HistoryLen entries of at most this much each, for as long
// as the task is kept).
const MaxResultBody = 64 << 10

// Result is what one delivery produced, kept with it in the task's history
// (Delivery.Result) for as long as the history: for HTTPHandler, the
// callback's status code and response body, whether the callback succeeded
// or not; for any handler, what it gave SetResult. The zero Result is "no
// result" (a lost lease, a timeout, a handler that set none).
type Result struct {
	Code int    // a status code (HTTP's, for HTTPHandler); 0 for none
	Body []byte // at most MaxResultBody bytes
	// Truncated reports that Body was cut to MaxResultBody bytes.
	Truncated bool
}

// resultKey is the context key of a delivery's result slot.
type resultKey struct{}

// SetResult records r as the result of the delivery whose handler got ctx
// (or a context derived from it): the Queue settles it with the delivery's
// outcome, success or failure, and the store keeps it in the task's history.
// A Body longer than MaxResultBody is cut to it, with Truncated set; SetResult
// copies the bytes it keeps, so the caller may reuse Body. The last call
// before the delivery is settled wins: a call after the handler returned, or
// after its timeout (ErrHandlerTimeout) settled it, or with a context that is
// not a handler's, does nothing.
func SetResult(ctx context.Context, r Result) {
	slot, ok := ctx.Value(resultKey{}).(*resultSlot)
	if !ok {
		return
	}
	if len(r.Body) > MaxResultBody {
		r.Body, r.Truncated = r.Body[:MaxResultBody], true
	}
	if len(r.Body) == 0 {
		r.Body = nil
	} else {
		r.Body = append([]byte(nil), r.Body...)
	}
	slot.mu.Lock()
	if !slot.closed {
		slot.r = r
	}
	slot.mu.Unlock()
}

// resultSlot holds a delivery's result until its outcome is made. A handler
// may call SetResult from any goroutine, and its timeout may settle the
// delivery meanwhile: mu orders the two.
type resultSlot struct {
	mu     sync.Mutex
	r      Result
	closed bool // take was called: the outcome is made
}

// take returns the result and closes the slot: later SetResult calls change
// nothing.
func (s *resultSlot) take() Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.r
}

// withResultSlot gives a handler's context its result slot.
func withResultSlot(ctx context.Context, s *resultSlot) context.Context {
	return context.WithValue(ctx, resultKey{}, s)
}
