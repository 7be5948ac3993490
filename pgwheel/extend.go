package pgwheel

import (
	"context"
	"fmt"
	"time"
)

// ExtendCode is what Extend did with one lease; the numbers are
// rediswheel's extendCode.
type ExtendCode int

const (
	ExtendLost      ExtendCode = 0 // the token is not current: the worker no longer owns the task
	ExtendOK        ExtendCode = 1 // the lease now ends Lease after the database clock (rounded up)
	ExtendCancelled ExtendCode = 2 // extended, but Cancel marked it: stop the handler
)

// Lease is one delivery a worker holds.
type Lease struct {
	Key   string
	Token int64
}

// Extend pushes each lease the caller still owns (its token is current) to
// the database clock + lease, rounded up, in one statement, and marks the
// claim confirmed (see ClaimParams.UnconfirmedBound). A stale token changes
// nothing.
func (s *Store) Extend(ctx context.Context, lease time.Duration, ls []Lease) ([]ExtendCode, error) {
	if lease <= 0 {
		return nil, fmt.Errorf("%w: extend: lease %v", ErrArgument, lease)
	}
	keys := make([]string, len(ls))
	tokens := make([]int64, len(ls))
	for i, l := range ls {
		keys[i], tokens[i] = l.Key, l.Token
	}
	rows, err := s.pool.Query(ctx, `WITH c AS (SELECT * FROM pgwheel_clock())
		UPDATE pgwheel_task t SET at = c.now_up + $4::bigint * interval '1 millisecond', unconfirmed = 0
		FROM c, unnest($2::text[], $3::bigint[]) AS l(key, token)
		WHERE t.namespace = $1 AND t.key = l.key AND t.place = 'lease' AND t.token = l.token
		RETURNING t.key, t.token, t.cancel_requested`, s.namespace, keys, tokens, millisCeil(lease))
	if err != nil {
		return nil, fmt.Errorf("pgwheel: extend: %w", err)
	}
	defer rows.Close()
	got := make(map[Lease]ExtendCode, len(ls))
	for rows.Next() {
		var l Lease
		var cancelled bool
		if err := rows.Scan(&l.Key, &l.Token, &cancelled); err != nil {
			return nil, fmt.Errorf("pgwheel: extend: %w", err)
		}
		got[l] = ExtendOK
		if cancelled {
			got[l] = ExtendCancelled
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgwheel: extend: %w", err)
	}
	out := make([]ExtendCode, len(ls))
	for i, l := range ls {
		out[i] = got[l] // ExtendLost when absent
	}
	return out, nil
}
