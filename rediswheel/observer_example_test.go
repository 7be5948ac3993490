package rediswheel_test

import (
	"log/slog"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// slowHandlers logs each handler that ran longer than limit. It embeds
// NoopObserver for the events it ignores.
type slowHandlers struct {
	rediswheel.NoopObserver
	limit time.Duration
}

func (s slowHandlers) HandlerFinished(e rediswheel.FinishEvent) {
	if e.Duration > s.limit {
		slog.Warn("slow handler", "key", e.Task.Key, "attempt", e.Task.Attempt, "took", e.Duration, "outcome", e.Outcome)
	}
}

// An Observer that watches one kind of event; module durable/durablemetrics
// has one for Prometheus.
func ExampleObserver() {
	opts := rediswheel.Options{Namespace: "orders", Observer: slowHandlers{limit: 10 * time.Second}}
	_ = opts // pass to rediswheel.New
}
