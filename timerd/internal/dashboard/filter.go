package dashboard

import (
	"net/url"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/search"
)

// Filters of a task list: which kind of task (one-off, or run of a periodic
// schedule), a key prefix, and text in the last error. No store indexes
// them, so a filtered page is a search.Scan from its cursor: at most
// pageSize matches, at most search.MaxScan tasks read; a page that stopped
// at that bound says how many it read and offers to scan on from there
// (the Scan's continuation, a List cursor).

// Task kinds, as in URLs (search's).
const (
	kindOneOff   = search.KindOneOff
	kindSchedule = search.KindSchedule
	kindAll      = search.KindAll
)

// kindName is a kind as the list's tabs name it.
type kindName struct{ Kind, Name string }

var kindNames = []kindName{{kindOneOff, "one-off tasks"}, {kindSchedule, "schedule runs"}, {kindAll, "all"}}

// filter is one list's filters; the zero filter of kind all matches every task.
type filter struct{ search.Filter }

// filterOf reads q's kind, prefix and error; ok is false for a filter
// search refuses (an unknown kind, one longer than search.MaxFilter).
func filterOf(q url.Values) (f filter, ok bool) {
	f = filter{search.Filter{Kind: q.Get("kind"), Prefix: q.Get("prefix"), Error: q.Get("error")}}
	if f.Kind == "" {
		f.Kind = kindOneOff
	}
	return f, f.Check() == nil
}

// query is the list's URL query for state, f and cursor.
func (f filter) query(state durable.State, cursor string) string {
	q := f.values(state)
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	return "?" + q.Encode()
}

// values are state and f as a URL query's (or a form's) fields.
func (f filter) values(state durable.State) url.Values {
	q := url.Values{"state": {stateSlug(state)}, "kind": {f.Kind}}
	if f.Prefix != "" {
		q.Set("prefix", f.Prefix)
	}
	if f.Error != "" {
		q.Set("error", f.Error)
	}
	return q
}
