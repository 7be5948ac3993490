package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Dead is durable.Store's Dead (lua/dead.lua): up to limit dead tasks,
// oldest first.
func (s *Store) Dead(ctx context.Context, limit int) ([]durable.DeadTask, error) {
	var out []durable.DeadTask
	err := s.read(ctx, func(tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, `SELECT key, at, last_error, attempts, payload FROM sqlitewheel_task
			WHERE namespace = ? AND place = 'dead' ORDER BY at, key LIMIT ?`, s.namespace, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var d durable.DeadTask
			var died int64
			if err := rows.Scan(&d.Key, &died, &d.LastError, &d.Attempts, &d.Payload); err != nil {
				return err
			}
			d.Died = time.UnixMilli(died)
			out = append(out, d)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("sqlitewheel: dead: %w", err)
	}
	return out, nil
}
