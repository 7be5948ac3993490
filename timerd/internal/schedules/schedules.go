// Package schedules keeps timerd's periodic schedules: their definitions in
// the store (Definitions), and in every timerd process a loop (Store.Run) that
// runs durable's Periodic for each definition, so that every time of a schedule becomes one
// HTTP task, delivered once across all processes and never early.
//
// # Where things are
//
// The definitions are, per namespace, name → the stored JSON of stored.go: on
// Redis one HASH, {<namespace>.timerd}:schedules (a hash tag of its own, so
// one cluster slot), on PostgreSQL and SQLite the table timerd_schedule
// (redisdefs.go, pgdefs.go, sqlitedefs.go). Each definition runs under a
// periodic name of durable's made
// of its name and its version, "<name>~<version>", the version being a hash
// of the definition's content. So a changed definition is a new schedule for
// durable, with its own position, and never mixes its times or its
// callback with the old one's; an unchanged one put again keeps its position.
// Occurrences' task keys are "periodic:<name>~<version>@<Unix ms>".
//
// # Changes and deletions
//
// Put and Delete act at once: after writing the definitions they remove the
// old version's periodic schedule (durable's RemovePeriodic, which also cancels
// its pending occurrence), so the loops running it stop within a second. Every
// loop also polls the definitions (pollInterval) and, when a definition it runs has
// gone or changed, stops it and removes it too, so a process that died between
// writing the definitions and removing leaves nothing running. A loop that
// read them just before a change may register the old version once more: it runs
// at most one of its times, if one falls due before that loop's next poll.
package schedules

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/robfig/cron/v3"
)

// Definition is one periodic schedule: exactly one of Every and Cron gives
// its times, and each time sends Callback.
type Definition struct {
	// Name is 1..MaxNameLen bytes of ASCII letters, digits, '-', '_', '.' and ':'.
	Name string
	// Every is the period, at least MinEvery: the times are the multiples of
	// Every since the zero time (durable.Every), so "1h" fires on the hour.
	Every time.Duration
	// Cron is a five-field spec of robfig/cron's standard parser, with an
	// optional "CRON_TZ=<zone> " prefix (UTC without one) and the @hourly-style
	// descriptors.
	Cron string
	// Callback is the request each time sends (durable.HTTPTask, checked as
	// AddHTTP checks it).
	Callback durable.HTTPTask
	// MaxAttempts is each occurrence's own durable.TaskMaxAttempts; 0 means
	// the Queue's.
	MaxAttempts int
	// Version names the content of the definition as stored (12 hex digits).
	// Get and List set it; Put ignores it.
	Version string
}

// Limits of a Definition.
const (
	// MaxNameLen keeps an occurrence's key, "periodic:<name>~<version>@<ms>",
	// far within durable's limits, and a name readable in a URL path.
	MaxNameLen = 128
	// MinEvery is the shortest period: a loop polls about once a second, and
	// a shorter period would be mostly catch-up.
	MinEvery = time.Second
)

// Errors of a bad Definition, for errors.Is. A callback that AddHTTP would
// refuse returns durable's own errors (durable.ErrInvalidURL and the rest).
var (
	ErrName        = errors.New("schedules: bad name")
	ErrEvery       = errors.New("schedules: bad every")
	ErrCron        = errors.New("schedules: bad cron spec")
	ErrTiming      = errors.New("schedules: give exactly one of every and cron")
	ErrMaxAttempts = errors.New("schedules: bad max attempts")
	// ErrNotFound is returned by Get for a name with no definition.
	ErrNotFound = errors.New("schedules: no such schedule")
)

// Validate checks d as Put does, returning an error wrapping one of the
// errors above or one of durable's HTTP task errors.
func (d Definition) Validate() error {
	_, err := d.schedule()
	if err == nil {
		_, err = durable.EncodeHTTPTask(d.Callback)
	}
	return err
}

// schedule checks d and returns its times.
func (d Definition) schedule() (durable.Schedule, error) {
	if err := CheckName(d.Name); err != nil {
		return nil, err
	}
	if d.MaxAttempts < 0 {
		return nil, fmt.Errorf("%w: %d (want 0 for the default, or more)", ErrMaxAttempts, d.MaxAttempts)
	}
	switch {
	case (d.Every != 0) == (d.Cron != ""):
		return nil, ErrTiming
	case d.Every != 0:
		if d.Every < MinEvery || d.Every%time.Millisecond != 0 {
			return nil, fmt.Errorf("%w: %v (want at least %v, in whole milliseconds)", ErrEvery, d.Every, MinEvery)
		}
		return durable.Every(d.Every), nil
	}
	s, err := cron.ParseStandard(d.Cron)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCron, err)
	}
	// A spec without CRON_TZ reads times in the zone of the time it is given,
	// and durable gives UTC: so it is in UTC whatever the process's zone.
	return s, nil
}

// CheckName checks a schedule's name, returning an error wrapping ErrName.
func CheckName(name string) error {
	if name == "" || len(name) > MaxNameLen || !utf8.ValidString(name) {
		return fmt.Errorf("%w: %q (want 1..%d bytes)", ErrName, name, MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return fmt.Errorf("%w: %q has %q (want letters, digits, '-', '_', '.', ':')", ErrName, name, c)
		}
	}
	return nil
}
