package sqlitewheel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Payload returns the payload stored with the task under key while it is
// scheduled, retrying, in flight or dead; empty for a finished task still
// retained (its payload is dropped when it finishes); nil, nil if the key
// is in no state. It is the store's own read, as rediswheel's Store.Payload,
// not part of durable.Store (whose Get leaves payloads out, so that
// listings stay cheap).
func (s *Store) Payload(ctx context.Context, key string) ([]byte, error) {
	var b []byte
	err := s.r.QueryRowContext(ctx, `SELECT payload FROM sqlitewheel_task WHERE namespace = ? AND key = ?`, s.namespace, key).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sqlitewheel: payload %q: %w", key, classify(err))
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
