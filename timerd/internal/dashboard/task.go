package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

type taskData struct {
	Info    durable.TaskInfo
	Outcome *outcome
	// CanCancel and CanRequeue say which buttons the task's state allows.
	CanCancel, CanRequeue bool
	Request               request // what it sends: request.go
	// Detached: in flight with its lease past any heartbeat's reach (now +
	// Lease): its callback answered 202 and it waits for /complete or /fail.
	Detached bool
	// Held says why it may wait, in flight, for its origin (origins.go);
	// "" if its origin is not held.
	Held string
}

// task shows one task (Queue.Get): its state, times, attempts, last error,
// policy and delivery log, with Cancel while it is pending or dead and
// Requeue while it is dead. The search form of every page leads here. No key
// is a 400; a key in no state a 404.
func (d *dashboard) task(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		d.fail(w, r, http.StatusBadRequest, "Give a task key to look for.")
		return
	}
	info, err := d.Queue.Get(r.Context(), key)
	switch {
	case errors.Is(err, durable.ErrNotFound):
		msg := fmt.Sprintf("No task %q: never added, finished and no longer retained, or trimmed from the dead set.", key)
		if o := outcomeOf(r); o != nil {
			msg = o.Text + " " + msg
		}
		d.fail(w, r, http.StatusNotFound, msg)
		return
	case errors.Is(err, durable.ErrKey):
		d.fail(w, r, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		d.failStore(w, r, "Get", err)
		return
	}
	pending := info.State == durable.StateScheduled || info.State == durable.StateRetrying ||
		info.State == durable.StateInFlight
	req, err := d.requestOf(r.Context(), key, info.State)
	if err != nil {
		d.failStore(w, r, "Payload", err)
		return
	}
	d.render(w, r, http.StatusOK, "task", "Task", taskData{
		Info: info, Outcome: outcomeOf(r),
		CanCancel: pending || info.State == durable.StateDead, CanRequeue: info.State == durable.StateDead,
		Request:  req,
		Detached: info.State == durable.StateInFlight && time.Until(info.Due) > d.Queue.Options().Lease,
		Held:     d.heldLine(info, req),
	})
}
