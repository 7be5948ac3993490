package timingwheel_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel"
)

func ExampleNew() {
	tw, err := timingwheel.New(time.Millisecond, 512)
	if err != nil {
		panic(err)
	}
	defer tw.Stop() // releases the wheel's goroutine

	_, err = timingwheel.New(0, 512)
	fmt.Println(errors.Is(err, timingwheel.ErrInvalidTick))
	_, err = timingwheel.New(time.Millisecond, 1)
	fmt.Println(errors.Is(err, timingwheel.ErrInvalidWheelSize))
	_, err = timingwheel.New(time.Millisecond, 512, timingwheel.WithWorkerPool(0))
	fmt.Println(errors.Is(err, timingwheel.ErrInvalidOption))
	// Output:
	// true
	// true
	// true
}

func ExampleTimingWheel_AfterFunc() {
	tw, err := timingwheel.New(time.Millisecond, 512)
	if err != nil {
		panic(err)
	}
	defer tw.Stop()

	done := make(chan struct{})
	start := time.Now()
	tw.AfterFunc(20*time.Millisecond, func() {
		fmt.Println("fired, not early:", time.Since(start) >= 20*time.Millisecond)
		close(done)
	})
	select {
	case <-done:
	case <-time.After(time.Minute): // bounds the wait: prints what Output does not expect
		fmt.Println("did not fire within a minute")
	}

	// A timer stopped in time never runs, and Stop says so.
	t := tw.AfterFunc(time.Hour, func() { fmt.Println("never printed") })
	fmt.Println("stopped:", t.Stop())
	fmt.Println("stopped again:", t.Stop())
	// Output:
	// fired, not early: true
	// stopped: true
	// stopped again: false
}

func ExampleTimingWheel_NewTimer() {
	tw, err := timingwheel.New(time.Millisecond, 512)
	if err != nil {
		panic(err)
	}
	defer tw.Stop()

	start := time.Now()
	t := tw.NewTimer(10 * time.Millisecond)
	select {
	case fired := <-t.C: // the time it fired
		fmt.Println("not early:", fired.Sub(start) >= 10*time.Millisecond)
	case <-time.After(time.Minute):
		fmt.Println("did not fire within a minute")
	}

	// As with time.Timer since Go 1.23, Reset discards a value not yet
	// received, so nothing stale arrives on C.
	t.Reset(time.Millisecond)
	time.Sleep(5 * time.Millisecond) // t fires again; its value waits in C
	t.Reset(time.Hour)
	select {
	case <-t.C:
		fmt.Println("stale value")
	default:
		fmt.Println("no stale value")
	}
	fmt.Println("stopped:", t.Stop())
	// Output:
	// not early: true
	// no stale value
	// stopped: true
}

func ExampleTimingWheel_ScheduleFunc() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := timingwheel.NewFakeClock(start)
	tw, err := timingwheel.New(100*time.Millisecond, 64, timingwheel.WithClock(clock))
	if err != nil {
		panic(err)
	}
	defer tw.Stop()

	runs := make(chan time.Duration)
	t := tw.ScheduleFunc(timingwheel.Every(time.Second), func() {
		runs <- clock.Now().Sub(start)
	})
	for range 3 {
		clock.Advance(time.Second)
		select {
		case at := <-runs:
			fmt.Println("run at", at)
		case <-time.After(time.Minute):
			fmt.Println("no run within a minute")
		}
	}
	fmt.Println("stopped:", t.Stop())
	// Output:
	// run at 1s
	// run at 2s
	// run at 3s
	// stopped: true
}

func ExampleAfterFunc() {
	// The package-level functions use the default wheel (1 ms tick), a
	// drop-in for time.AfterFunc that never fires early.
	done := make(chan struct{})
	start := time.Now()
	timingwheel.AfterFunc(5*time.Millisecond, func() {
		fmt.Println("ran after at least 5ms:", time.Since(start) >= 5*time.Millisecond)
		close(done)
	})
	select {
	case <-done:
	case <-time.After(time.Minute):
		fmt.Println("did not run within a minute")
	}
	// Output: ran after at least 5ms: true
}

func ExampleFakeClock() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := timingwheel.NewFakeClock(start)
	tw, err := timingwheel.New(time.Second, 64, timingwheel.WithClock(clock))
	if err != nil {
		panic(err)
	}
	defer tw.Stop()

	t := tw.NewTimer(90 * time.Second)
	clock.Advance(89 * time.Second)
	select {
	case <-t.C:
		fmt.Println("fired early")
	case <-time.After(10 * time.Millisecond):
		fmt.Println("not yet at 89s")
	}
	clock.Advance(time.Second)
	select {
	case fired := <-t.C:
		fmt.Println("fired at", fired.Sub(start))
	case <-time.After(time.Minute):
		fmt.Println("did not fire within a minute")
	}
	// Output:
	// not yet at 89s
	// fired at 1m30s
}
