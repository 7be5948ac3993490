package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// claimed is the reply of one claim call.
type claimed struct {
	now     int64     // Redis time, ms
	next    int64     // earliest due time (none while paused) or lease deadline left, ms; -1 if none
	at      time.Time // local time the reply arrived
	trimmed int       // dead tasks dropped over MaxDead by this call's reaping
	paused  bool      // the shard is paused (Pause): nothing was leased
	tasks   []*delivery
}

// The claim reply (lua/claim.lua): a header of claimHeader values, {now, next,
// dead trimmed, paused}, then claimStride values per task: key, payload,
// attempt, due ms, token, task record.
const (
	claimHeader = 4
	claimStride = 6
)

// maxUnconfirmed bounds the claims in a row of one task whose leases expire
// with no heartbeat or settle ever confirming that a worker got them; such a
// claim may be a lost reply, with no handler run, so its attempt is not
// counted (lua/claim.lua). Past the bound they count again, so a task whose
// every delivery crashes its worker before the first heartbeat (Lease/3)
// still dies, after at most maxUnconfirmed more deliveries than its max
// attempts. Three absorbs a lost reply or two (a read timeout, a failover)
// without letting a crash loop run much longer.
const maxUnconfirmed = 3

// claim leases up to limit due tasks of shard for lease, after reaping expired
// leases there.
func (q *Queue) claim(ctx context.Context, shard, limit int, lease time.Duration) (claimed, error) {
	args := []any{limit, durationMilliCeil(lease), q.opts.MaxAttempts, reapBatch, q.opts.MaxDead,
		q.opts.HistoryLen, q.opts.WorkerID, maxUnconfirmed, durationMilliCeil(q.opts.Retention)}
	v, err := claimScript.Run(ctx, q.client, q.keys[shard], args...).Slice()
	if err != nil {
		return claimed{}, fmt.Errorf("rediswheel: claim shard %d: %w", shard, err)
	}
	c, err := decodeClaim(v, shard)
	if err != nil {
		return claimed{}, fmt.Errorf("rediswheel: claim shard %d: unexpected reply: %w", shard, err)
	}
	return c, nil
}

// decodeClaim reads a claim reply of shard.
func decodeClaim(v []any, shard int) (claimed, error) {
	if len(v) < claimHeader {
		return claimed{}, fmt.Errorf("%d values, want a header of %d", len(v), claimHeader)
	}
	h := row{v: v[:claimHeader]}
	c := claimed{at: time.Now(), now: h.int(0), next: h.int(1), trimmed: int(h.int(2)), paused: h.int(3) == 1}
	rows, err := decodeStride(v[claimHeader:], claimStride)
	if err != nil {
		return claimed{}, err
	}
	for _, rv := range rows {
		r := row{v: rv}
		d := &delivery{shard: shard, task: Task{
			Key: r.str(0), Payload: []byte(r.str(1)), Attempt: int(r.int(2)), Due: time.UnixMilli(r.score(3)),
		}}
		d.token = strconv.FormatInt(r.int(4), 10)
		rec, err := parseRecord(r.str(5))
		if err = errors.Join(h.err, r.err, err); err != nil {
			return claimed{}, err
		}
		d.policy = rec.policy
		d.task.Type = rec.policy.typ
		// A task stored before records existed has no original due time:
		// its current one is the best known.
		d.task.OriginalDue = d.task.Due
		if rec.originalDue > 0 || rec.added > 0 {
			d.task.OriginalDue = time.UnixMilli(rec.originalDue)
		}
		c.tasks = append(c.tasks, d)
	}
	return c, h.err
}
