package rediswheel

import (
	"context"
	"fmt"
	"time"
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

// Cancel removes the task under key and reports whether there was one. It is
// immediate and final: a scheduled or dead task is cancelled at once. A task
// in flight is marked so that whatever its handler returns it is finished as
// cancelled, never retried; its handler's context is cancelled at the next
// lease heartbeat. Until that delivery ends, the key still counts as existing
// for Add.
//
// Without Options.Retention a cancelled task is deleted with no tombstone
// left behind, so a later Add of the key is a new task. With Retention it is
// retained as cancelled (Get shows it, Add of the key is a no-op) until its
// retention ends. Cancel of a retained task, done or cancelled, forgets it at
// once and reports true: the way to end a uniqueness window early.
func (q *Queue) Cancel(ctx context.Context, key string) (bool, error) {
	return q.cancel(ctx, key, q.opts.Retention)
}

// cancel is Cancel retaining a cancelled task for retention (0: forgotten at
// once, as a periodic time that never ran is, so that it can be added again).
func (q *Queue) cancel(ctx context.Context, key string, retention time.Duration) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	// The arguments and the reply are lua/cancel.lua's: change both together.
	args := []any{key, durationMilliCeil(retention), q.opts.MaxRetained}
	v, err := cancelScript.Run(ctx, q.client, q.keys[q.shard(key)], args...).Int64Slice()
	if err == nil && (len(v) != 2 || v[0] < cancelUnknown || v[0] > cancelRetained) {
		err = fmt.Errorf("unexpected reply %v", v)
	}
	if err != nil {
		return false, fmt.Errorf("rediswheel: cancel %q: %w", key, err)
	}
	if o := q.opts.Observer; o != nil && v[1] > 0 {
		o.RetainedTrimmed(TrimEvent{Shard: q.shard(key), Tasks: int(v[1])})
	}
	return v[0] != cancelUnknown, nil
}
