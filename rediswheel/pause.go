package rediswheel

import (
	"context"
	"errors"
	"fmt"
)

// pauseOp is the argument of lua/pause.lua.
type pauseOp string

const (
	opPause  pauseOp = "pause"
	opResume pauseOp = "resume"
)

// Pause sets or clears the pause flag of every shard, one pipeline
// (durable.Store's Pause).
func (s *Store) Pause(ctx context.Context, paused bool) (err error) {
	defer unavailable(&err)
	if err := s.resolve(ctx); err != nil {
		return err
	}
	op := opResume
	if paused {
		op = opPause
	}
	calls := make([]*shardCall, len(s.keys))
	for i := range calls {
		calls[i] = &shardCall{shard: i, args: []any{string(op)}}
	}
	s.evalShards(ctx, pauseScript, calls)
	var errs []error
	for _, c := range calls {
		if err := c.cmd.Err(); err != nil {
			errs = append(errs, fmt.Errorf("rediswheel: %s shard %d: %w", op, c.shard, err))
		}
	}
	return errors.Join(errs...)
}
