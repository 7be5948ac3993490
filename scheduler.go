package timingwheel

import (
	"sync/atomic"
	"time"
)

// A Scheduler says when a recurring job runs next.
type Scheduler interface {
	// Next returns the time of the run after one scheduled at prev (for the
	// first run, prev is the time ScheduleFunc was called), or the zero Time
	// for no more runs. The wheel calls Next with the lock of the wheel's
	// first shard held, where every schedule of the wheel lives, so the Next
	// calls of all the wheel's schedules are serialised, a Scheduler shared
	// by several schedules included. Next must be quick and must not call
	// the wheel or its timers.
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
	next      time.Time // the scheduled time of the pending run; protected by the shard's mu
	// stopGen counts the timer's successful Stops. A run handed to the
	// executor carries the count it was fired under and does not start if a
	// Stop has returned true since: that is how "no run starts after Stop
	// returns" holds without waiting.
	stopGen atomic.Uint64
}

// ScheduleFunc calls f, each in its own goroutine (or as the wheel's callback
// option says), at the times s gives: first s.Next(now), then s.Next of the
// previous scheduled time, so runs do not drift by the wheel's lateness. Each
// run starts no earlier than its time. Runs due in the same tick as the run
// firing are merged into it (an interval shorter than the tick runs once a
// tick, on its phase); runs that fell due while the wheel was stalled fire one
// after another as it catches up. Runs of a slow f may overlap. Stop the
// returned Timer to end the schedule: a run already handed to the executor
// but not yet begun when Stop returns true does not run; Stop does not wait
// for a run that has begun. Reset(d) moves the next run to d from now and
// continues the schedule from there.
//
// If s.Next(now) is the zero Time, f never runs and the Timer is inactive. A
// nil s or f panics.
func (tw *TimingWheel) ScheduleFunc(s Scheduler, f func()) *Timer {
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
	sched.owner = owner{shard: sh, schedule: sched}
	t := &Timer{owner: &sched.owner, f: f}
	now := tw.queue.Now()
	sh.mu.Lock()
	first := s.Next(tw.timeOf(now))
	if first.IsZero() {
		sh.mu.Unlock()
		t.state = stateIdle // no run: Stop and Reset report false
		return t
	}
	sched.next = first
	// A first run already past is due at the clock's next tick, not only
	// after currentTick, which lags the clock while the advancer holds a
	// bucket it has taken but not flushed (see startLocked).
	sh.startLocked(t, max(sh.scheduledTickLocked(first), tw.tickOf(now)+1), now)
	sh.mu.Unlock()
	tw.help(now)
	return t
}

// scheduledTickLocked returns the due tick of a run scheduled at next: never
// before next, and never before the tick after currentTick, so that a
// schedule behind the clock cannot make a flush loop.
func (s *shard) scheduledTickLocked(next time.Time) int64 {
	return max(s.wheel.dueAt(next.Sub(s.wheel.epoch)), s.currentTick+1)
}

// rearmLocked fires a run of the schedule t and arms the next one. It returns
// the run, gated on no Stop having succeeded in between.
func (sh *shard) rearmLocked(t *Timer) func() {
	tw, s := sh.wheel, t.owner.schedule
	gen, f := s.stopGen.Load(), t.f
	run := func() {
		if s.stopGen.Load() == gen {
			f()
		}
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
		sh.noteFired(true)
		return run
	}
	sh.noteFired(false)
	s.next = next
	t.due = sh.scheduledTickLocked(next)
	sh.insertLocked(t)
	return run
}
