package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// Completing a task that waits on a 202 (the task page's form, shown while
// the task is detached): POST /ui/complete with key, token (the delivery's
// X-Completion-Token, which the receiver got; no one else can make it:
// package completion), outcome=done or fail, and for fail an error text and
// permanent=yes. It is durable's Complete, as POST /v1/tasks/{key}/complete
// and /fail are, with the same checks: a token that is not one timerd sent
// for this task is 400, one whose delivery has ended 409, and neither
// changes anything. The page after says what became of the task.

// maxCompleteError caps a failure's text, as the API's /fail does.
const maxCompleteError = 1024

// completedOutcomes are the done= of the task page after a completion, by
// what the store did.
var completedOutcomes = map[durable.SettleCode]string{
	durable.SettleDone:      "completed",
	durable.SettleRetry:     "failed_retry",
	durable.SettlePostponed: "failed_retry",
	durable.SettleDead:      "failed_dead",
	durable.SettleCancelled: "cancelled",
}

// complete is POST /ui/complete.
func (d *dashboard) complete(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		d.fail(w, r, http.StatusBadRequest, "Unreadable form: "+err.Error())
		return
	}
	f := r.PostForm
	key, token, text := f.Get("key"), f.Get("token"), f.Get("error")
	var result error
	switch f.Get("outcome") {
	case "done":
	case "fail":
		if len(text) > maxCompleteError {
			d.fail(w, r, http.StatusBadRequest, fmt.Sprintf("The error text is at most %d bytes.", maxCompleteError))
			return
		}
		if text == "" {
			cr, _ := auth.FromContext(r.Context())
			text = "failed from the dashboard by " + cr.Name
		}
		result = errors.New(text)
		if f.Get("permanent") == "yes" {
			result = durable.Permanent(result)
		}
	default:
		d.fail(w, r, http.StatusBadRequest, "The form's outcome must be done or fail.")
		return
	}
	if token == "" {
		d.fail(w, r, http.StatusBadRequest, "Give the completion token: the X-Completion-Token header the callback received.")
		return
	}
	if d.VerifyCompletion != nil {
		t, err := d.VerifyCompletion(key, token)
		if err != nil {
			d.fail(w, r, http.StatusBadRequest, fmt.Sprintf("That is not a completion token timerd sent for %q (the X-Completion-Token header of its callback). Nothing changed.", key))
			return
		}
		token = t
	}
	code, err := d.Queue.Complete(r.Context(), key, token, result)
	auth.Audit(r.Context(), d.Log, "dashboard Complete", "key", key, "outcome", f.Get("outcome"), "code", completedOutcomes[code], "err", err, "remote", r.RemoteAddr)
	switch {
	case errors.Is(err, durable.ErrToken), errors.Is(err, durable.ErrKey):
		d.fail(w, r, http.StatusBadRequest, fmt.Sprintf("That is not a completion token timerd sent for %q (the X-Completion-Token header of its callback). Nothing changed.", key))
		return
	case errors.Is(err, durable.ErrStaleToken):
		d.fail(w, r, http.StatusConflict, fmt.Sprintf("That token's delivery of %q has ended: it was completed already, or its completion timeout passed and the task was retried with a new token. Nothing changed.", key))
		return
	case err != nil:
		d.failStore(w, r, "Complete", err)
		return
	}
	q := url.Values{"key": {key}, "done": {completedOutcomes[code]}}
	http.Redirect(w, r, "/ui/task?"+q.Encode(), http.StatusSeeOther)
}
