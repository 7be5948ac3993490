package rediswheel

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// DeadTask is a task that ran out of attempts or failed permanently.
type DeadTask struct {
	Key      string
	Payload  []byte
	Attempts int       // deliveries it had
	Died     time.Time // by the Redis clock, to the millisecond
	// LastError is the text of its last failure (cut at 1 KiB), or "lease
	// expired" if its last worker vanished.
	LastError string
}

// maxDeadLimit caps the limit Dead passes to lua/dead.lua: Lua formats a
// larger number in exponent notation, which ZRANGE refuses. No shard holds
// that many dead tasks anyway.
const maxDeadLimit = 1<<31 - 1

// Dead lists up to limit dead tasks, oldest first. Each shard keeps at most
// Options.MaxDead of them. It reads limit tasks from every shard, so keep
// limit small (say, up to a few thousand).
func (q *Queue) Dead(ctx context.Context, limit int) ([]DeadTask, error) {
	if limit <= 0 {
		return nil, nil
	}
	var all []DeadTask
	for shard, keys := range q.keys {
		// The arguments and the reply are lua/dead.lua's: change both together.
		v, err := deadScript.Run(ctx, q.client, keys, min(limit, maxDeadLimit)).Slice()
		if err != nil {
			return nil, fmt.Errorf("rediswheel: dead shard %d: %w", shard, err)
		}
		rows, err := decodeStride(v, 5)
		if err != nil {
			return nil, fmt.Errorf("rediswheel: dead shard %d: %w", shard, err)
		}
		for _, row := range rows {
			key, ok1 := row[0].(string)
			diedText, ok2 := row[1].(string)
			lastErr, ok3 := row[2].(string)
			attempts, ok4 := row[3].(int64)
			payload, ok5 := row[4].(string)
			died, err := strconv.ParseFloat(diedText, 64)
			if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || err != nil {
				return nil, fmt.Errorf("rediswheel: dead shard %d: unexpected reply %v", shard, v)
			}
			all = append(all, DeadTask{
				Key: key, Payload: []byte(payload), Attempts: int(attempts),
				Died: time.UnixMilli(int64(died)), LastError: lastErr,
			})
		}
	}
	slices.SortStableFunc(all, func(a, b DeadTask) int { return a.Died.Compare(b.Died) })
	if len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

// Requeue moves the dead task under key back to due at once, with its
// attempts reset, and reports whether key was dead. Its payload and last
// error are kept (the error until it succeeds).
func (q *Queue) Requeue(ctx context.Context, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	res, err := requeueScript.Run(ctx, q.client, q.keys[q.shard(key)], key).Int64Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("unexpected reply %v", res)
	}
	if err != nil {
		return false, fmt.Errorf("rediswheel: requeue %q: %w", key, err)
	}
	if res[0] == 1 {
		q.wake(res[1])
	}
	return res[0] == 1, nil
}
