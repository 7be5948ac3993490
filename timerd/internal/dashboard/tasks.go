package dashboard

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/search"
)

// pageSize is the tasks of one list page: a page of 50 costs about 2 ms of
// Redis CPU on 16 shards, the costliest store (rediswheel's TestInspectionCost measures 100 at
// ~4 ms), and fits a screen or two.
const pageSize = 50

type listData struct {
	State   durable.State
	States  []durable.State
	Tasks   []durable.TaskInfo
	Cursor  string // of this page; "" for the first
	Next    string // of the next page; "" at the end
	Outcome *outcome
	// Filter is the tasks list's (filter.go); the dead set's matches all.
	Filter filter
	// Scanned counts the tasks read for a filtered page; Stopped says the
	// scan ended at search.MaxScan, not at a full page or the list's end.
	Scanned int
	Stopped bool
	MaxScan int
	// Ops are the actions on a selection the list offers (select.go), none
	// on the dead set's page (it has its own); Delay: one needs a delay.
	// SelectFields are the list's state and filter as the selection form's.
	Ops          []opChoice
	Delay        bool
	SelectFields []field
}

// Link is the list's URL for state (the tasks page's, with this page's
// filters) from cursor.
func (l listData) Link(state durable.State, cursor string) string {
	return "/ui/tasks" + l.Filter.query(state, cursor)
}

// KindLink is this list's URL, first page, showing kind.
func (l listData) KindLink(kind string) string {
	f := l.Filter
	f.Kind = kind
	return "/ui/tasks" + f.query(l.State, "")
}

// tasks lists one state's tasks (Queue.List), earliest first, a page at a
// time. The state defaults to scheduled; an unknown state or a bad cursor
// is a 400.
func (d *dashboard) tasks(w http.ResponseWriter, r *http.Request) {
	slug := r.URL.Query().Get("state")
	if slug == "" {
		slug = stateSlug(durable.StateScheduled)
	}
	state, ok := parseState(slug)
	if !ok {
		d.fail(w, r, http.StatusBadRequest, "No state "+slug+": the states are scheduled, retrying, in_flight, dead, done and cancelled.")
		return
	}
	f, ok := filterOf(r.URL.Query())
	if !ok {
		d.fail(w, r, http.StatusBadRequest, "Bad filter: kind is oneoff, schedule or all; prefix and error are at most 1024 bytes.")
		return
	}
	d.list(w, r, "tasks", state, f)
}

// dead lists the dead set, a page at a time, with a Requeue and a Cancel
// button per task, and the outcome of the last one pressed.
func (d *dashboard) dead(w http.ResponseWriter, r *http.Request) {
	d.list(w, r, "dead", durable.StateDead, filter{search.Filter{Kind: kindAll}})
}

func (d *dashboard) list(w http.ResponseWriter, r *http.Request, name string, state durable.State, f filter) {
	cursor := r.URL.Query().Get("cursor")
	var s search.Result
	var err error
	if f.Everything() {
		s.Tasks, s.Next, err = d.Queue.List(r.Context(), state, cursor, pageSize)
	} else {
		s, err = search.Scan(r.Context(), d.Queue, state, cursor, f.Filter, pageSize)
	}
	switch {
	case errors.Is(err, durable.ErrCursor):
		d.fail(w, r, http.StatusBadRequest, "This page's cursor is not one the dashboard made: start from the first page.")
		return
	case err != nil:
		d.failStore(w, r, "List", err)
		return
	}
	title := "Tasks " + stateSlug(state)
	var ops []opChoice
	var delay bool
	if name == "dead" {
		title = "Dead set"
	} else {
		ops, delay = choices(state)
	}
	var sel []field
	for k, v := range f.values(state) {
		sel = append(sel, field{k, v[0]})
	}
	slices.SortFunc(sel, func(a, b field) int { return strings.Compare(a.Name, b.Name) })
	d.render(w, r, http.StatusOK, name, title, listData{
		State: state, States: states, Tasks: s.Tasks, Cursor: cursor, Next: s.Next, Outcome: outcomeOf(r),
		Filter: f, Scanned: s.Scanned, Stopped: s.Stopped(pageSize), MaxScan: search.MaxScan,
		Ops: ops, Delay: delay, SelectFields: sel,
	})
}
