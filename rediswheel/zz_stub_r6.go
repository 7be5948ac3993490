package rediswheel

import (
	"context"
	"errors"
	"time"
)

// addTask stands for R1's Add with task options until it lands. At merge,
// delete this file and replace the two calls p.q.addTask(ctx, key, payload,
// at, opts) in periodic.go by p.q.Add(ctx, key, payload, at, opts...).
func (q *Queue) addTask(ctx context.Context, key string, payload []byte, at time.Time, opts []TaskOption) (bool, error) {
	if len(opts) > 0 {
		return false, errors.New("rediswheel: Periodic task options need Add with options (R1)")
	}
	return q.Add(ctx, key, payload, at)
}
