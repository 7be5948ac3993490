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
}

type stateCount struct {
	state string // the label value
	tasks int64
}

// readStats reads q's tasks per state. It is the only code that knows the
// shape of Queue.Stats: if that changes, only this function does.
func readStats(ctx context.Context, q *rediswheel.Queue) (stats, error) {
	shards, err := q.Stats(ctx)
	if err != nil {
		return stats{}, err
	}
	var t rediswheel.ShardStats
	var s stats
	for _, x := range shards {
		t.Due += x.Due
		t.Scheduled += x.Scheduled
		t.InFlight += x.InFlight
		t.Dead += x.Dead
		s.oldestDue = max(s.oldestDue, x.OldestDue)
	}
	s.states = []stateCount{{"due", t.Due}, {"scheduled", t.Scheduled}, {"in_flight", t.InFlight}, {"dead", t.Dead}}
	return s, nil
}
