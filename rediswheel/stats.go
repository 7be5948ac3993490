package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Stats reads every shard, all in one pipeline (durable.Store's Stats): a
// few commands per shard, whatever it holds. The counts per state come from
// its sorted sets' sizes and the counters #retrying and #cancelled, which the
// scripts keep as tasks move (lua/common.lua). Those counters start at zero
// on a shard written by a rediswheel before them: its tasks already retrying
// or cancelled then count as scheduled and done until they move; each count
// is kept within its set's size, never negative.
func (s *Store) Stats(ctx context.Context) (_ []durable.ShardStats, err error) {
	defer unavailable(&err)
	if err := s.resolve(ctx); err != nil {
		return nil, err
	}
	calls := make([]*shardCall, len(s.keys))
	for i := range calls {
		calls[i] = &shardCall{shard: i}
	}
	s.evalShards(ctx, statsScript, calls)
	out := make([]durable.ShardStats, 0, len(calls))
	var errs []error
	for _, c := range calls {
		v, err := c.cmd.Int64Slice()
		if err == nil && len(v) != 10 {
			err = fmt.Errorf("unexpected reply %v", v)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rediswheel: stats shard %d: %w", c.shard, err))
			continue
		}
		st := durable.ShardStats{
			Shard: c.shard, Due: v[1], Scheduled: v[2], InFlight: v[3], Dead: v[4],
			OldestDue: time.Duration(v[5]) * time.Millisecond, Retained: v[6], Paused: v[7] == 1,
		}
		inDue := st.Due + st.Scheduled
		retrying, cancelled := min(max(v[8], 0), inDue), min(max(v[9], 0), st.Retained)
		st.States = durable.StateCounts{
			Scheduled: inDue - retrying, Retrying: retrying, InFlight: st.InFlight, Dead: st.Dead,
			Done: st.Retained - cancelled, Cancelled: cancelled,
		}
		out = append(out, st)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
