package delayqueue

import "time"

// Clock is the source of time a DelayQueue reads and sleeps on. Implementations
// must be safe for concurrent use. Times from Now are compared only with other
// times from the same Clock, so a clock that carries Go's monotonic reading
// (as System does) is immune to wall-clock steps.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewAlarm returns a disarmed Alarm.
	NewAlarm() Alarm
}

// Alarm is a reusable one-shot wake-up, the clock-side half of a sleep.
//
// Alarms are armed with an absolute deadline rather than a duration so that a
// fake clock that is advanced between the sleeper's reading of Now and its
// arming of the alarm cannot make it oversleep.
type Alarm interface {
	// C returns the channel on which the alarm delivers the time it fired.
	C() <-chan time.Time
	// Set arms the alarm to fire once Now reaches deadline, replacing any
	// earlier arming. A deadline not after Now fires at once. After Set
	// returns, no value from an earlier arming is delivered on C.
	Set(deadline time.Time)
	// Stop disarms the alarm. After Stop returns, nothing is delivered on C
	// until the next Set.
	Stop()
}

// System is the Clock of the running process: time.Now, with its monotonic
// reading, and runtime timers.
var System Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) NewAlarm() Alarm {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &systemAlarm{t: t}
}

// systemAlarm relies on the Go 1.23 timer semantics (Reset and Stop discard a
// value not yet received) for its no-stale-value promise. A program built with
// GODEBUG=asynctimerchan=1 may see one stale wake-up, which a DelayQueue
// tolerates: it re-reads the clock after every wake-up.
type systemAlarm struct{ t *time.Timer }

func (a *systemAlarm) C() <-chan time.Time    { return a.t.C }
func (a *systemAlarm) Set(deadline time.Time) { a.t.Reset(time.Until(deadline)) }
func (a *systemAlarm) Stop()                  { a.t.Stop() }
