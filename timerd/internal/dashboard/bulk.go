package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// Bulk actions on the dead set: requeue all, delete (cancel) all. The
// confirmation page says how many tasks the dead set holds (Stats, one
// atomic read per shard) and its form carries that number, n: the POST acts
// on at most n tasks, oldest death first, so a task that dies after the
// operator read the page is left alone (unless others left the set
// meanwhile and it is among the first n). The work is one List page of keys
// per pageSize tasks and one call per task; the dead set holds at most
// Options.MaxDead per shard.

// bulkOp is one bulk action.
type bulkOp struct {
	verb, button, explain string
	outcome               string // the done= of the page after
	do                    func(*durable.Queue) func(context.Context, string) (bool, error)
}

var bulkOps = map[string]bulkOp{
	"requeue-all": {"Requeue", "Requeue them all",
		"Each becomes due now, its attempts reset (its last error kept until it succeeds).",
		"bulk_requeued", func(q *durable.Queue) func(context.Context, string) (bool, error) { return q.Requeue }},
	"cancel-all": {"Delete", "Delete them all",
		"Each is cancelled: it leaves the dead set for good (kept as cancelled for the retention time, then forgotten). This cannot be undone.",
		"bulk_cancelled", func(q *durable.Queue) func(context.Context, string) (bool, error) { return q.Cancel }},
}

// plural is n things: "1 dead task", "3 dead tasks".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// bulkForm is GET /ui/dead/{op}: the confirmation, with the count.
func (d *dashboard) bulkForm(w http.ResponseWriter, r *http.Request) {
	op, ok := bulkOps[r.PathValue("op")]
	if !ok {
		d.notFound(w, r)
		return
	}
	st, err := d.Queue.Stats(r.Context())
	if err != nil {
		d.failStore(w, r, "Stats", err)
		return
	}
	n := int(st.Total.Dead)
	c := confirmData{
		Question: fmt.Sprintf("%s all %s?", op.verb, plural(n, "dead task")),
		Explain:  op.explain + fmt.Sprintf(" At most %d: tasks that die after this page was made are left alone.", n),
		Action:   r.URL.Path, Fields: []field{{"n", strconv.Itoa(n)}}, Button: op.button, Back: "/ui/dead",
	}
	if n == 0 {
		c = confirmData{Question: "The dead set is empty.", Explain: "Nothing to " + op.verb + ".", Back: "/ui/dead", Nothing: true}
	}
	d.confirm(w, r, op.verb+" the dead set", c)
}

// bulk is POST /ui/dead/{op} (confirm=yes, n=<count confirmed>).
func (d *dashboard) bulk(w http.ResponseWriter, r *http.Request) {
	op, ok := bulkOps[r.PathValue("op")]
	if !ok {
		d.notFound(w, r)
		return
	}
	if !d.confirmed(w, r) {
		return
	}
	n, err := strconv.Atoi(r.PostForm.Get("n"))
	if err != nil || n < 0 {
		d.fail(w, r, http.StatusBadRequest, "The form's n must be the count its confirmation page showed.")
		return
	}
	done, err := d.eachDead(r.Context(), n, op.do(d.Queue))
	auth.Audit(r.Context(), d.Log, "dashboard "+op.verb+" the dead set", "confirmed", n, "done", done, "err", err, "remote", r.RemoteAddr)
	if err != nil {
		d.failStore(w, r, fmt.Sprintf("%s (after %s)", op.verb, plural(done, "task")), err)
		return
	}
	q := url.Values{"done": {op.outcome}, "n": {strconv.Itoa(done)}}
	http.Redirect(w, r, "/ui/dead?"+q.Encode(), http.StatusSeeOther)
}

// eachDead calls do on the first n tasks of the dead set, oldest death
// first, and returns how many it reported true for. The cursor is a
// position, so tasks that do moves out of the set do not shift the pages.
func (d *dashboard) eachDead(ctx context.Context, n int, do func(context.Context, string) (bool, error)) (done int, err error) {
	cursor := ""
	for seen := 0; seen < n; {
		tasks, next, err := d.Queue.List(ctx, durable.StateDead, cursor, min(pageSize, n-seen))
		if err != nil {
			return done, err
		}
		for _, t := range tasks {
			ok, err := do(ctx, t.Key)
			if err != nil {
				return done, err
			}
			if ok {
				done++
			}
			seen++
		}
		if next == "" {
			break
		}
		cursor = next
	}
	return done, nil
}
