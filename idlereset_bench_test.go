package timingwheel

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkIdleReset measures a server's idle timeouts: conns timers of 2 s,
// each Reset to 2 s once a second in turn, as each connection reads (the
// fake clock moves 1 s/conns before every Reset, so the poller advances the
// wheel as in a server, on its own goroutine). Every Reset moves its
// bucket's earliest timer later, the case retarget is for. It reports the
// poller's wake-ups per Reset beside ns/op: a bucket that kept a stale,
// early expiration costs one.
func BenchmarkIdleReset(b *testing.B) {
	for _, conns := range []int{30, 300, 3000} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			clock := NewFakeClock(time.Unix(1_000_000, 0))
			tw, err := New(time.Millisecond, DefaultWheelSize, WithClock(clock))
			if err != nil {
				b.Fatal(err)
			}
			defer tw.Stop()
			step := time.Second / time.Duration(conns)
			ts := make([]*Timer, conns)
			for i := range ts {
				ts[i] = tw.AfterFunc(2*time.Second, func() { panic("an idle timeout fired: a Reset was late") })
				clock.Advance(step)
			}
			wakeups := tw.Stats().Wakeups
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				clock.Advance(step)
				if !ts[i%conns].Reset(2 * time.Second) {
					b.Fatal("Reset of a pending idle timeout returned false")
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(tw.Stats().Wakeups-wakeups)/float64(b.N), "wakeups/op")
		})
	}
}
