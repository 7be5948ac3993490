package dashboard

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// origin is one callback origin as the workers of this process hold it
// (Config.Flow's States): what runs, what waits, and why it waits.
type origin struct {
	Origin  string
	Breaker string // closed, open, half-open
	Running string // "running/limit", limit "∞" when unbounded
	Waiting int
	// HeldUntil is when the origin may start a waiting task again (the
	// breaker's probe or the end of a Retry-After), zero if not held by
	// time; Why says what holds it ("" when nothing does).
	HeldUntil time.Time
	Why       string
}

// origins reads the Flow's state, sorted by origin; nil without a Flow.
// Flow state is per process (per Run): another process's workers hold
// their own.
func (d *dashboard) origins() []origin {
	if d.Flow == nil {
		return nil
	}
	now := d.now()
	states := d.Flow.States()
	slices.SortFunc(states, func(a, b durable.KeyState) int { return cmp.Compare(a.Key, b.Key) })
	out := make([]origin, 0, len(states))
	for _, s := range states {
		l := d.Flow.Limit(s.Key)
		limit := "∞"
		if l.Concurrency > 0 {
			limit = strconv.Itoa(l.Concurrency)
		}
		o := origin{Origin: s.Key, Breaker: s.Breaker, Running: fmt.Sprintf("%d/%s", s.Running, limit), Waiting: s.Waiting}
		switch {
		case s.Breaker == "open":
			o.HeldUntil, o.Why = s.OpenUntil, "breaker open"
		case s.Breaker == "half-open":
			o.Why = "breaker half-open: a probe is running"
		case now.Before(s.PausedUntil):
			o.HeldUntil, o.Why = s.PausedUntil, "Retry-After"
		case l.Concurrency > 0 && s.Running >= l.Concurrency:
			o.Why = "limit reached"
		}
		if !s.PausedUntil.IsZero() && s.PausedUntil.After(o.HeldUntil) {
			o.HeldUntil = s.PausedUntil
		}
		out = append(out, o)
	}
	return out
}

// heldLine says why a task in flight of origin key may be waiting rather
// than running ("" if its origin is not held): "waiting: origin … breaker
// open until …". The Flow does not say which of an origin's tasks wait, so
// the line is shown on every in-flight task of an origin that has tasks
// waiting and a reason to hold them.
func (d *dashboard) heldLine(info durable.TaskInfo, req request) string {
	if d.Flow == nil || info.State != durable.StateInFlight || !req.HTTP {
		return ""
	}
	key, err := durable.Origin(req.URL)
	if err != nil {
		return ""
	}
	for _, o := range d.origins() {
		if o.Origin != key || o.Waiting == 0 || o.Why == "" {
			continue
		}
		line := "waiting: origin " + o.Origin + " " + o.Why
		if !o.HeldUntil.IsZero() {
			line += " until " + o.HeldUntil.UTC().Format("2006-01-02 15:04:05Z07:00")
		}
		return line + fmt.Sprintf(" (%d of its tasks wait in this process)", o.Waiting)
	}
	return ""
}
