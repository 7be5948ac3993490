package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// The claim reply (lua/claim.lua): a header of claimHeader values, {now, next,
// dead trimmed, paused}, then claimStride values per task: key, payload,
// attempt, due ms, token, task record, postponements.
const (
	claimHeader = 4
	claimStride = 7
)

// Claim leases up to limit due tasks of shard for lease, after reaping
// expired leases there (durable.Store's Claim). An error that retrying will
// not heal wraps durable.ErrUnrecoverable.
func (s *Store) Claim(ctx context.Context, shard, limit int, lease time.Duration, lim durable.Limits) (_ durable.Claimed, err error) {
	defer unavailable(&err)
	if err := s.resolve(ctx); err != nil {
		return durable.Claimed{}, err
	}
	args := []any{limit, durationMilliCeil(lease), lim.MaxAttempts, lim.ReapBatch, lim.MaxDead,
		lim.HistoryLen, lim.WorkerID, lim.MaxUnconfirmed, durationMilliCeil(lim.Retention)}
	v, err := claimScript.Run(ctx, s.client, s.keys[shard], args...).Slice()
	if err != nil {
		if unrecoverable(err) {
			return durable.Claimed{}, fmt.Errorf("%w: rediswheel: claim shard %d: %w", durable.ErrUnrecoverable, shard, err)
		}
		return durable.Claimed{}, fmt.Errorf("rediswheel: claim shard %d: %w", shard, err)
	}
	c, err := decodeClaim(v)
	if err != nil {
		return durable.Claimed{}, fmt.Errorf("rediswheel: claim shard %d: unexpected reply: %w", shard, err)
	}
	return c, nil
}

// decodeClaim reads a claim reply.
func decodeClaim(v []any) (durable.Claimed, error) {
	if len(v) < claimHeader {
		return durable.Claimed{}, fmt.Errorf("%d values, want a header of %d", len(v), claimHeader)
	}
	h := row{v: v[:claimHeader]}
	c := durable.Claimed{Now: h.int(0), Next: h.int(1), DeadTrimmed: int(h.int(2)), Paused: h.int(3) == 1}
	rows, err := decodeStride(v[claimHeader:], claimStride)
	if err != nil {
		return durable.Claimed{}, err
	}
	for _, rv := range rows {
		r := row{v: rv}
		t := durable.ClaimedTask{
			Key: r.str(0), Payload: []byte(r.str(1)), Attempt: int(r.int(2)), Due: r.score(3),
			Token: strconv.FormatInt(r.int(4), 10), Postponements: int(r.int(6)),
		}
		rec, err := parseRecord(r.str(5))
		if err = errors.Join(h.err, r.err, err); err != nil {
			return durable.Claimed{}, err
		}
		t.Policy = rec.policy
		// A task stored before records existed has no original due time:
		// its current one is the best known.
		t.OriginalDue = t.Due
		if rec.originalDue > 0 || rec.added > 0 {
			t.OriginalDue = rec.originalDue
		}
		c.Tasks = append(c.Tasks, t)
	}
	return c, h.err
}
