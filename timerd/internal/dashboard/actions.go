package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// The two actions are POST forms with the fields key (the task's) and from
// ("dead" or "task": the page to go back to, never a URL, so that no form
// can send the browser elsewhere). Each answers 303 See Other to that page
// with the outcome in its query (done=<outcome>&key=<key>), which the page
// shows above its content: reloading it repeats nothing.

// requeue moves a dead task back to due now (Queue.Requeue).
func (d *dashboard) requeue(w http.ResponseWriter, r *http.Request) {
	d.act(w, r, "Requeue", d.Queue.Requeue, "requeued", "not_dead")
}

// cancel cancels a task (Queue.Cancel): at once if it is scheduled, retrying
// or dead; at the end of its delivery if it is in flight. Its form is on
// the confirmation page (cancelForm) and must carry confirm=yes.
func (d *dashboard) cancel(w http.ResponseWriter, r *http.Request) {
	if !d.confirmed(w, r) {
		return
	}
	d.act(w, r, "Cancel", d.Queue.Cancel, "cancelled", "not_found")
}

func (d *dashboard) act(w http.ResponseWriter, r *http.Request, op string,
	do func(context.Context, string) (bool, error), yes, no string) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		d.fail(w, r, http.StatusBadRequest, "Unreadable form: "+err.Error())
		return
	}
	key, from := r.PostForm.Get("key"), r.PostForm.Get("from")
	if from != "dead" && from != "task" {
		d.fail(w, r, http.StatusBadRequest, "The form's from field must be dead or task.")
		return
	}
	ok, err := do(r.Context(), key)
	switch {
	case errors.Is(err, durable.ErrKey):
		d.fail(w, r, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		d.failStore(w, r, op, err)
		return
	}
	auth.Audit(r.Context(), d.Log, "dashboard "+op, "key", key, "done", ok, "remote", r.RemoteAddr)
	done := no
	if ok {
		done = yes
	}
	q := url.Values{"key": {key}, "done": {done}}
	http.Redirect(w, r, "/ui/"+from+"?"+q.Encode(), http.StatusSeeOther)
}

// outcome is what a page shows of the action that led to it.
type outcome struct {
	OK   bool
	Key  string // the task's: user data, escaped by the template
	Text string // includes the key
}

// outcomeTexts are the outcomes an action may report; a done parameter
// not among them is ignored, so a link cannot make a page say anything but
// these (with its key).
var outcomeTexts = map[string]struct {
	ok   bool
	text string
}{
	"requeued":  {true, "Requeued %q: it is due now."},
	"not_dead":  {false, "%q was not in the dead set: nothing requeued."},
	"cancelled": {true, "Cancelled %q."},
	"not_found": {false, "There was no task %q: nothing cancelled."},
	// complete.go's
	"completed":    {true, "Completed %q: done."},
	"failed_retry": {true, "Failed %q: it is retried after its backoff."},
	"failed_dead":  {true, "Failed %q: it is dead."},
}

// countTexts are the outcomes of actions on the whole queue or dead set;
// %s is the n of the query as a count of dead tasks.
var countTexts = map[string]struct {
	ok   bool
	text string
}{
	"paused":         {true, "Paused: no task is delivered until Resume."},
	"resumed":        {true, "Resumed: deliveries go on."},
	"bulk_requeued":  {true, "Requeued %s: due now."},
	"bulk_cancelled": {true, "Deleted %s (cancelled)."},
}

// outcomeOf is the outcome named by r's query, or nil.
func outcomeOf(r *http.Request) *outcome {
	q := r.URL.Query()
	if q.Get("done") == "selection" {
		return selectionOutcome(q)
	}
	if t, ok := countTexts[q.Get("done")]; ok {
		text := t.text
		if strings.Contains(text, "%s") {
			n, err := strconv.Atoi(q.Get("n"))
			if err != nil || n < 0 {
				return nil
			}
			text = fmt.Sprintf(text, plural(n, "dead task"))
		}
		return &outcome{OK: t.ok, Text: text}
	}
	t, ok := outcomeTexts[q.Get("done")]
	if !ok {
		return nil
	}
	return &outcome{OK: t.ok, Key: q.Get("key"), Text: fmt.Sprintf(t.text, q.Get("key"))}
}

// urlQuery escapes s for a URL's query.
func urlQuery(s string) string { return url.QueryEscape(s) }
