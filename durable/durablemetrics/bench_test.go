package durablemetrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/go-timingwheel/timingwheel/durable"
)

// BenchmarkObserverPerDelivery measures what the Metrics add to one
// delivery: its start, its handler's return and its share of a settle of
// 64 tasks, from every CPU at once. It fails unless every start was counted.
func BenchmarkObserverPerDelivery(b *testing.B) {
	m := New("bench")
	o := m.Observer()
	task := durable.Task{Key: "k", Attempt: 1}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			o.DeliveryStarted(durable.StartEvent{Task: task, Lateness: 3 * time.Millisecond})
			o.HandlerFinished(durable.FinishEvent{Task: task, Outcome: "done", Duration: 20 * time.Millisecond})
			if i++; i%64 == 0 {
				o.Settled(durable.SettleEvent{Tasks: 64, Done: 64, Duration: time.Millisecond})
			}
		}
	})
	b.StopTimer()
	if n := testutil.ToFloat64(m.fired); n != float64(b.N) {
		b.Fatalf("counted %v starts of %d", n, b.N)
	}
}
