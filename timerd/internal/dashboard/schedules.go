package dashboard

import (
	"errors"
	"net/http"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
	"github.com/go-timingwheel/timingwheel/timerd/internal/search"
)

// The schedule pages: timerd's periodic schedules (schedules.Store's
// definitions) with their next run, computed from the definition by the
// rule the schedules' loops run it with (schedules.Definition.Next), and
// one schedule's recent runs, read by their keys (schedules.RunKey): one Get
// per run shown, whatever the number of other tasks.

// recentRuns is how many of a schedule's latest times its page looks up.
const recentRuns = 10

// scheduleRow is one definition on the list.
type scheduleRow struct {
	Def  schedules.Definition
	Next time.Time // zero: no more times
	// Runs links to the list of its done runs, any version.
	Runs string
}

type schedulesData struct {
	Configured bool // Config.Schedules is set
	Rows       []scheduleRow
}

// schedules lists every definition, by name, with its next run.
func (d *dashboard) schedules(w http.ResponseWriter, r *http.Request) {
	data := schedulesData{Configured: d.Schedules != nil}
	if d.Schedules != nil {
		defs, err := d.Schedules.List(r.Context())
		if err != nil {
			d.failStore(w, r, "schedules List", err)
			return
		}
		now := d.now()
		for _, def := range defs {
			next, _ := def.Next(now) // List returns only definitions that Validate
			data.Rows = append(data.Rows, scheduleRow{Def: def, Next: next, Runs: runsLink(def.Name, durable.StateDone)})
		}
	}
	d.render(w, r, http.StatusOK, "schedules", "Schedules", data)
}

// runsLink is the task list of the runs of every version of the schedule
// name in state.
func runsLink(name string, state durable.State) string {
	return "/ui/tasks" + filter{search.Filter{Kind: kindSchedule, Prefix: schedules.AnyRunPrefix(name)}}.query(state, "")
}

// schedRun is one time of a schedule and its task, if the store has it.
type schedRun struct {
	At    time.Time
	Key   string
	Found bool
	Info  durable.TaskInfo
}

type scheduleData struct {
	Def  schedules.Definition
	Next schedRun   // the coming time: its task waits in the store ahead of time
	Runs []schedRun // the latest times, latest first
	// DoneRuns and DeadRuns list its runs of any version in those states.
	DoneRuns, DeadRuns string
	Recent             int
}

// schedule shows one definition, its next run and its recent runs, each
// time looked up by its key; a time with no task was never added (no
// process ran the schedule then, or the definition changed since) or has
// finished and is no longer retained.
func (d *dashboard) schedule(w http.ResponseWriter, r *http.Request) {
	if d.Schedules == nil {
		d.fail(w, r, http.StatusNotFound, "This dashboard has no schedules to show.")
		return
	}
	name := r.URL.Query().Get("name")
	def, err := d.Schedules.Get(r.Context(), name)
	switch {
	case errors.Is(err, schedules.ErrNotFound):
		d.fail(w, r, http.StatusNotFound, "No schedule "+name+".")
		return
	case err != nil:
		d.failStore(w, r, "schedules Get", err)
		return
	}
	now := d.now()
	next, _ := def.Next(now)
	last, _ := def.Last(now, recentRuns)
	data := scheduleData{Def: def, DoneRuns: runsLink(name, durable.StateDone),
		DeadRuns: runsLink(name, durable.StateDead), Recent: recentRuns}
	lookup := func(at time.Time) (schedRun, error) {
		rn := schedRun{At: at, Key: schedules.RunKey(def, at)}
		info, err := d.Queue.Get(r.Context(), rn.Key)
		if errors.Is(err, durable.ErrNotFound) {
			return rn, nil
		}
		rn.Info, rn.Found = info, err == nil
		return rn, err
	}
	if !next.IsZero() {
		if data.Next, err = lookup(next); err != nil {
			d.failStore(w, r, "Get", err)
			return
		}
	}
	for _, at := range last {
		rn, err := lookup(at)
		if err != nil {
			d.failStore(w, r, "Get", err)
			return
		}
		data.Runs = append(data.Runs, rn)
	}
	d.render(w, r, http.StatusOK, "schedule", "Schedule "+name, data)
}
