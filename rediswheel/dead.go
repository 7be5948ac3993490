package rediswheel

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// maxDeadLimit caps the limit Dead passes to lua/dead.lua: Lua formats a
// larger number in exponent notation, which ZRANGE refuses. No shard holds
// that many dead tasks anyway.
const maxDeadLimit = 1<<31 - 1

// Dead reads up to limit dead tasks of every shard, oldest first in each,
// one script call per shard (durable.Store's Dead).
func (s *Store) Dead(ctx context.Context, limit int) (_ []durable.DeadTask, err error) {
	defer unavailable(&err)
	if err := s.resolve(ctx); err != nil {
		return nil, err
	}
	var all []durable.DeadTask
	for shard, keys := range s.keys {
		// The arguments and the reply are lua/dead.lua's: change both together.
		v, err := deadScript.Run(ctx, s.client, keys, min(limit, maxDeadLimit)).Slice()
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
			all = append(all, durable.DeadTask{
				Key: key, Payload: []byte(payload), Attempts: int(attempts),
				Died: time.UnixMilli(int64(died)), LastError: lastErr,
			})
		}
	}
	return all, nil
}

// Requeue is durable.Store's Requeue.
func (s *Store) Requeue(ctx context.Context, key string) (_ bool, _ int64, err error) {
	defer unavailable(&err)
	if err := s.resolve(ctx); err != nil {
		return false, 0, err
	}
	res, err := requeueScript.Run(ctx, s.client, s.keys[s.shard(key)], key).Int64Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("unexpected reply %v", res)
	}
	if err != nil {
		return false, 0, fmt.Errorf("rediswheel: requeue %q: %w", key, err)
	}
	return res[0] == 1, res[1], nil
}
