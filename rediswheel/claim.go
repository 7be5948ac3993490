package rediswheel

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// claimed is the reply of one claim call.
type claimed struct {
	now   int64     // Redis time, ms
	next  int64     // earliest due time or lease deadline left, ms; -1 if none
	at    time.Time // local time the reply arrived
	tasks []*delivery
}

// claim leases up to limit due tasks of shard for lease, after reaping expired
// leases there.
func (q *Queue) claim(ctx context.Context, shard, limit int, lease time.Duration) (claimed, error) {
	args := []any{limit, lease.Milliseconds(), q.opts.MaxAttempts, reapBatch, q.opts.MaxDead}
	v, err := claimScript.Run(ctx, q.client, q.keys[shard], args...).Slice()
	if err != nil {
		return claimed{}, fmt.Errorf("rediswheel: claim shard %d: %w", shard, err)
	}
	c := claimed{at: time.Now()}
	bad := func() (claimed, error) {
		return claimed{}, fmt.Errorf("rediswheel: claim shard %d: unexpected reply %v", shard, v)
	}
	if len(v) < 2 || (len(v)-2)%5 != 0 {
		return bad()
	}
	var ok1, ok2 bool
	c.now, ok1 = v[0].(int64)
	c.next, ok2 = v[1].(int64)
	if !ok1 || !ok2 {
		return bad()
	}
	for i := 2; i < len(v); i += 5 {
		key, ok1 := v[i].(string)
		payload, ok2 := v[i+1].(string)
		attempt, ok3 := v[i+2].(int64)
		dueText, ok4 := v[i+3].(string)
		token, ok5 := v[i+4].(int64)
		due, err := strconv.ParseFloat(dueText, 64)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || err != nil {
			return bad()
		}
		c.tasks = append(c.tasks, &delivery{
			shard: shard,
			token: strconv.FormatInt(token, 10),
			task:  Task{Key: key, Payload: []byte(payload), Attempt: int(attempt), Due: time.UnixMilli(int64(due))},
		})
	}
	return c, nil
}
