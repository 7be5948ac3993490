package timingwheel

import (
	"sync"
	"time"
)

// Default wheel parameters: a 1 ms tick and 512 buckets a level, so level 0
// spans 512 ms, level 1 about 4.4 minutes and level 2 about 37 hours.
const (
	DefaultTick      = time.Millisecond
	DefaultWheelSize = 512
)

// processWheel is the default wheel outside testing/synctest bubbles.
var processWheel = sync.OnceValue(newDefaultWheel)

func newDefaultWheel() *TimingWheel {
	tw, err := New(DefaultTick, DefaultWheelSize)
	if err != nil {
		panic(err) // constants above are valid
	}
	return tw
}

// defaultWheel is the wheel of the package-level functions: the process's,
// or in a testing/synctest bubble the bubble's (see bubble.go).
func defaultWheel() *TimingWheel {
	tw, _, _ := defaultNow()
	return tw
}

// defaultNow is defaultWheel with the process wheel's clock reading, for
// the package-level functions to arm their timer by: it reads the clock
// once, where asking first whether the caller is in a bubble would read it
// twice. Outside a bubble the reading, on the monotonic clock, is never
// before the wheel's epoch; inside one, time.Since reads the bubble's fake
// clock, which starts in 2000, so a reading before the epoch is the one
// sign that sends the call to bubble.go's check. ok is false when tw is a
// bubble's wheel, which reads its own clock.
func defaultNow() (tw *TimingWheel, now time.Duration, ok bool) {
	tw = processWheel()
	now = time.Since(tw.epoch)
	if now >= 0 {
		return tw, now, true
	}
	if b := bubbleWheel(); b != nil {
		return b, 0, false
	}
	return tw, 0, true // as the wheel's own reading would: 0 before the epoch
}

// Default returns the wheel behind the package-level functions, starting it on
// first use. It runs for the life of the process; do not Stop it.
//
// In a testing/synctest bubble, Default and the package-level functions use
// a wheel of that bubble instead, made on first use in the bubble, so that
// code under test keeps working there as it would with package time: its
// timers run on the bubble's fake clock, and two bubbles never share a
// wheel. A wheel taken from Default outside a bubble must not be used in
// one (nor one bubble's in another), as a time.Timer must not.
func Default() *TimingWheel { return defaultWheel() }

// AfterFunc is Default().AfterFunc: time.AfterFunc on the default wheel.
func AfterFunc(d time.Duration, f func()) *Timer {
	tw, now, ok := defaultNow()
	if !ok {
		return tw.AfterFunc(d, f)
	}
	return tw.afterFuncAt(d, f, now)
}

// NewTimer is Default().NewTimer: time.NewTimer on the default wheel.
func NewTimer(d time.Duration) *Timer { return defaultWheel().NewTimer(d) }

// After is Default().After: time.After on the default wheel.
func After(d time.Duration) <-chan time.Time { return defaultWheel().After(d) }

// ScheduleFunc is Default().ScheduleFunc.
func ScheduleFunc(s Scheduler, f func(), opts ...ScheduleOption) *Timer {
	return defaultWheel().ScheduleFunc(s, f, opts...)
}
