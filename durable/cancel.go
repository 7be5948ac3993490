package durable

import (
	"context"
	"time"
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
	res, err := q.store.Cancel(ctx, key, retention, q.opts.MaxRetained)
	if err != nil {
		return false, err
	}
	if o := q.opts.Observer; o != nil && res.RetainedTrimmed > 0 {
		o.RetainedTrimmed(TrimEvent{Shard: res.Partition, Tasks: res.RetainedTrimmed})
	}
	return res.Found, nil
}
