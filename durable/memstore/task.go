package memstore

import (
	"cmp"
	"slices"
	"strings"

	"github.com/go-timingwheel/timingwheel/durable"
)

// place is where a task is (see the package doc's table).
type place int

const (
	placeDue place = iota
	placeLease
	placeDead
	placeKept
)

// A task is one key's task, in one place at one time.
type task struct {
	key   string
	place place
	at    int64 // the time of its place: due time, lease end, death, retention end

	payload []byte // nil once finished and retained: Get reads size
	size    int
	added   int64 // when Add or Replace stored it
	origDue int64 // the due time Add or Replace gave it
	policy  durable.Policy

	attempts      int    // deliveries counted, the one in flight included
	postponements int    // OutcomeLater in a row (reset by Retry, Requeue, Replace)
	unconfirmed   int    // claims since one was confirmed by Extend or Settle (see reap)
	lastErr       string // kept until it succeeds
	token         string // the current delivery's; "" unless in flight
	cancelled     bool   // Cancel came while in flight: finish it as cancelled

	// The current (or last) delivery, as Claim opened it: the history
	// entry's attempt, worker and start. attempt is 0 before the first.
	delivery durable.Delivery

	finishedAs durable.State // done or cancelled, in kept
	finished   int64         // when it finished (kept)
	history    []durable.Delivery
}

// state is the task's State, as Get and List tell it.
func (t *task) state() durable.State {
	switch t.place {
	case placeDue:
		if t.attempts > 0 || t.lastErr != "" {
			return durable.StateRetrying
		}
		return durable.StateScheduled
	case placeLease:
		return durable.StateInFlight
	case placeDead:
		return durable.StateDead
	}
	return t.finishedAs
}

// placeOf is where the tasks in state are.
func placeOf(s durable.State) place {
	switch s {
	case durable.StateInFlight:
		return placeLease
	case durable.StateDead:
		return placeDead
	case durable.StateDone, durable.StateCancelled:
		return placeKept
	}
	return placeDue
}

// maxHistoryError is the longest error text a history entry keeps (the full
// last error is the task's).
const maxHistoryError = 256

// remember appends the current delivery to t's history, ended at end as
// outcome, started waited ms after its claim (at most at end: see
// durable.Outcome.Waited), then forgets all but the newest keep entries. Without a delivery
// (never claimed) or with keep <= 0 it records nothing. The result's body is
// cut to durable.MaxResultBody here too, as by every store.
func (t *task) remember(end int64, outcome, errText string, r durable.Result, keep int, waited int64) {
	if keep <= 0 || t.delivery.Attempt == 0 {
		return
	}
	if len(errText) > maxHistoryError {
		errText = cutText(errText, maxHistoryError)
	}
	if len(r.Body) > durable.MaxResultBody {
		r.Body, r.Truncated = r.Body[:durable.MaxResultBody], true
	}
	if len(r.Body) == 0 {
		r.Body = nil
	} else {
		r.Body = append([]byte(nil), r.Body...)
	}
	d := t.delivery
	if waited > 0 {
		d.Start = msTime(min(d.Start.UnixMilli()+waited, end))
	}
	d.End, d.Outcome, d.Error, d.Result = msTime(end), outcome, errText, r
	t.history = append(t.history, d)
	if over := len(t.history) - keep; over > 0 {
		t.history = slices.Delete(t.history, 0, over)
	}
}

// retire finishes t as state (done or cancelled): retained until its
// retention ends (retainMs after c), its payload dropped, or, without
// retention, forgotten. A done task has no last error (it succeeded; its
// history keeps each attempt's); a cancelled one keeps it.
func (p *partition) retire(t *task, state durable.State, c instant, retainMs int64) {
	if retainMs <= 0 {
		delete(p.tasks, t.key)
		return
	}
	t.place, t.at = placeKept, c.after(retainMs)
	t.payload, t.token, t.cancelled = nil, "", false
	t.postponements, t.unconfirmed = 0, 0
	t.finishedAs, t.finished = state, c.now
	if state == durable.StateDone {
		t.lastErr = ""
	}
}

// bury moves t to the dead set with its last error; the caller trims the
// dead set (trim) once its moves are done.
func (p *partition) bury(t *task, c instant, errText string) {
	t.place, t.at, t.lastErr = placeDead, c.now, errText
	t.token, t.cancelled, t.unconfirmed = "", false, 0
}

// trimLimit is how many tasks one burial or retirement may let a trim
// forget, as the other stores' trims: a call's work stays bounded by its
// arguments there, and memstore keeps their numbers.
const trimLimit = 16

// trimDead forgets the oldest dead tasks while more than capacity are dead,
// at most limit, and returns how many.
func (p *partition) trimDead(capacity, limit int) int {
	dead := p.sorted(placeDead)
	n := min(len(dead)-capacity, limit)
	for _, t := range dead[:max(n, 0)] {
		delete(p.tasks, t.key)
	}
	return max(n, 0)
}

// trimKept forgets retained tasks whose retention ended by c, then the oldest
// while more than capacity are retained: at most limit in all. It returns
// how many it forgot.
func (p *partition) trimKept(c instant, capacity, limit int) int {
	kept := p.sorted(placeKept)
	n := 0
	for n < len(kept) && n < limit && kept[n].at <= c.now {
		delete(p.tasks, kept[n].key)
		n++
	}
	for n < len(kept) && n < limit && len(kept)-n > capacity {
		delete(p.tasks, kept[n].key)
		n++
	}
	return n
}

// sorted lists the tasks in pl by (at, key), the order of every store's
// index.
func (p *partition) sorted(pl place) []*task {
	var out []*task
	for _, t := range p.tasks {
		if t.place == pl {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, compareTasks)
	return out
}

func compareTasks(a, b *task) int {
	if c := cmp.Compare(a.at, b.at); c != 0 {
		return c
	}
	return strings.Compare(a.key, b.key)
}

// first is the earliest time in pl, -1 if pl is empty.
func (p *partition) first(pl place) int64 {
	at := int64(-1)
	for _, t := range p.tasks {
		if t.place == pl && (at < 0 || t.at < at) {
			at = t.at
		}
	}
	return at
}
