package rediswheel

import (
	"context"
	"fmt"
)

// A cancelCode is what the cancel script found under the key; lua/cancel.lua
// returns the same numbers.
type cancelCode = int64

const (
	cancelUnknown   cancelCode = 0 // no task under the key
	cancelScheduled cancelCode = 1 // a scheduled or retrying task, removed
	cancelInFlight  cancelCode = 2 // in flight: marked, dropped when its delivery settles
	cancelDead      cancelCode = 3 // a dead task, removed
)

// Cancel removes the task under key and reports whether there was one. It is
// immediate and final: a scheduled or dead task is deleted at once, with no
// tombstone left behind, so a later Add of the key is a new task. A task in
// flight is marked so that whatever its handler returns it is dropped, never
// retried; its handler's context is cancelled at the next lease heartbeat.
// Until that delivery ends, the key still counts as existing for Add.
func (q *Queue) Cancel(ctx context.Context, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	// The arguments and the reply are lua/cancel.lua's: change both together.
	code, err := cancelScript.Run(ctx, q.client, q.keys[q.shard(key)], key).Int64()
	if err == nil && (code < cancelUnknown || code > cancelDead) {
		err = fmt.Errorf("unexpected reply %d", code)
	}
	if err != nil {
		return false, fmt.Errorf("rediswheel: cancel %q: %w", key, err)
	}
	return code != cancelUnknown, nil
}
