package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
	"github.com/go-timingwheel/timingwheel/timerd/internal/search"
)

// Actions on a selection of a task list (tasks.html): the tasks ticked on
// the page (scope=selected, their keys in the form), or every task that
// the list's filter matches (scope=all). GET /ui/select is the
// confirmation, saying which tasks and how many; its form POSTs to
// /ui/select with confirm=yes, and the list shows the outcome.
//
// "All matching" is bounded like every search (package search): the
// confirmation counts the matches among the first search.MaxScan tasks of
// the state, and says so when there are more; its form carries that count,
// n, and the POST walks the state again from its start and acts on at most
// n matches, remembering the keys it acted on (a rescheduled task may be
// met again further on). So the operator confirms a number, and a task
// that starts to match after the confirmation is left alone unless others
// stopped matching meanwhile. Each task is one store call.

// maxSelectForm bounds the selection's form: pageSize keys of
// durable.MaxKeyLen bytes, each byte escaped (%XX), and the rest.
const maxSelectForm = pageSize*durable.MaxKeyLen*3 + maxForm

// selection is a parsed selection form (the GET's query, the POST's body).
type selection struct {
	state durable.State
	f     filter
	op    string
	delay time.Duration
	all   bool     // scope=all: what f matches; else keys
	keys  []string // scope=selected, without repeats, in the form's order
}

// selectionOf reads v, or says why it cannot.
func selectionOf(v url.Values) (selection, string) {
	var s selection
	state, ok := parseState(v.Get("state"))
	if !ok {
		return s, "The selection's state is not one of scheduled, retrying, in_flight, dead, done, cancelled."
	}
	s.state = state
	if s.f, ok = filterOf(v); !ok {
		return s, "Bad filter: kind is oneoff, schedule or all; prefix and error are at most 1024 bytes."
	}
	s.op = v.Get("op")
	op, ok := selectOps[s.op]
	if !ok || !slices.Contains(opsFor(state), s.op) {
		return s, fmt.Sprintf("No action %q on %s tasks: choose one of %s.", s.op, state, strings.Join(opsFor(state), ", "))
	}
	if op.needsDelay {
		delay, err := time.ParseDuration(v.Get("delay"))
		if err != nil || delay < 0 || delay > maxDelay {
			return s, "Reschedule needs a delay from now such as 90s, 15m or 2h (at most a year)."
		}
		s.delay = delay
	}
	switch v.Get("scope") {
	case "all":
		s.all = true
	case "selected":
		for _, k := range v["key"] {
			if !slices.Contains(s.keys, k) {
				s.keys = append(s.keys, k)
			}
		}
		if len(s.keys) == 0 {
			return s, "No task selected: tick the tasks to act on, or choose all matching this filter."
		}
		if len(s.keys) > pageSize {
			return s, fmt.Sprintf("At most %d tasks can be selected at once (a page).", pageSize)
		}
	default:
		return s, "The selection's scope must be selected or all."
	}
	return s, ""
}

// fields are s as the confirmation form's hidden fields.
func (s selection) fields() []field {
	var fs []field
	for name, vs := range s.f.values(s.state) {
		fs = append(fs, field{name, vs[0]})
	}
	slices.SortFunc(fs, func(a, b field) int { return strings.Compare(a.Name, b.Name) })
	fs = append(fs, field{"op", s.op})
	if selectOps[s.op].needsDelay {
		fs = append(fs, field{"delay", s.delay.String()})
	}
	if s.all {
		return append(fs, field{"scope", "all"})
	}
	fs = append(fs, field{"scope", "selected"})
	for _, k := range s.keys {
		fs = append(fs, field{"key", k})
	}
	return fs
}

// back is the list the selection was made on, first page.
func (s selection) back() string { return "/ui/tasks" + s.f.query(s.state, "") }

// describe says what f matches, for the confirmation's question.
func (f filter) describe() string {
	var parts []string
	switch f.Kind {
	case kindOneOff:
		parts = append(parts, "one-off")
	case kindSchedule:
		parts = append(parts, "schedule runs")
	}
	if f.Prefix != "" {
		parts = append(parts, fmt.Sprintf("key starting with %q", f.Prefix))
	}
	if f.Error != "" {
		parts = append(parts, fmt.Sprintf("last error containing %q", f.Error))
	}
	if len(parts) == 0 {
		return "every task"
	}
	return strings.Join(parts, ", ")
}

// selectForm is GET /ui/select: the confirmation, with the count.
func (d *dashboard) selectForm(w http.ResponseWriter, r *http.Request) {
	s, why := selectionOf(r.URL.Query())
	if why != "" {
		d.fail(w, r, http.StatusBadRequest, why)
		return
	}
	op := selectOps[s.op]
	explain := op.explain
	if op.needsDelay {
		explain = strings.Replace(explain, "that long", s.delay.String(), 1)
	}
	c := confirmData{Action: "/ui/select", Fields: s.fields(), Back: s.back()}
	if !s.all {
		c.Question = fmt.Sprintf("%s %s?", op.verb, plural(len(s.keys), "selected "+string(s.state)+" task"))
		c.Explain, c.Items = explain, s.keys
		c.Button = fmt.Sprintf("%s %s", op.verb, plural(len(s.keys), "task"))
		d.confirm(w, r, op.verb+" the selected tasks", c)
		return
	}
	n := 0
	scanned, complete, err := search.Each(r.Context(), d.Queue, s.state, s.f.Filter, func(durable.TaskInfo) (bool, error) {
		n++
		return true, nil
	})
	if err != nil {
		d.failStore(w, r, "List", err)
		return
	}
	if n == 0 {
		c = confirmData{Question: fmt.Sprintf("No %s task matches this filter (%s).", s.state, s.f.describe()),
			Explain: "Nothing to " + strings.ToLower(op.verb) + ".", Back: s.back(), Nothing: true}
		d.confirm(w, r, op.verb+" all matching", c)
		return
	}
	c.Question = fmt.Sprintf("%s all %s matching this filter (%s)?", op.verb, plural(n, string(s.state)+" task"), s.f.describe())
	c.Explain = explain + fmt.Sprintf(" At most %d: tasks that start to match after this page was made are left alone.", n)
	if !complete {
		c.Explain += fmt.Sprintf(" The count is of the first %d %s tasks read (a request reads at most %d); there are more: act on these, then open the list again for the rest.",
			scanned, s.state, search.MaxScan)
	}
	c.Fields = append(c.Fields, field{"n", strconv.Itoa(n)})
	c.Button = fmt.Sprintf("%s %s", op.verb, plural(n, "task"))
	d.confirm(w, r, op.verb+" all matching", c)
}

// selectDo is POST /ui/select (confirm=yes, and n=<count confirmed> for
// scope=all): acts, then back to the list with the outcome.
func (d *dashboard) selectDo(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSelectForm)
	if err := r.ParseForm(); err != nil {
		d.fail(w, r, http.StatusBadRequest, "Unreadable form: "+err.Error())
		return
	}
	if !d.confirmed(w, r) {
		return
	}
	s, why := selectionOf(r.PostForm)
	if why != "" {
		d.fail(w, r, http.StatusBadRequest, why)
		return
	}
	do := selectOps[s.op].do(d, s.delay)
	var tried, done int
	act := func(key string) error {
		tried++
		ok, err := do(r.Context(), key)
		if ok {
			done++
		}
		return err
	}
	var err error
	if s.all {
		n, nerr := strconv.Atoi(r.PostForm.Get("n"))
		if nerr != nil || n < 1 {
			d.fail(w, r, http.StatusBadRequest, "The form's n must be the count its confirmation page showed.")
			return
		}
		acted := map[string]bool{}
		_, _, err = search.Each(r.Context(), d.Queue, s.state, s.f.Filter, func(t durable.TaskInfo) (bool, error) {
			if acted[t.Key] {
				return true, nil
			}
			acted[t.Key] = true
			err := act(t.Key)
			return tried < n, err
		})
	} else {
		for _, k := range s.keys {
			if err = act(k); err != nil {
				break
			}
		}
	}
	scope := "selected"
	if s.all {
		scope = "all matching"
	}
	auth.Audit(r.Context(), d.Log, "dashboard "+selectOps[s.op].verb+" a selection", "scope", scope, "state", string(s.state),
		"kind", s.f.Kind, "prefix", s.f.Prefix, "error", s.f.Error, "tried", tried, "done", done, "err", err, "remote", r.RemoteAddr)
	if err != nil {
		d.failStore(w, r, fmt.Sprintf("%s (after %s)", selectOps[s.op].verb, plural(done, "task")), err)
		return
	}
	q := s.f.values(s.state)
	q.Set("done", "selection")
	q.Set("op", s.op)
	q.Set("n", strconv.Itoa(done))
	q.Set("of", strconv.Itoa(tried))
	http.Redirect(w, r, "/ui/tasks?"+q.Encode(), http.StatusSeeOther)
}

// selectionOutcome is the outcome of done=selection&op=&n=&of=, or nil.
func selectionOutcome(q url.Values) *outcome {
	op, ok := selectOps[q.Get("op")]
	n, err1 := strconv.Atoi(q.Get("n"))
	of, err2 := strconv.Atoi(q.Get("of"))
	if !ok || err1 != nil || err2 != nil || n < 0 || of < n {
		return nil
	}
	text := fmt.Sprintf("%s %d of %s.", op.past, n, plural(of, "task"))
	if n < of {
		text += " The others had left the state it applies to, or were gone."
	}
	return &outcome{OK: true, Text: text}
}
