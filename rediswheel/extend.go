package rediswheel

import (
	"context"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Extend pushes the leases, all in shard, to lease from now, and returns one
// code each (durable.Store's Extend); durable's ExtendCode numbers are
// lua/extend.lua's. The arguments and the reply are lua/extend.lua's: change
// both together.
func (s *Store) Extend(ctx context.Context, shard int, lease time.Duration, leases []durable.Lease) (_ []durable.ExtendCode, err error) {
	defer unavailable(&err)
	if err := s.resolve(ctx); err != nil {
		return nil, err
	}
	args := make([]any, 0, 1+2*len(leases))
	args = append(args, durationMilliCeil(lease))
	for _, l := range leases {
		args = append(args, l.Key, l.Token)
	}
	v, err := extendScript.Run(ctx, s.client, s.keys[shard], args...).Int64Slice()
	if err == nil && len(v) != len(leases) {
		err = fmt.Errorf("unexpected reply %v", v)
	}
	if err != nil {
		return nil, fmt.Errorf("rediswheel: extend shard %d: %w", shard, err)
	}
	codes := make([]durable.ExtendCode, len(v))
	for i, c := range v {
		if c < int64(durable.ExtendLost) || c > int64(durable.ExtendCancelled) {
			return nil, fmt.Errorf("rediswheel: extend shard %d: unexpected reply %v", shard, v)
		}
		codes[i] = durable.ExtendCode(c)
	}
	return codes, nil
}
