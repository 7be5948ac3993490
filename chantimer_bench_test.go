package timingwheel

import (
	"testing"
	"time"
)

// The channel-timer benchmarks use only the exported API, so that the same
// file measures an older commit of the wheel beside this one (benchstat
// across the two runs); each runs the wheel and package time in one run
// (benchstat -col /impl).

// chanTimerDurations are the arming durations measured: a short timeout, due
// well within the strong horizon, and one far beyond it.
var chanTimerDurations = []struct {
	name string
	d    time.Duration
}{
	{"d=100ms", 100 * time.Millisecond},
	{"d=1h", time.Hour},
}

// BenchmarkNewTimerStop measures NewTimer followed by a Stop that stops it,
// the life of a channel timeout that did not expire. Every Stop must report
// true, so nothing fired and every iteration measured one arming and one
// cancel.
func BenchmarkNewTimerStop(b *testing.B) {
	for _, dc := range chanTimerDurations {
		b.Run(dc.name+"/impl=wheel", func(b *testing.B) {
			tw, err := New(DefaultTick, DefaultWheelSize)
			if err != nil {
				b.Fatal(err)
			}
			defer tw.Stop()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if !tw.NewTimer(dc.d).Stop() {
					b.Fatal("Stop returned false: the benchmark did not measure a cancel")
				}
			}
		})
		b.Run(dc.name+"/impl=runtime", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if !time.NewTimer(dc.d).Stop() {
					b.Fatal("Stop returned false: the benchmark did not measure a cancel")
				}
			}
		})
	}
}

// BenchmarkAfterSelect measures the loop that selects on a fresh After every
// time round and leaves by another case: each After is abandoned pending, and
// the garbage collector (or the timer firing) has to release it. Its cost
// includes that release, spread over the iterations. The other case is always
// ready, so no iteration waits for the timer; one whose goroutine was
// descheduled past d may find both ready and take the timer, which is
// allowed for at most 1% of them (a loaded machine) and reported.
func BenchmarkAfterSelect(b *testing.B) {
	for _, dc := range chanTimerDurations {
		b.Run(dc.name+"/impl=wheel", func(b *testing.B) {
			tw, err := New(DefaultTick, DefaultWheelSize)
			if err != nil {
				b.Fatal(err)
			}
			defer tw.Stop()
			afterSelect(b, tw.After, dc.d)
		})
		b.Run(dc.name+"/impl=runtime", func(b *testing.B) {
			afterSelect(b, time.After, dc.d)
		})
	}
}

func afterSelect(b *testing.B, after func(time.Duration) <-chan time.Time, d time.Duration) {
	ready := make(chan struct{}, 1)
	timedOut := 0
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ready <- struct{}{}
		select {
		case <-ready:
		case <-after(d):
			timedOut++
			<-ready
		}
	}
	b.StopTimer()
	if timedOut > b.N/100 {
		b.Fatalf("%d of %d selects took the timer: the benchmark measured waits", timedOut, b.N)
	}
	b.ReportMetric(float64(timedOut)/float64(b.N), "timer-won/op")
}
