package api

import (
	"net/http"
)

// pausedJSON is the answer of /v1/pause and /v1/resume: whether deliveries
// are paused now.
type pausedJSON struct {
	Paused bool `json:"paused"`
}

// pause: POST /v1/pause (no body, or {}). No worker of any process on the
// namespace starts a task until /v1/resume; deliveries running finish, and
// creates, cancels and requeues go on (durable's Pause). Pausing a paused
// queue changes nothing. GET /v1/stats says whether it is paused.
func (h *handler) pause(w http.ResponseWriter, r *http.Request) error {
	if err := noBody(w, r, h.cfg.MaxBody); err != nil {
		return err
	}
	if err := h.cfg.Queue.Pause(r.Context()); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, pausedJSON{Paused: true})
}

// resume: POST /v1/resume (no body, or {}): workers claim again; every task
// that fell due meanwhile is due now. Resuming a running queue changes
// nothing.
func (h *handler) resume(w http.ResponseWriter, r *http.Request) error {
	if err := noBody(w, r, h.cfg.MaxBody); err != nil {
		return err
	}
	if err := h.cfg.Queue.Resume(r.Context()); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, pausedJSON{Paused: false})
}
