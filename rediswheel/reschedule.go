package rediswheel

import (
	"context"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Reschedule is durable.Store's Reschedule; lua/reschedule.lua answers
// durable's RescheduleResult numbers.
func (s *Store) Reschedule(ctx context.Context, key string, at int64) (_ durable.RescheduleResult, err error) {
	defer unavailable(&err)
	if err := s.resolve(ctx); err != nil {
		return 0, err
	}
	n, err := rescheduleScript.Run(ctx, s.client, s.keys[s.shard(key)], key, at).Int64()
	if err == nil && (n < int64(durable.RescheduleMissing) || n > int64(durable.RescheduleInFlight)) {
		err = fmt.Errorf("unexpected reply %d", n)
	}
	if err != nil {
		return 0, fmt.Errorf("rediswheel: reschedule %q: %w", key, err)
	}
	return durable.RescheduleResult(n), nil
}
