package rwmetrics

import (
	"context"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// stats is what a scrape reports of the namespace's tasks.
type stats struct {
	states    []stateCount
	oldestDue time.Duration // the longest wait past due among the shards
	paused    bool
}

type stateCount struct {
	state string // the label value
	tasks int64
}

// readStats reads q's tasks per state. It is the only code that knows the
// shape of Queue.Stats: if that changes, only this function does.
func readStats(ctx context.Context, q *rediswheel.Queue) (stats, error) {
	st, err := q.Stats(ctx)
	if err != nil {
		return stats{}, err
	}
	t := st.Total
	return stats{
		states: []stateCount{
			{"due", t.Due}, {"scheduled", t.Scheduled}, {"in_flight", t.InFlight},
			{"dead", t.Dead}, {"retained", t.Retained},
		},
		oldestDue: t.OldestDue,
		paused:    st.Paused,
	}, nil
}
