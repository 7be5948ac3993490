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

// Pause stops the namespace's deliveries: from the moment each shard's flag
// is set, every Run's claims on that shard lease nothing (they still return
// tasks of dead workers to due). Handlers already running go on and settle
// as usual. Adds, Replaces, Cancels, Reschedules and Requeues go on too, so
// a backlog builds up, visible in Stats. Pause is stored in Redis and holds
// for every process on the namespace until Resume; it does not end Runs.
//
// It sets a flag on every shard, one pipeline; an error means some shards may
// be paused and others not (Stats.Paused reports any): call it again.
func (q *Queue) Pause(ctx context.Context) error {
	return q.pause(ctx, opPause)
}

// Resume lets claims lease tasks again on every shard. This Queue's idle
// Runs claim at once; other processes' within their poll interval (at most
// a second). Resuming a namespace that is not paused does nothing.
func (q *Queue) Resume(ctx context.Context) error {
	return q.pause(ctx, opResume)
}

func (q *Queue) pause(ctx context.Context, op pauseOp) error {
	calls := make([]*shardCall, len(q.keys))
	for i := range calls {
		calls[i] = &shardCall{shard: i, args: []any{string(op)}}
	}
	q.evalShards(ctx, pauseScript, calls)
	var errs []error
	for _, c := range calls {
		if err := c.cmd.Err(); err != nil {
			errs = append(errs, fmt.Errorf("rediswheel: %s shard %d: %w", op, c.shard, err))
		}
	}
	if op == opResume && len(errs) == 0 {
		q.wake(0) // a Run may sleep up to maxSleep: let it claim now
	}
	return errors.Join(errs...)
}
