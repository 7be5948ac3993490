package dashboard

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/go-timingwheel/timingwheel/durable"
)

// cancelForm is GET /ui/cancel?key=K&from=dead|task: the confirmation of
// Cancel, saying what it does to the task in its present state.
func (d *dashboard) cancelForm(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	key, from := q.Get("key"), q.Get("from")
	if from != "dead" && from != "task" {
		d.fail(w, r, http.StatusBadRequest, "The link's from must be dead or task.")
		return
	}
	info, err := d.Queue.Get(r.Context(), key)
	switch {
	case errors.Is(err, durable.ErrNotFound):
		d.fail(w, r, http.StatusNotFound, fmt.Sprintf("No task %q: nothing to cancel.", key))
		return
	case errors.Is(err, durable.ErrKey):
		d.fail(w, r, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		d.failStore(w, r, "Get", err)
		return
	}
	var explain string
	switch info.State {
	case durable.StateInFlight:
		explain = "It is being delivered now: the delivery runs to its end, and the task then finishes as cancelled, whatever its outcome; it is not retried."
	case durable.StateDone, durable.StateCancelled:
		explain = "It has finished; cancelling forgets it at once."
	default:
		explain = "It will not be delivered: it finishes as cancelled at once (kept for the retention time, then forgotten). This cannot be undone."
	}
	back := "/ui/dead"
	if from == "task" {
		back = "/ui/task?key=" + urlQuery(key)
	}
	d.confirm(w, r, "Cancel a task", confirmData{
		Question: fmt.Sprintf("Cancel the %s task %q?", info.State, key),
		Explain:  explain, Action: "/ui/cancel",
		Fields: []field{{"key", key}, {"from", from}}, Button: "Cancel the task", Back: back,
	})
}
