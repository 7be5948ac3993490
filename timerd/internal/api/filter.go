package api

import (
	"github.com/go-timingwheel/timingwheel/timerd/internal/search"
)

// Search: GET /v1/tasks takes the filters of package search, the
// dashboard's: kind (oneoff, schedule or all), prefix (of the key) and error
// (text in the last error, ignoring case). With any of them the listing is
// a search.Scan: a page holds at most limit matches and reads at most
// search.MaxScan tasks, and next_cursor goes on where it stopped, so a
// client walks the whole state in bounded requests; "scanned" says how many
// tasks the page read. Without them it is List, every kind, as before.

// filterOf reads the filters of q and reports whether there are any; an
// unknown kind or a filter over search.MaxFilter bytes is 400 naming it.
func filterOf(q map[string]string) (search.Filter, bool, error) {
	kind, hasKind := q["kind"]
	prefix, hasPrefix := q["prefix"]
	text, hasError := q["error"]
	if !hasKind && !hasPrefix && !hasError {
		return search.Filter{}, false, nil
	}
	if !hasKind {
		kind = search.KindAll // a listing shows every kind unless asked
	}
	switch {
	case kind != search.KindOneOff && kind != search.KindSchedule && kind != search.KindAll:
		return search.Filter{}, false, invalid("kind", "kind must be oneoff, schedule or all")
	case len(prefix) > search.MaxFilter:
		return search.Filter{}, false, invalid("prefix", "prefix must be at most %d bytes", search.MaxFilter)
	case len(text) > search.MaxFilter:
		return search.Filter{}, false, invalid("error", "error must be at most %d bytes", search.MaxFilter)
	}
	return search.Filter{Kind: kind, Prefix: prefix, Error: text}, true, nil
}
