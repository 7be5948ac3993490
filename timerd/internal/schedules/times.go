package schedules

import (
	"strconv"
	"time"
)

// What a reader of the schedules needs beside the definitions (the
// dashboard's schedule pages): when a definition fires next, when it fired
// last, and under which task keys its occurrences are.

// Next returns the first time of d strictly after t, by the rule Run runs it
// with (durable.Every's multiples, or the cron spec in UTC unless it names
// a zone); the zero time if d has no more times. It returns Validate's error
// for a bad d.
func (d Definition) Next(t time.Time) (time.Time, error) {
	s, err := d.schedule()
	if err != nil {
		return time.Time{}, err
	}
	return s.Next(t.UTC()), nil
}

// maxWalk bounds the Next calls Last makes for a cron spec (which cannot be
// walked backwards): 100,000 steps cover a minutely spec's last ~69 days and
// take well under a second.
const maxWalk = 100_000

// Last returns up to n of d's latest times at or before now, latest first.
// For Every they are exact; a cron spec is walked forward from further and
// further back (an hour, then doubling up to a year), at most maxWalk steps,
// so a spec whose times are rarer than that may return fewer than n. It
// returns Validate's error for a bad d.
func (d Definition) Last(now time.Time, n int) ([]time.Time, error) {
	s, err := d.schedule()
	if err != nil || n <= 0 {
		return nil, err
	}
	now = now.UTC()
	if d.Every != 0 {
		out := make([]time.Time, n)
		latest := now.Truncate(d.Every)
		for i := range out {
			out[i] = latest.Add(-time.Duration(i) * d.Every)
		}
		return out, nil
	}
	steps := 0
	var ring []time.Time
	const year = 366 * 24 * time.Hour
	for back := time.Hour; ; back = min(2*back, year) {
		ring = ring[:0]
		for t := s.Next(now.Add(-back)); !t.IsZero() && !t.After(now) && steps < maxWalk; t = s.Next(t) {
			steps++
			ring = append(ring, t)
			if len(ring) > n {
				ring = ring[1:]
			}
		}
		if len(ring) >= n || back == year || steps >= maxWalk {
			break
		}
	}
	out := make([]time.Time, len(ring))
	for i, t := range ring {
		out[len(ring)-1-i] = t
	}
	return out, nil
}

// RunPrefix starts the task key of every occurrence of d's version (d as Get
// or List return it, Version set): "periodic:<name>~<version>@". The form is
// durable's (periodic.go's occurrenceKey, "periodic:<periodic name>@<ms>")
// around this package's periodic name; if either changes, change this.
func RunPrefix(d Definition) string {
	return "periodic:" + periodicName(d.Name, d.Version) + "@"
}

// RunKey is the task key of d's occurrence at t (one of d's times).
func RunKey(d Definition, t time.Time) string {
	return RunPrefix(d) + strconv.FormatInt(t.UnixMilli(), 10)
}

// AnyRunPrefix starts the task key of every occurrence of any version of the
// schedule called name.
func AnyRunPrefix(name string) string { return "periodic:" + name + "~" }
