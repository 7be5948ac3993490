package cron_test

import (
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel"
	"github.com/robfig/cron/v3"
)

// A robfig/cron schedule is a timingwheel.Scheduler as it is. WallClock runs
// it at its times by the wall clock, also across steps of the wall clock.
//
// A job that can outlast its interval would add timingwheel.SkipIfStillRunning(),
// as cron.SkipIfStillRunning does. This example does not: it moves the clock
// as soon as it has read a run's time, and the run may not have returned by
// then (reading what the job sent does not wait for the job to return), so a
// run falling due at once after, as the one on resume does, would be skipped.
//
// The wheel runs on a FakeClock started in India (+05:30), so the "0 3 * * *"
// spec, which is in the local zone, is handed times in that zone and runs at
// 03:00 there. On the system clock the times handed to the schedule are in
// time.Local.
func Example() {
	ist := time.FixedZone("IST", 5*3600+30*60)
	clock := timingwheel.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, ist))
	tw, err := timingwheel.New(time.Second, 64, timingwheel.WithClock(clock))
	if err != nil {
		panic(err)
	}
	defer tw.Stop()

	spec, err := cron.ParseStandard("0 3 * * *")
	if err != nil {
		panic(err)
	}
	// Buffered, so that the job never waits for the example.
	runs := make(chan time.Time, 4)
	job := tw.ScheduleFunc(spec, func() { runs <- clock.Wall() }, timingwheel.WallClock())
	defer job.Stop()

	// ranAt waits for the job's next run, for a minute of real time at most,
	// and says when by the wall clock it ran.
	ranAt := func() string {
		select {
		case at := <-runs:
			return at.Format("Jan 2 15:04 MST")
		case <-time.After(time.Minute):
			return "never: no run within a minute"
		}
	}
	// waitForRun lets time pass a minute at a time until the run is due by
	// the wall clock, and reports it.
	waitForRun := func() {
		next := spec.Next(clock.Wall())
		for clock.Wall().Before(next) {
			clock.Advance(time.Minute)
		}
		fmt.Println("ran at", ranAt())
	}
	waitForRun()
	// An NTP correction steps the wall clock back an hour: the next run
	// still waits for 03:00 by the wall clock, an hour more of real time.
	clock.Advance(time.Hour)
	clock.StepWall(-time.Hour)
	waitForRun()
	// The machine sleeps for two days and a half: the monotonic clock
	// stands still while the wall clock moves on. On resume the missed run
	// is made up once, within a minute, not once per missed day.
	clock.StepWall(60 * time.Hour)
	clock.Advance(time.Minute)
	fmt.Println("resumed; ran at", ranAt())
	waitForRun()

	// Output:
	// ran at Mar 2 03:00 IST
	// ran at Mar 3 03:00 IST
	// resumed; ran at Mar 5 15:01 IST
	// ran at Mar 6 03:00 IST
}
