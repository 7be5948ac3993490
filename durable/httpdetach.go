package durable

import (
	"fmt"
	"net/http"
	"time"
)

// Asynchronous completion of HTTP tasks: a receiver that answers 202 Accepted says "working on
// it". HTTPHandler then returns Detach(the task's CompletionTimeout), and the receiver, or
// anything it hands the token to, finishes the task later with Complete and the token it got in
// HeaderCompletionToken (timerd: POST /v1/tasks/{key}/complete or /fail). A task not completed
// in time is delivered again, its attempt counted, with a new token.

// HeaderCompletionToken carries the delivery's Task.Token on every callback, for Complete after
// a 202 answer. Whoever holds it can finish the delivery: send callbacks over https.
const HeaderCompletionToken = "X-Completion-Token"

// DefaultCompletionTimeout is how long a task whose receiver answered 202 waits for Complete
// when its HTTPTask.CompletionTimeout is zero.
const DefaultCompletionTimeout = time.Hour

// validateCompletion checks HTTPTask.CompletionTimeout, for AddHTTP (ErrInvalidTimeout).
func (t HTTPTask) validateCompletion() error {
	if t.CompletionTimeout < 0 || t.CompletionTimeout > MaxDetach {
		return fmt.Errorf("%w: completion timeout %v is not in [0, %v]", ErrInvalidTimeout, t.CompletionTimeout, MaxDetach)
	}
	return nil
}

// setCompletionHeader puts the delivery's token on req; a task delivered outside Run has none.
func setCompletionHeader(req *http.Request, task Task) {
	if task.Token != "" {
		req.Header.Set(HeaderCompletionToken, task.Token)
	}
}

// accepted is the result of a 2xx answer with status code: Detach on 202, done on any other.
func accepted(t HTTPTask, code int) error {
	if code != http.StatusAccepted {
		return nil
	}
	if t.CompletionTimeout > 0 {
		return Detach(t.CompletionTimeout)
	}
	return Detach(DefaultCompletionTimeout)
}
