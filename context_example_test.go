package timingwheel_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel"
)

// A handler's timeout, as with context.WithTimeout: the context is done when
// the deadline passes on the wheel, or when cancel is called, whichever is
// first. Here a FakeClock moves time, so the example does not sleep.
func ExampleTimingWheel_WithTimeout() {
	clock := timingwheel.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tw, err := timingwheel.New(time.Millisecond, 512, timingwheel.WithClock(clock))
	if err != nil {
		panic(err)
	}
	defer tw.Stop()

	ctx, cancel := tw.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel() // releases the timer if the work finishes first

	deadline, _ := ctx.Deadline()
	fmt.Println("deadline:", deadline.Format("15:04:05.000"))
	fmt.Println("before:", ctx.Err())

	clock.Advance(50 * time.Millisecond)
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute): // bounds the wait: prints what Output does not expect
		fmt.Println("not done within a minute")
	}
	fmt.Println("after:", ctx.Err())
	// Output:
	// deadline: 00:00:00.050
	// before: <nil>
	// after: context deadline exceeded
}

// WithTimeoutCause sets what context.Cause reports once the timeout expires;
// children made with package context see it too.
func ExampleWithTimeoutCause() {
	errSlowBackend := errors.New("backend did not answer within 10ms")
	ctx, cancel := timingwheel.WithTimeoutCause(context.Background(), 10*time.Millisecond, errSlowBackend)
	defer cancel()
	child, cancelChild := context.WithCancel(ctx) // no goroutine to watch ctx
	defer cancelChild()

	select {
	case <-child.Done():
	case <-time.After(time.Minute):
		fmt.Println("not done within a minute")
	}
	fmt.Println(ctx.Err())
	fmt.Println(context.Cause(child))
	// Output:
	// context deadline exceeded
	// backend did not answer within 10ms
}
