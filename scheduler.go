package timingwheel

import (
	"sync/atomic"
	"time"
)

// A Scheduler says when a recurring job runs next.
type Scheduler interface {
	// Next returns the time of the run after one scheduled at prev (for the
	// first run, prev is the time ScheduleFunc was called; on the wall
	// clock, also the wall clock's reading after runs it jumped past: see
	// WallClock), or the zero Time for no more runs. The wheel calls Next
	// with the lock of the wheel's first shard held, where every schedule
	// of the wheel lives, so the Next calls of all the wheel's schedules
	// are serialised, a Scheduler shared by several schedules included.
	// Next must be quick and must not call the wheel or its timers.
	Next(prev time.Time) time.Time
}

// Every returns a Scheduler of runs every d, the first d after the schedule
// starts. It panics if d <= 0, as time.NewTicker does.
func Every(d time.Duration) Scheduler {
	if d <= 0 {
		panic("timingwheel: Every called with non-positive interval")
	}
	return every(d)
}

type every time.Duration

func (e every) Next(prev time.Time) time.Time { return prev.Add(time.Duration(e)) }

// maxSkips bounds the Next calls one run of a schedule makes to skip runs
// merged into it, so that the advancer's work per run stays bounded: a
// schedule of Every(time.Nanosecond) on a 1 ms wheel needs 10^6 calls a
// tick, and 1024 of Every's calls take 3.9 µs (BenchmarkEveryNextSkips),
// less than the advancer's hold of a shard for one chunk (see chunk).
const maxSkips = 1024

// schedule is the part of a ScheduleFunc timer that one-shot timers lack.
type schedule struct {
	owner     owner // the Timer's owner: the wheel and this schedule
	scheduler Scheduler
	// next is the scheduled time of the pending run, a wall-clock time if
	// wall is set; protected by the shard's mu.
	next time.Time
	// wall and skipIfRunning are the schedule's options; they never change
	// after ScheduleFunc.
	wall          bool
	skipIfRunning bool
	// running is set from the hand-over of a SkipIfStillRunning schedule's
	// run to the executor until the run returns (or does not start, for a
	// Stop). It is set only with the shard's mu held; the run clears it.
	running atomic.Bool
	// stopGen counts the timer's successful Stops. A run handed to the
	// executor carries the count it was fired under and does not start if a
	// Stop has returned true since: that is how "no run starts after Stop
	// returns" holds without waiting.
	stopGen atomic.Uint64
}

// A ScheduleOption changes how ScheduleFunc runs one schedule.
type ScheduleOption func(*schedule)

// WallClock makes a schedule's times wall-clock times, as those of a cron
// schedule are: runs happen at the times Next returns as the wall clock reads
// them, never before, also after the wall clock steps (an NTP correction, a
// machine resumed from suspend). Without it, a schedule's times are read on
// the monotonic clock from the moment ScheduleFunc is called, as Every needs
// for a drift-free phase, and a step of the wall clock never moves a run.
//
// On the wall clock:
//   - Next is called with the wall clock's reading, in the clock's location
//     (time.Local on the system clock; on a FakeClock, its start's location),
//     and then with the times it returned. A Scheduler that wants another
//     location converts, as a cron spec with a time zone does.
//   - A run fires once the wall clock has reached its time. When the timer
//     comes due and the wall clock reads earlier (it stepped back), the timer
//     is armed again for the rest: the run is late by the step, never early.
//   - When the wall clock has jumped past later runs (it stepped forward, or
//     the machine slept), the due run fires once, and the schedule resumes at
//     Next of the wall clock's reading: the missed runs are dropped, not run
//     one after another as on the monotonic clock.
//   - Reset(d) moves the next run to d after the wall clock's reading.
//   - The wheel reads the wall clock at least once a minute of monotonic
//     time while a run is pending, so a run is late by at most about a
//     minute after a forward step or a resume (the monotonic clock does not
//     advance during suspend).
func WallClock() ScheduleOption { return func(s *schedule) { s.wall = true } }

// SkipIfStillRunning skips a run of the schedule, counted in Stats.Skipped
// instead of Stats.Fired, when the previous run of the same schedule has been
// handed to the executor and has not yet returned; the schedule continues
// with the run after. It is robfig/cron's SkipIfStillRunning and gocron's
// singleton mode. (With WithInlineCallbacks, runs never overlap anyway.)
func SkipIfStillRunning() ScheduleOption { return func(s *schedule) { s.skipIfRunning = true } }

// ScheduleFunc calls f, each in its own goroutine (or as the wheel's callback
// option says), at the times s gives: first s.Next(now), then s.Next of the
// previous scheduled time, so runs do not drift by the wheel's lateness. Each
// run starts no earlier than its time. Runs due in the same tick as the run
// firing are merged into it (an interval shorter than the tick runs once a
// tick, on its phase); runs that fell due while the wheel was stalled fire one
// after another as it catches up (on the wall clock, see WallClock, they are
// dropped instead). Runs of a slow f may overlap, unless SkipIfStillRunning
// is given. Stop the returned Timer to end the schedule: a run already handed
// to the executor but not yet begun when Stop returns true does not run; Stop
// does not wait for a run that has begun. Reset(d) moves the next run to d
// from now and continues the schedule from there.
//
// ScheduleFunc panics if s.Next(now) is the zero Time: such a schedule would
// never run (a cron spec for February 30th, say). A caller taking schedules
// from its users can check s.Next(time.Now()).IsZero() first. A nil s, f or
// option panics too.
func (tw *TimingWheel) ScheduleFunc(s Scheduler, f func(), opts ...ScheduleOption) *Timer {
	if s == nil {
		panic("timingwheel: ScheduleFunc called with nil Scheduler")
	}
	if f == nil {
		panic("timingwheel: ScheduleFunc called with nil func")
	}
	// Every schedule lives in the first shard, so that all Next calls are
	// serialised under one lock (see Scheduler).
	sh := &tw.shards[0]
	sched := &schedule{scheduler: s}
	for _, opt := range opts {
		if opt == nil {
			panic("timingwheel: ScheduleFunc called with nil ScheduleOption")
		}
		opt(sched)
	}
	sched.owner = owner{shard: sh, schedule: sched}
	t := &Timer{owner: &sched.owner, f: f}
	now := tw.now()
	sh.mu.Lock()
	var first time.Time
	var due int64
	if sched.wall {
		wall := tw.wallNow()
		first = s.Next(wall)
		due = sh.wallTickLocked(first, wall, now)
	} else {
		first = s.Next(tw.timeOf(now))
		due = sh.scheduledTickLocked(first)
	}
	if first.IsZero() {
		sh.unlock()
		panic("timingwheel: ScheduleFunc called with a Scheduler that never runs: its first Next is the zero Time")
	}
	sched.next = first
	// A first run already past is due at once: startLocked leaves it to the
	// advancer at the next tick, never to this goroutine.
	sh.startLocked(t, due, now)
	sh.unlock()
	tw.help(now)
	return t
}

// scheduledTickLocked returns the due tick of a run scheduled at next: never
// before next, and never before the tick after currentTick, so that a
// schedule behind the clock cannot make a flush loop.
func (s *shard) scheduledTickLocked(next time.Time) int64 {
	return max(s.wheel.dueAt(next.Sub(s.wheel.epoch)), s.currentTick+1)
}

// resetLocked moves the schedule's next run to d from now, for Timer.Reset
// at wheel time now, and returns its due tick, given due, the tick d after
// now. On the wall clock, the run is d after the wall clock's reading, and
// the timer is armed for wallRecheck at most, as every wall-clock run is.
func (s *schedule) resetLocked(tw *TimingWheel, now, d time.Duration, due int64) int64 {
	if !s.wall {
		s.next = tw.timeOf(addDuration(now, d))
		return due
	}
	s.next = tw.wallNow().Add(d)
	return tw.dueAfter(now, min(d, wallRecheck))
}

// rearmLocked fires a run of the schedule t and arms the next one. It returns
// the run, gated on no Stop having succeeded in between, or nil if there is
// none to start.
func (sh *shard) rearmLocked(t *Timer) func() {
	tw, s := sh.wheel, t.owner.schedule
	if s.wall {
		return sh.rearmWallLocked(t)
	}
	// Later runs whose due tick is this run's are merged into it: an
	// interval shorter than the tick runs once a tick and keeps its phase,
	// and a schedule Reset into the past resumes at its first time ahead.
	// Past maxSkips calls the schedule restarts from the current tick.
	next := s.scheduler.Next(s.next)
	for skips := 0; !next.IsZero() && tw.dueAt(next.Sub(tw.epoch)) <= sh.currentTick; skips++ {
		if skips == maxSkips {
			next = s.scheduler.Next(tw.timeOf(tw.startOf(sh.currentTick)))
			break
		}
		next = s.scheduler.Next(next)
	}
	if next.IsZero() {
		t.state = stateFired
		return sh.runLocked(t, true)
	}
	s.next = next
	t.due = sh.scheduledTickLocked(next)
	sh.insertLocked(t)
	return sh.runLocked(t, false)
}

// runLocked counts a run of the schedule t as fired, or as skipped if
// SkipIfStillRunning finds the previous run still running, and returns the
// run to hand to the executor (nil if skipped). final says the schedule has
// no run after this one.
func (sh *shard) runLocked(t *Timer, final bool) func() {
	s := t.owner.schedule
	if s.skipIfRunning && !s.running.CompareAndSwap(false, true) {
		sh.noteSkipped(final)
		return nil
	}
	sh.noteFired(final)
	gen, f := s.stopGen.Load(), t.f
	if !s.skipIfRunning {
		return func() {
			if s.stopGen.Load() == gen {
				f()
			}
		}
	}
	return func() {
		// Cleared also when a Stop keeps f from starting: the next run
		// must not be skipped for a run that never began.
		defer s.running.Store(false)
		if s.stopGen.Load() == gen {
			f()
		}
	}
}
