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

// Dead lists up to limit dead tasks, oldest first. Each shard keeps at most
// Options.MaxDead of them. It reads limit tasks from every shard, so keep
// limit small (say, up to a few thousand).
func (q *Queue) Dead(ctx context.Context, limit int) ([]DeadTask, error) {
	if limit <= 0 {
		return nil, nil
	}
	var all []DeadTask
	for shard, keys := range q.keys {
		v, err := deadScript.Run(ctx, q.client, keys, limit).Slice()
		if err != nil {
			return nil, fmt.Errorf("rediswheel: dead shard %d: %w", shard, err)
		}
		if len(v)%5 != 0 {
			return nil, fmt.Errorf("rediswheel: dead shard %d: unexpected reply %v", shard, v)
		}
		for i := 0; i < len(v); i += 5 {
			key, ok1 := v[i].(string)
			diedText, ok2 := v[i+1].(string)
			lastErr, ok3 := v[i+2].(string)
			attempts, ok4 := v[i+3].(int64)
			payload, ok5 := v[i+4].(string)
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
