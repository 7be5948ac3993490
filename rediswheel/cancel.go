package rediswheel

import (
	"context"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// A cancelCode is what the cancel script found under the key; lua/cancel.lua
// returns the same numbers.
type cancelCode = int64

const (
	cancelUnknown   cancelCode = 0 // no task under the key
	cancelScheduled cancelCode = 1 // a scheduled or retrying task, cancelled
	cancelInFlight  cancelCode = 2 // in flight: marked, finished as cancelled when its delivery settles
	cancelDead      cancelCode = 3 // a dead task, cancelled
	cancelRetained  cancelCode = 4 // a retained (finished) task, forgotten
)

// Cancel is durable.Store's Cancel.
func (s *Store) Cancel(ctx context.Context, key string, retention time.Duration, maxRetained int) (_ durable.CancelResult, err error) {
	defer unavailable(&err)
	if err := s.resolve(ctx); err != nil {
		return durable.CancelResult{}, err
	}
	shard := s.shard(key)
	// The arguments and the reply are lua/cancel.lua's: change both together.
	args := []any{key, durationMilliCeil(retention), maxRetained}
	v, err := cancelScript.Run(ctx, s.client, s.keys[shard], args...).Int64Slice()
	if err == nil && (len(v) != 2 || v[0] < cancelUnknown || v[0] > cancelRetained) {
		err = fmt.Errorf("unexpected reply %v", v)
	}
	if err != nil {
		return durable.CancelResult{}, fmt.Errorf("rediswheel: cancel %q: %w", key, err)
	}
	return durable.CancelResult{Found: v[0] != cancelUnknown, Partition: shard, RetainedTrimmed: int(v[1])}, nil
}
