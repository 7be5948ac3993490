module github.com/go-timingwheel/timingwheel/examples/cron

go 1.24

require (
	github.com/go-timingwheel/timingwheel v0.0.0
	github.com/robfig/cron/v3 v3.0.1
)

// The example runs the wheel of this repository, not a published version.
replace github.com/go-timingwheel/timingwheel => ../..
