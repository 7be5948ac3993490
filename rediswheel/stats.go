package rediswheel

import (
	"context"
	"fmt"
	"time"
)

// ShardStats is a snapshot of one shard, taken atomically by the Redis clock.
type ShardStats struct {
	Shard     int
	Due       int64 // due now and waiting for a worker
	Scheduled int64 // due later, including waiting retries
	InFlight  int64 // claimed, with a handler running (or a worker that died)
	Dead      int64
	// OldestDue is how long the oldest due task has waited past its due time:
	// the lateness a new task would see. Zero when nothing is due.
	OldestDue time.Duration
}

// Stats returns one snapshot per shard, in shard order. The shards are read
// one after the other, so the totals are not one atomic snapshot.
func (q *Queue) Stats(ctx context.Context) ([]ShardStats, error) {
	out := make([]ShardStats, 0, len(q.keys))
	for shard, keys := range q.keys {
		v, err := statsScript.Run(ctx, q.client, keys).Int64Slice()
		if err == nil && len(v) != 6 {
			err = fmt.Errorf("unexpected reply %v", v)
		}
		if err != nil {
			return nil, fmt.Errorf("rediswheel: stats shard %d: %w", shard, err)
		}
		out = append(out, ShardStats{
			Shard: shard, Due: v[1], Scheduled: v[2], InFlight: v[3], Dead: v[4],
			OldestDue: time.Duration(v[5]) * time.Millisecond,
		})
	}
	return out, nil
}
