package pgwheel

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Payload returns the payload stored with the task under key while it is
// scheduled, retrying, in flight or dead; empty for a finished task still
// retained (its payload is dropped when it finishes); nil, nil if the key
// is in no state. It is the store's own read, as rediswheel's Store.Payload,
// not part of durable.Store (whose Get leaves payloads out, so that
// listings stay cheap).
func (s *Store) Payload(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT payload FROM pgwheel_task WHERE namespace = $1 AND key = $2`, s.namespace, key).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgwheel: payload %q: %w", key, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
