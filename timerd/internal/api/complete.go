package api

import (
	"errors"
	"net/http"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Asynchronous completion (durable's Detach and Complete): a callback that
// answered 202 Accepted leaves its task in flight until one of these two
// routes presents the delivery's token, which the callback received in the
// X-Completion-Token header (durable.HeaderCompletionToken), or until the
// callback's completion_timeout passes (the task is then retried).

type completeRequest struct {
	Token string `json:"token"`
}

type failRequest struct {
	Token     string `json:"token"`
	Error     string `json:"error"`
	Permanent bool   `json:"permanent"`
}

var (
	completeShape = shape{"token": nil}
	failShape     = shape{"token": nil, "error": nil, "permanent": nil}
)

// maxFailError caps a /fail error text, as durable caps a last error.
const maxFailError = 1024

// defaultFailError is the last error of a /fail without one.
const defaultFailError = "the receiver reported a failure"

// completedJSON is the task's state after a completion: done, retrying,
// dead or cancelled (when DELETE came first).
type completedJSON struct {
	State string `json:"state"`
}

// completedStates maps what the store did to the state it left the task in.
var completedStates = map[durable.SettleCode]string{
	durable.SettleDone:      "done",
	durable.SettleRetry:     "retrying",
	durable.SettleDead:      "dead",
	durable.SettleCancelled: "cancelled",
	durable.SettlePostponed: "retrying",
}

// completeTask: POST /v1/tasks/{key}/complete {"token"}: the delivery
// succeeded, the task is done.
func (h *handler) completeTask(w http.ResponseWriter, r *http.Request) error {
	key, err := pathKey(r)
	if err != nil {
		return err
	}
	var req completeRequest
	if err := decodeBody(w, r, h.cfg.MaxBody, completeShape, &req); err != nil {
		return err
	}
	return h.complete(w, r, key, req.Token, nil)
}

// failTask: POST /v1/tasks/{key}/fail {"token", "error", "permanent"}: the
// delivery failed; the task is retried after its backoff, its attempt
// counted (dead when out of attempts), or dead at once when permanent.
func (h *handler) failTask(w http.ResponseWriter, r *http.Request) error {
	key, err := pathKey(r)
	if err != nil {
		return err
	}
	var req failRequest
	if err := decodeBody(w, r, h.cfg.MaxBody, failShape, &req); err != nil {
		return err
	}
	if len(req.Error) > maxFailError {
		return invalid("error", "error must be at most %d bytes", maxFailError)
	}
	if req.Error == "" {
		req.Error = defaultFailError
	}
	result := errors.New(req.Error)
	if req.Permanent {
		result = durable.Permanent(result)
	}
	return h.complete(w, r, key, req.Token, result)
}

func (h *handler) complete(w http.ResponseWriter, r *http.Request, key, token string, result error) error {
	if token == "" {
		return invalid("token", "token is required: the X-Completion-Token header of the callback")
	}
	if h.cfg.VerifyCompletion != nil {
		t, err := h.cfg.VerifyCompletion(key, token)
		if err != nil {
			return invalid("token", "token is not one timerd sent for this task (the X-Completion-Token header of the callback)")
		}
		token = t
	}
	code, err := h.cfg.Queue.Complete(r.Context(), key, token, result)
	switch {
	case errors.Is(err, durable.ErrToken):
		return invalid("token", "token is not one timerd sent (the X-Completion-Token header of the callback)")
	case errors.Is(err, durable.ErrStaleToken):
		return conflict("the token is not the task's current delivery: it was completed already, its completion timeout passed (the task is retried with a new token), or the task is gone")
	case err != nil:
		return err
	}
	return writeJSON(w, http.StatusOK, completedJSON{State: completedStates[code]})
}
