package timingwheel

import "fmt"

// An Option configures a TimingWheel in New.
type Option func(*config) error

type config struct {
	clock   Clock
	mode    execMode
	workers int
}

// WithClock makes the wheel read time from c and sleep on c's alarms instead
// of the system clock. Use a FakeClock to test code that uses a wheel without
// sleeping. A nil c is ErrInvalidOption.
func WithClock(c Clock) Option {
	return func(cfg *config) error {
		if c == nil {
			return fmt.Errorf("%w: WithClock(nil)", ErrInvalidOption)
		}
		cfg.clock = c
		return nil
	}
}

// WithWorkerPool runs AfterFunc and ScheduleFunc callbacks on n long-lived
// worker goroutines fed by an unbounded FIFO queue, instead of a new goroutine
// per callback. Expirations never wait for a free worker (the queue grows
// instead), so a burst of expirations costs no goroutine creation, but a
// callback may start later than it would on its own goroutine when all n are
// busy. Stop of the wheel waits for the callbacks already queued to finish.
// n < 1 is ErrInvalidOption.
func WithWorkerPool(n int) Option {
	return func(cfg *config) error {
		if n < 1 {
			return fmt.Errorf("%w: WithWorkerPool(%d): need at least one worker", ErrInvalidOption, n)
		}
		cfg.mode, cfg.workers = execPool, n
		return nil
	}
}

// WithInlineCallbacks runs AfterFunc and ScheduleFunc callbacks on the wheel's
// poller goroutine, one after another, with no lock held. It is the cheapest
// mode for callbacks that only signal (close a channel, cancel a context): a
// callback that blocks delays every later expiration of the wheel. Callbacks
// may call the wheel and its timers. A timer due at once (d <= 0) then runs on
// the poller within one tick, never on the caller's goroutine.
func WithInlineCallbacks() Option {
	return func(cfg *config) error {
		cfg.mode = execInline
		return nil
	}
}
