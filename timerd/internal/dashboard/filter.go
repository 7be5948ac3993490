package dashboard

import (
	"context"
	"net/url"
	"strings"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Filters of a task list: which kind of task (one-off, or run of a periodic
// schedule), a key prefix, and text in the last error. The store has no
// index for any of them, so a filtered page pages through Queue.List from
// its cursor and keeps the tasks that match, until it has a page's worth or
// has scanned maxScan tasks; then it says how many it scanned and offers
// to go on from there. A page therefore ends at a List page's end, so its
// next cursor is List's own, and holds up to pageSize-1 more than pageSize.

// Task kinds. A schedule's run is a task durable's Periodic added, its key
// "periodic:<name>@<ms>" (timerd's schedules name theirs
// "<schedule>~<version>": schedules.RunPrefix).
const (
	kindOneOff   = "oneoff"
	kindSchedule = "schedule"
	kindAll      = "all"
	runPrefix    = "periodic:" // durable/periodic.go's periodicPrefix
)

// kindName is a kind as the list's tabs name it.
type kindName struct{ Kind, Name string }

var kindNames = []kindName{{kindOneOff, "one-off tasks"}, {kindSchedule, "schedule runs"}, {kindAll, "all"}}

// maxScan bounds the tasks one filtered page reads: 20 List pages of 50,
// ~40 ms of Redis CPU on 16 shards by the cost pageSize cites.
const maxScan = 20 * pageSize

// maxFilter bounds a prefix or error filter's length (a task key's limit).
const maxFilter = durable.MaxKeyLen

// filter is one list's filters; the zero filter of kind all matches every task.
type filter struct {
	Kind   string // kindOneOff (the default), kindSchedule or kindAll
	Prefix string // the key starts with it
	Error  string // the last error contains it, ignoring case
}

// filterOf reads q's kind, prefix and error; ok is false for an unknown kind
// or a filter longer than maxFilter.
func filterOf(q url.Values) (f filter, ok bool) {
	f = filter{Kind: q.Get("kind"), Prefix: q.Get("prefix"), Error: q.Get("error")}
	if f.Kind == "" {
		f.Kind = kindOneOff
	}
	ok = (f.Kind == kindOneOff || f.Kind == kindSchedule || f.Kind == kindAll) &&
		len(f.Prefix) <= maxFilter && len(f.Error) <= maxFilter
	return f, ok
}

// everything reports whether f matches every task: no scan is needed.
func (f filter) everything() bool { return f.Kind == kindAll && f.Prefix == "" && f.Error == "" }

func (f filter) match(t durable.TaskInfo) bool {
	run := strings.HasPrefix(t.Key, runPrefix)
	return (f.Kind == kindAll || (f.Kind == kindSchedule) == run) &&
		strings.HasPrefix(t.Key, f.Prefix) &&
		(f.Error == "" || strings.Contains(strings.ToLower(t.LastError), strings.ToLower(f.Error)))
}

// query is the list's URL query for state, f and cursor.
func (f filter) query(state durable.State, cursor string) string {
	q := url.Values{"state": {stateSlug(state)}, "kind": {f.Kind}}
	if f.Prefix != "" {
		q.Set("prefix", f.Prefix)
	}
	if f.Error != "" {
		q.Set("error", f.Error)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	return "?" + q.Encode()
}

// scanned is a filtered page: its tasks, the cursor after it ("" at the
// end), and how many tasks were read for it.
type scanned struct {
	tasks   []durable.TaskInfo
	next    string
	scanned int
}

// scan reads state's tasks from cursor, a List page at a time, keeping those
// f matches, until it has pageSize of them, the list ends, or maxScan tasks
// (or as many List calls: a page may come back empty) were read.
func (d *dashboard) scan(ctx context.Context, state durable.State, cursor string, f filter) (scanned, error) {
	var s scanned
	for calls := 0; calls < maxScan/pageSize; calls++ {
		tasks, next, err := d.Queue.List(ctx, state, cursor, pageSize)
		if err != nil {
			return s, err
		}
		s.scanned += len(tasks)
		for _, t := range tasks {
			if f.match(t) {
				s.tasks = append(s.tasks, t)
			}
		}
		s.next, cursor = next, next
		if next == "" || len(s.tasks) >= pageSize || s.scanned >= maxScan {
			break
		}
	}
	return s, nil
}
