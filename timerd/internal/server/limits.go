package server

import (
	"fmt"
	"maps"
	"slices"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
)

// newFlow is the workers' flow control per callback origin (README.md,
// "Flow control"): durable.Flow keyed by durable.HTTPOrigin, with the
// configuration's default, per-origin limits and breaker. /v1/limits reads
// and changes the same Flow.
func newFlow(c config.Flow) (*durable.Flow, error) {
	f, err := durable.NewFlow(durable.FlowOptions{Key: durable.HTTPOrigin, Default: c.Default, Breaker: c.Breaker})
	if err != nil {
		return nil, fmt.Errorf("server: flow control: %w", err)
	}
	for o, l := range c.Origins {
		if err := f.SetLimit(o, l); err != nil {
			return nil, fmt.Errorf("server: flow control: %w", err)
		}
	}
	return f, nil
}

// flowLog is the flow control in effect, for the start-up line.
func flowLog(f *durable.Flow) []any {
	b := f.Breaker()
	limits := f.Limits()
	origins := make([]string, 0, len(limits))
	for _, o := range slices.Sorted(maps.Keys(limits)) {
		origins = append(origins, o+"="+limits[o].String())
	}
	return []any{"origin_limit", f.Default().String(), "origin_limits", origins,
		"breaker_failures", b.Failures, "breaker_cooldown", b.CoolDown.String(), "breaker_max_cooldown", b.MaxCoolDown.String()}
}
