package timingwheel

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/go-timingwheel/timingwheel/delayqueue"
)

// Clock is where a wheel reads the time and sleeps: the system clock by
// default, a FakeClock in tests (see WithClock).
type Clock = delayqueue.Clock

// Alarm is the reusable wake-up a Clock gives the wheel's poller.
type Alarm = delayqueue.Alarm

// FakeClock is a Clock that moves only when told to, for deterministic tests
// of code that uses a wheel. A wheel on a FakeClock fires a timer once
// Advance has moved the clock past its deadline (rounded up to the tick); the
// wheel's poller does so on its own goroutine, so a test waits for the effect
// (a callback's signal, a value on Timer.C) rather than assuming it happened
// when Advance returns.
//
// A FakeClock has two clocks, as a machine does: the monotonic one that Now
// reads and every timer measures, moved by Advance, and the wall clock that
// Wall reads and schedules on the wall clock follow (see WallClock), moved by
// Advance too and, on its own, by StepWall, which is how a test makes an NTP
// step or a resume from suspend.
//
// The zero value is not usable; call NewFakeClock. A FakeClock is safe for
// concurrent use.
type FakeClock struct {
	mu     sync.Mutex
	start  time.Time
	now    time.Time
	wall   time.Duration           // the wall clock's offset from now, changed by StepWall
	alarms map[*fakeAlarm]struct{} // armed alarms
}

// NewFakeClock returns a FakeClock that reads start until advanced. Its times,
// those of Wall included, are in start's location: that is the location of
// the times a wheel on it hands to a Scheduler's Next.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{start: start, now: start, alarms: make(map[*fakeAlarm]struct{})}
}

// Now returns the clock's current monotonic time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Wall returns the clock's current wall-clock time: Now, moved by every
// StepWall so far.
func (c *FakeClock) Wall() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now.Add(c.wall)
}

// StepWall steps the wall clock by d, forward or back, and leaves the
// monotonic clock alone: no alarm fires, and a timer's deadline does not
// move. Advance(small) with StepWall(large) is a resume from suspend, during
// which the monotonic clock stopped.
func (c *FakeClock) StepWall(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall += d
}

// Advance moves the clock forward by d (d < 0 is ignored: the clock is
// monotonic) and fires every alarm whose deadline it reaches.
//
// A wheel measures time in int64 nanoseconds since it was made, so Advance
// panics rather than take the clock math.MaxInt64 ns (292 years) or more past
// its start: no wheel on it could tell the time any more.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		next := c.now.Add(d)
		if next.Sub(c.start) == math.MaxInt64 {
			panic(fmt.Sprintf("timingwheel: FakeClock.Advance(%v) would take the clock 292 years or more past its start, beyond any wheel's range", d))
		}
		c.now = next
	}
	for a := range c.alarms {
		if !c.now.Before(a.deadline) {
			c.fireLocked(a)
		}
	}
}

// NewAlarm returns a disarmed alarm driven by Advance.
func (c *FakeClock) NewAlarm() Alarm {
	return &fakeAlarm{clock: c, ch: make(chan time.Time, 1)}
}

func (c *FakeClock) fireLocked(a *fakeAlarm) {
	delete(c.alarms, a)
	a.ch <- c.now // cannot block: Set and Stop drain, and an alarm fires once per Set
}

type fakeAlarm struct {
	clock    *FakeClock
	ch       chan time.Time
	deadline time.Time // protected by clock.mu
}

func (a *fakeAlarm) C() <-chan time.Time { return a.ch }

func (a *fakeAlarm) Set(deadline time.Time) {
	c := a.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	a.drain()
	a.deadline = deadline
	if c.now.Before(deadline) {
		c.alarms[a] = struct{}{}
	} else {
		c.fireLocked(a)
	}
}

func (a *fakeAlarm) Stop() {
	c := a.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.alarms, a)
	a.drain()
}

func (a *fakeAlarm) drain() {
	select {
	case <-a.ch:
	default:
	}
}
