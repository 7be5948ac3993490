// Package search finds tasks by what no store indexes: their kind (one-off,
// or run of a periodic schedule), a key prefix, and text in the last error.
// The API (GET /v1/tasks?prefix=&error=&kind=), the command line and the
// dashboard's filtered lists and selections all search with Scan, so a
// filter means one thing everywhere.
//
// Scan pages through one state with durable's Queue.List, server-side, and
// keeps the tasks the filter matches. Its work per call is bounded whatever
// the store holds: it stops at Want matches, at MaxScan tasks read, or at
// MaxCalls List calls, and returns List's cursor after the last task it read
// as the continuation. Calling again with that cursor goes on where it
// stopped, so any client walks the whole state in bounded steps; a task
// that stays in its state with the same time is met exactly once (List's
// cursor is a position).
package search

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-timingwheel/timingwheel/durable"
)

// MaxScan bounds the tasks one Scan or Each reads. Measured on Redis, the
// costliest store (16 shards, 20,000 scheduled tasks of 100 bytes, least of
// 3 runs): reading 10,000 took 360 ms of Redis CPU in pages of 1,000, 420 in
// pages of 100 and 520 in pages of 50 (a dashboard page), spread over that
// many scripts of a few ms each, which other clients' commands interleave.
// An error search over 100,000 tasks is then 10 requests (it was 100 at
// 1,000), each under a second.
const MaxScan = 10_000

// MaxCalls bounds the List calls of one Scan, which may read few tasks
// each (a nearly full page asks for what it lacks; List may return an empty
// page before the end).
const MaxCalls = 200

// MaxFilter bounds a prefix or error filter's length (a task key's limit).
const MaxFilter = durable.MaxKeyLen

// Kinds of task.
const (
	KindOneOff   = "oneoff"   // added by a client
	KindSchedule = "schedule" // a run of a periodic schedule
	KindAll      = "all"
)

// RunPrefix starts the key of every schedule run: durable's Periodic names
// them "periodic:<name>@<ms>" (durable/periodic.go's periodicPrefix; if it
// changes, change this).
const RunPrefix = "periodic:"

// ErrFilter reports a filter Check refuses.
var ErrFilter = errors.New("search: bad filter")

// Filter says which tasks match. Its zero value matches one-off tasks
// (Kind "" is KindOneOff, what a list shows by default).
type Filter struct {
	Kind   string // KindOneOff (also ""), KindSchedule or KindAll
	Prefix string // the key starts with it (bytewise)
	Error  string // the last error contains it, ignoring case
}

// Check returns an error wrapping ErrFilter, naming the field ("kind",
// "prefix", "error"), for an unknown kind or a filter longer than
// MaxFilter.
func (f Filter) Check() error {
	switch {
	case f.Kind != "" && f.Kind != KindOneOff && f.Kind != KindSchedule && f.Kind != KindAll:
		return fmt.Errorf("%w: kind: %q is not oneoff, schedule or all", ErrFilter, f.Kind)
	case len(f.Prefix) > MaxFilter:
		return fmt.Errorf("%w: prefix: longer than %d bytes", ErrFilter, MaxFilter)
	case len(f.Error) > MaxFilter:
		return fmt.Errorf("%w: error: longer than %d bytes", ErrFilter, MaxFilter)
	}
	return nil
}

// Everything reports whether f matches every task, so that a plain List
// page does: no scan is needed.
func (f Filter) Everything() bool { return f.Kind == KindAll && f.Prefix == "" && f.Error == "" }

// Match reports whether f matches t.
func (f Filter) Match(t durable.TaskInfo) bool {
	run := strings.HasPrefix(t.Key, RunPrefix)
	kind := f.Kind
	if kind == "" {
		kind = KindOneOff
	}
	return (kind == KindAll || (kind == KindSchedule) == run) &&
		strings.HasPrefix(t.Key, f.Prefix) &&
		(f.Error == "" || strings.Contains(strings.ToLower(t.LastError), strings.ToLower(f.Error)))
}

// Result is what one Scan found.
type Result struct {
	Tasks []durable.TaskInfo // the matches, in List's order
	// Next continues the scan ("" when it reached the state's end): List's
	// cursor after the last task read.
	Next string
	// Scanned counts the tasks read.
	Scanned int
}

// Stopped reports whether the scan ended at a bound (MaxScan, MaxCalls)
// rather than with a full page or at the end.
func (r Result) Stopped(want int) bool { return r.Next != "" && len(r.Tasks) < want }

// Scan reads state's tasks from cursor ("" for the first) and keeps those f
// matches, until it has want of them (never more), the state ends, or it
// has read MaxScan tasks or called List MaxCalls times. want is at least
// 1; it is lowered to durable.MaxListLimit. Errors are List's (ErrCursor
// for a cursor List did not make for state, a store's error).
func Scan(ctx context.Context, q *durable.Queue, state durable.State, cursor string, f Filter, want int) (Result, error) {
	return scan(ctx, q, state, cursor, f, want, bounds{MaxScan, MaxCalls})
}

// bounds are a scan's: tasks read, List calls.
type bounds struct{ tasks, calls int }

func scan(ctx context.Context, q *durable.Queue, state durable.State, cursor string, f Filter, want int, b bounds) (Result, error) {
	want = min(max(want, 1), durable.MaxListLimit)
	var r Result
	for calls := 0; calls < b.calls; calls++ {
		// Ask for at most what the page lacks, so that it never holds more
		// than want: the cursor is List's, after a whole List page.
		tasks, next, err := q.List(ctx, state, cursor, min(want-len(r.Tasks), b.tasks-r.Scanned))
		if err != nil {
			return r, err
		}
		r.Scanned += len(tasks)
		for _, t := range tasks {
			if f.Match(t) {
				r.Tasks = append(r.Tasks, t)
			}
		}
		r.Next, cursor = next, next
		if next == "" || len(r.Tasks) >= want || r.Scanned >= b.tasks {
			break
		}
	}
	return r, nil
}

// Each calls visit on every task of state that f matches, from the first,
// in List's order, until visit returns false, the state ends, or MaxScan
// tasks were read. It returns how many were read and whether it reached
// the end. visit may change the task (cancel, requeue, reschedule it): the
// walk goes on from List's position, so a task moved out of the state or
// before the position is not met again, and one moved later may be (the
// caller remembers what it did).
func Each(ctx context.Context, q *durable.Queue, state durable.State, f Filter, visit func(durable.TaskInfo) (bool, error)) (scanned int, complete bool, err error) {
	cursor := ""
	for calls := 0; calls < MaxCalls; calls++ {
		tasks, next, err := q.List(ctx, state, cursor, min(eachPage, MaxScan-scanned))
		if err != nil {
			return scanned, false, err
		}
		scanned += len(tasks)
		for _, t := range tasks {
			if !f.Match(t) {
				continue
			}
			more, err := visit(t)
			if err != nil || !more {
				return scanned, false, err
			}
		}
		if next == "" {
			return scanned, true, nil
		}
		if scanned >= MaxScan {
			return scanned, false, nil
		}
		cursor = next
	}
	return scanned, false, nil
}

// eachPage is Each's List page: MaxScan in MaxCalls pages.
const eachPage = MaxScan / MaxCalls
