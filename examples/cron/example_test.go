package cron_test

import (
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel"
	"github.com/robfig/cron/v3"
)

// A robfig/cron schedule is a timingwheel.Scheduler as it is. WallClock runs
// it at its times by the wall clock, also across steps of the wall clock;
// SkipIfStillRunning keeps a slow run from overlapping the next.
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
	runs := make(chan time.Time)
	job := tw.ScheduleFunc(spec, func() { runs <- clock.Wall() },
		timingwheel.WallClock(), timingwheel.SkipIfStillRunning())
	defer job.Stop()

	// waitForRun lets time pass a minute at a time until the run is due by
	// the wall clock, and reports it.
	waitForRun := func() {
		next := spec.Next(clock.Wall())
		for clock.Wall().Before(next) {
			clock.Advance(time.Minute)
		}
		fmt.Println("ran at", (<-runs).Format("Jan 2 15:04 MST"))
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
	fmt.Println("resumed; ran at", (<-runs).Format("Jan 2 15:04 MST"))
	waitForRun()

	// Output:
	// ran at Mar 2 03:00 IST
	// ran at Mar 3 03:00 IST
	// resumed; ran at Mar 5 15:01 IST
	// ran at Mar 6 03:00 IST
}
