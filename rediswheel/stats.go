package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Stats reads every shard, all in one pipeline (durable.Store's Stats).
func (s *Store) Stats(ctx context.Context) ([]durable.ShardStats, error) {
	calls := make([]*shardCall, len(s.keys))
	for i := range calls {
		calls[i] = &shardCall{shard: i}
	}
	s.evalShards(ctx, statsScript, calls)
	out := make([]durable.ShardStats, 0, len(calls))
	var errs []error
	for _, c := range calls {
		v, err := c.cmd.Int64Slice()
		if err == nil && len(v) != 8 {
			err = fmt.Errorf("unexpected reply %v", v)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rediswheel: stats shard %d: %w", c.shard, err))
			continue
		}
		out = append(out, durable.ShardStats{
			Shard: c.shard, Due: v[1], Scheduled: v[2], InFlight: v[3], Dead: v[4],
			OldestDue: time.Duration(v[5]) * time.Millisecond, Retained: v[6], Paused: v[7] == 1,
		})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
