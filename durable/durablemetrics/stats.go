package durablemetrics

import (
	"context"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// stats is what a scrape reports of the namespace's tasks.
type stats struct {
	states    []stateCount
	due       int64
	oldestDue time.Duration // the longest wait past due among the partitions
	paused    bool
}

type stateCount struct {
	state string // the label value
	tasks int64
}

// states are durable's six, in the order of its doc, with their label
// values.
var states = []struct {
	state durable.State
	label string
}{
	{durable.StateScheduled, "scheduled"}, {durable.StateRetrying, "retrying"}, {durable.StateInFlight, "in_flight"},
	{durable.StateDead, "dead"}, {durable.StateDone, "done"}, {durable.StateCancelled, "cancelled"},
}

// readStats reads s's tasks per state. It is the only code that knows the
// shape of durable.Stats: if that changes, only this function does.
func readStats(ctx context.Context, s StatsSource) (stats, error) {
	st, err := s.Stats(ctx)
	if err != nil {
		return stats{}, err
	}
	t := st.Total
	out := stats{due: t.Due, oldestDue: t.OldestDue, paused: st.Paused}
	for _, s := range states {
		out.states = append(out.states, stateCount{s.label, t.States.Of(s.state)})
	}
	return out, nil
}
