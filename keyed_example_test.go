package timingwheel_test

import (
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel"
)

// Sessions that close after 30 seconds of silence: each read moves the
// session's timeout, and a logout removes it. A FakeClock stands in for the
// passing of time.
func ExampleKeyed() {
	clock := timingwheel.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tw, err := timingwheel.New(time.Second, 64, timingwheel.WithClock(clock))
	if err != nil {
		panic(err)
	}
	defer tw.Stop()

	sessions := timingwheel.NewKeyed[string](tw)
	closed := make(chan string)
	open := func(user string) {
		sessions.AfterFunc(user, 30*time.Second, func() { closed <- user })
	}
	open("alice")
	open("bob")

	clock.Advance(20 * time.Second)
	fmt.Println("alice read, moved:", sessions.Reset("alice", 30*time.Second))
	deadline, _ := sessions.Deadline("alice")
	fmt.Println("alice idle until:", deadline.Format(time.TimeOnly))
	fmt.Println("bob logged out, stopped:", sessions.Stop("bob"))

	clock.Advance(30 * time.Second)
	select {
	case user := <-closed:
		fmt.Println("closed:", user)
	case <-time.After(time.Minute): // bounds the wait: prints what Output does not expect
		fmt.Println("nothing closed within a minute")
	}
	fmt.Println("pending:", sessions.Len())
	fmt.Println("alice moved after closing:", sessions.Reset("alice", time.Minute))
	// Output:
	// alice read, moved: true
	// alice idle until: 00:00:50
	// bob logged out, stopped: true
	// closed: alice
	// pending: 0
	// alice moved after closing: false
}
