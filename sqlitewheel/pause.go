package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"
)

// Pause is durable.Store's Pause (lua/pause.lua): while the namespace is
// paused, Claim still reaps expired leases but leases nothing.
func (s *Store) Pause(ctx context.Context, paused bool) error {
	err := s.write(ctx, func(tx *sql.Tx, _ clock) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sqlitewheel_queue (namespace, paused) VALUES (?, ?)
			ON CONFLICT (namespace) DO UPDATE SET paused = excluded.paused`, s.namespace, paused)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlitewheel: pause: %w", err)
	}
	return nil
}
