package pgwheel

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Extend is durable.Store's Extend. A token that is not one of pgwheel's
// (a decimal) is no current token: ExtendLost.
func (s *Store) Extend(ctx context.Context, partition int, lease time.Duration, leases []durable.Lease) ([]durable.ExtendCode, error) {
	ls := make([]held, 0, len(leases))
	for _, l := range leases {
		if tok, ok := parseToken(l.Token); ok {
			ls = append(ls, held{Key: l.Key, Token: tok})
		}
	}
	codes, err := s.extend(ctx, lease, ls)
	if err != nil {
		return nil, unavailable(err)
	}
	out := make([]durable.ExtendCode, len(leases))
	j := 0
	for i, l := range leases {
		if _, ok := parseToken(l.Token); ok {
			out[i] = codes[j]
			j++
		} // else ExtendLost, the zero code
	}
	return out, nil
}

// parseToken reads a fencing token as Claim wrote it.
func parseToken(s string) (int64, bool) {
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// held is one delivery a worker holds.
type held struct {
	Key   string
	Token int64
}

// extend pushes each lease the caller still owns (its token is current) to
// the database clock + lease, rounded up, in one statement, and marks the
// claim confirmed (see claimParams.UnconfirmedBound). A stale token changes
// nothing.
func (s *Store) extend(ctx context.Context, lease time.Duration, ls []held) ([]durable.ExtendCode, error) {
	if lease <= 0 {
		return nil, fmt.Errorf("%w: extend: lease %v", ErrArgument, lease)
	}
	keys := make([]string, len(ls))
	tokens := make([]int64, len(ls))
	for i, l := range ls {
		keys[i], tokens[i] = l.Key, l.Token
	}
	rows, err := s.runPool().Query(ctx, `WITH c AS (SELECT * FROM pgwheel_clock())
		UPDATE pgwheel_task t SET at = c.now_up + $4::bigint * interval '1 millisecond', unconfirmed = 0
		FROM c, unnest($2::text[], $3::bigint[]) AS l(key, token)
		WHERE t.namespace = $1 AND t.key = l.key AND `+placeOnly+` = 'lease' AND t.token = l.token
		RETURNING t.key, t.token, t.cancel_requested`, s.namespace, keys, tokens, millisCeil(lease))
	if err != nil {
		return nil, fmt.Errorf("pgwheel: extend: %w", err)
	}
	defer rows.Close()
	got := make(map[held]durable.ExtendCode, len(ls))
	for rows.Next() {
		var l held
		var cancelled bool
		if err := rows.Scan(&l.Key, &l.Token, &cancelled); err != nil {
			return nil, fmt.Errorf("pgwheel: extend: %w", err)
		}
		got[l] = durable.ExtendOK
		if cancelled {
			got[l] = durable.ExtendCancelled
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgwheel: extend: %w", err)
	}
	out := make([]durable.ExtendCode, len(ls))
	for i, l := range ls {
		out[i] = got[l] // durable.ExtendLost when absent
	}
	return out, nil
}
