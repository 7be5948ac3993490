package timingwheel

import (
	"testing"
	"time"
)

// BenchmarkScheduleRun measures one run of a schedule due every tick, fired
// and re-armed by the advancer on a manual wheel (inline, with a no-op f),
// on the monotonic clock (Every) and on the wall clock (WallClock, which
// reads the wall clock and converts at every run), in one run for the ratio.
// It checks that every iteration fired exactly one run.
func BenchmarkScheduleRun(b *testing.B) {
	for _, tc := range []struct {
		name string
		s    Scheduler
		opts []ScheduleOption
	}{
		{"clock=monotonic", Every(time.Millisecond), nil},
		{"clock=wall", everyWall(time.Millisecond), []ScheduleOption{WallClock()}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			clock := NewFakeClock(testEpoch)
			tw, err := newManual(time.Millisecond, 64, WithClock(clock), WithInlineCallbacks())
			if err != nil {
				b.Fatal(err)
			}
			defer tw.Stop()
			tw.ScheduleFunc(tc.s, noop, tc.opts...)
			b.ResetTimer()
			for range b.N {
				clock.Advance(time.Millisecond)
				tw.step()
			}
			b.StopTimer()
			if fired := tw.Stats().Fired; fired != uint64(b.N) {
				b.Fatalf("%d runs in %d ticks", fired, b.N)
			}
		})
	}
}
