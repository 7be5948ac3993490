package timingwheel

import "time"

// Schedules on the wall clock (see WallClock). The wheel measures every
// timer on the monotonic clock; a wall-clock schedule is a timer armed for
// the wall-clock time left until its run, re-checked against the wall clock
// when it comes due, so that a step of the wall clock between the arming and
// the run can make the run later but never earlier.

// wallRecheck bounds how long a wall-clock schedule's timer is armed for, so
// that a forward step of the wall clock, or a resume from suspend, is noticed
// within it. A minute is cron's resolution: a job of a cron spec is then no
// more than one of its own units late after a step, and a schedule pending
// for a day costs 1440 re-arms of its timer (each a re-insertion on level 0
// or 1, with no run) instead of one.
const wallRecheck = time.Minute

// wallClock is a Clock whose wall clock can differ from the monotonic time
// of its Now, as FakeClock's does after StepWall.
type wallClock interface {
	Wall() time.Time
}

// wallNow reads the wall clock, without a monotonic reading, so that
// comparisons and differences with it use the wall clock: on the system
// clock, time.Now in time.Local.
func (tw *TimingWheel) wallNow() time.Time {
	if c, ok := tw.clock.(wallClock); ok {
		return c.Wall().Round(0)
	}
	return tw.clock.Now().Round(0)
}

// wallTickLocked returns the due tick of a check, at wheel time now and wall
// time wall, of a run scheduled at the wall-clock time next: when the wall
// clock would reach next if it kept pace with the monotonic clock, but no
// more than wallRecheck ahead, and never before the tick after currentTick.
func (s *shard) wallTickLocked(next, wall time.Time, now time.Duration) int64 {
	return max(s.wheel.dueAfter(now, min(next.Sub(wall), wallRecheck)), s.currentTick+1)
}

// rearmWallLocked is rearmLocked for a schedule on the wall clock: t has come
// due on the monotonic clock, and the wall clock says whether its run has.
func (sh *shard) rearmWallLocked(t *Timer) func() {
	tw, s := sh.wheel, t.owner.schedule
	now, wall := tw.now(), tw.wallNow()
	if wall.Before(s.next) {
		// Not yet by the wall clock: it stepped back, or this is a
		// re-check of a run more than wallRecheck ahead. Wait for the rest;
		// never run early. Not an expiration: nothing is counted.
		t.due = sh.wallTickLocked(s.next, wall, now)
		sh.insertLocked(t)
		return nil
	}
	// Runs the wall clock has already passed are dropped, not run one
	// after another: after a day's suspend a daily job runs once.
	next := s.scheduler.Next(s.next)
	if !next.IsZero() && !next.After(wall) {
		next = s.scheduler.Next(wall)
	}
	if next.IsZero() {
		t.state = stateFired
		return sh.runLocked(t, true)
	}
	s.next = next
	t.due = sh.wallTickLocked(next, wall, now)
	sh.insertLocked(t)
	return sh.runLocked(t, false)
}
