package pgwheel

import (
	"context"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Dead is durable.Store's Dead: up to limit dead tasks, oldest first, with
// their payloads (a dead task keeps it for Requeue).
func (s *Store) Dead(ctx context.Context, limit int) (_ []durable.DeadTask, err error) {
	defer func() { err = unavailable(err) }()
	if limit < 0 {
		return nil, fmt.Errorf("%w: dead: limit %d", ErrArgument, limit)
	}
	rows, err := s.pool.Query(ctx, `SELECT key, payload, attempts, at, last_error FROM pgwheel_task
		WHERE namespace = $1 AND place = 'dead' ORDER BY at, key LIMIT $2`, s.namespace, limit)
	if err != nil {
		return nil, schemaMissing(fmt.Errorf("pgwheel: dead: %w", err))
	}
	defer rows.Close()
	var out []durable.DeadTask
	for rows.Next() {
		var d durable.DeadTask
		var died time.Time
		if err := rows.Scan(&d.Key, &d.Payload, &d.Attempts, &died, &d.LastError); err != nil {
			return nil, schemaMissing(fmt.Errorf("pgwheel: dead: %w", err))
		}
		d.Died = died.UTC()
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, schemaMissing(fmt.Errorf("pgwheel: dead: %w", err))
	}
	return out, nil
}
