package durable

import (
	"context"
	"time"
)

// ShardStats is a snapshot of one partition of the store (on Redis a shard;
// a SQL store has one), taken atomically by the store's clock, or, as
// Stats.Total, the sum of all of them. The type keeps rediswheel's name.
//
// States counts the tasks by State, as Get and List tell them. The fields
// before it count by place, for the lateness: Due and Scheduled split the
// scheduled and retrying tasks by whether they are due yet (so Scheduled is
// not States.Scheduled), and Retained is States.Done plus States.Cancelled.
type ShardStats struct {
	Shard     int   // the partition, from 0; -1 in Stats.Total
	Due       int64 // due now and waiting for a worker
	Scheduled int64 // due later, including waiting retries
	InFlight  int64 // claimed, with a handler running (or a worker that died)
	Dead      int64
	Retained  int64 // finished (done or cancelled) and kept for Options.Retention
	// States counts the tasks per State (each store's Stats says how it
	// keeps the counts bounded work).
	States StateCounts
	// OldestDue is how long the oldest due task has waited past its due time:
	// the lateness a new task would see. Zero when nothing is due. In
	// Stats.Total, the largest of the partitions'.
	OldestDue time.Duration
	// Paused: Pause has stopped claims on this partition (in Stats.Total: on
	// any partition).
	Paused bool
}

// StateCounts counts tasks per State: each task in exactly one.
type StateCounts struct {
	Scheduled, Retrying, InFlight, Dead, Done, Cancelled int64
}

// Of returns the count of state s, 0 for an unknown state.
func (c StateCounts) Of(s State) int64 {
	switch s {
	case StateScheduled:
		return c.Scheduled
	case StateRetrying:
		return c.Retrying
	case StateInFlight:
		return c.InFlight
	case StateDead:
		return c.Dead
	case StateDone:
		return c.Done
	case StateCancelled:
		return c.Cancelled
	}
	return 0
}

func (c *StateCounts) add(o StateCounts) {
	c.Scheduled += o.Scheduled
	c.Retrying += o.Retrying
	c.InFlight += o.InFlight
	c.Dead += o.Dead
	c.Done += o.Done
	c.Cancelled += o.Cancelled
}

// Stats is a snapshot of a namespace.
type Stats struct {
	Total  ShardStats   // the sums over Shards
	Shards []ShardStats // in partition order
	// Paused reports that claims are stopped on at least one partition: Pause
	// was called, or a Pause or Resume failed part way (call Resume again).
	Paused bool
}

// Stats reads every partition (on Redis, all in one pipeline). Each
// partition's figures are one atomic snapshot; the partitions are read one
// after the other, so the totals are not.
func (q *Queue) Stats(ctx context.Context) (Stats, error) {
	shards, err := q.store.Stats(ctx)
	if err != nil {
		return Stats{}, err
	}
	st := Stats{Total: ShardStats{Shard: -1}, Shards: make([]ShardStats, 0, len(shards))}
	for _, s := range shards {
		st.Shards = append(st.Shards, s)
		t := &st.Total
		t.Due += s.Due
		t.Scheduled += s.Scheduled
		t.InFlight += s.InFlight
		t.Dead += s.Dead
		t.Retained += s.Retained
		t.States.add(s.States)
		t.OldestDue = max(t.OldestDue, s.OldestDue)
		t.Paused = t.Paused || s.Paused
	}
	st.Paused = st.Total.Paused
	return st, nil
}
