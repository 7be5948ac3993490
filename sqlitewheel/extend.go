package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Extend is durable.Store's Extend, in one write transaction
// (lua/extend.lua): each lease whose token is current moves to nowUp +
// lease and its claim counts as confirmed; a stale token changes nothing
// (ExtendLost).
func (s *Store) Extend(ctx context.Context, partition int, lease time.Duration, leases []durable.Lease) ([]durable.ExtendCode, error) {
	if partition != 0 || lease <= 0 {
		return nil, fmt.Errorf("sqlitewheel: extend: partition %d, lease %v", partition, lease)
	}
	codes := make([]durable.ExtendCode, len(leases))
	err := s.write(ctx, func(tx *sql.Tx, c clock) error {
		for i, l := range leases {
			codes[i] = durable.ExtendLost
			token, ok := parseToken(l.Token)
			if !ok {
				continue
			}
			var cancelled bool
			err := tx.QueryRowContext(ctx, `UPDATE sqlitewheel_task SET at = ?4, unconfirmed = 0
				WHERE namespace = ?1 AND key = ?2 AND place = 'lease' AND token = ?3
				RETURNING cancel_requested`, s.namespace, l.Key, token, c.nowUp+millisCeil(lease)).Scan(&cancelled)
			switch {
			case err == sql.ErrNoRows:
			case err != nil:
				return err
			case cancelled:
				codes[i] = durable.ExtendCancelled
			default:
				codes[i] = durable.ExtendOK
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlitewheel: extend: %w", err)
	}
	return codes, nil
}

// parseToken reads a token Claim made; anything else matches no delivery.
func parseToken(t string) (int64, bool) {
	n, err := strconv.ParseInt(t, 10, 64)
	return n, err == nil && n > 0
}
