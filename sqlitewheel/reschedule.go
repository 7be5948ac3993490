package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Reschedule is durable.Store's Reschedule (lua/reschedule.lua): a
// scheduled or retrying task moves to at; its payload, attempts, last error
// and original due time (Add's or Replace's) stay.
func (s *Store) Reschedule(ctx context.Context, key string, at int64) (durable.RescheduleResult, error) {
	res := durable.RescheduleMissing
	err := s.write(ctx, func(tx *sql.Tx, _ clock) error {
		var place string
		err := tx.QueryRowContext(ctx, `SELECT place FROM sqlitewheel_task WHERE namespace = ? AND key = ?`,
			s.namespace, key).Scan(&place)
		switch {
		case err == sql.ErrNoRows:
			res, err = durable.RescheduleMissing, nil
		case err != nil:
			return err
		case place == "lease":
			res = durable.RescheduleInFlight
		case place == "due":
			_, err = tx.ExecContext(ctx, `UPDATE sqlitewheel_task SET at = ?3
				WHERE namespace = ?1 AND key = ?2`, s.namespace, key, at)
			res = durable.RescheduleMoved
		default:
			res = durable.RescheduleMissing
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlitewheel: reschedule %q: %w", key, err)
	}
	return res, nil
}

// Requeue is durable.Store's Requeue (lua/requeue.lua): a dead task goes
// back to due now, with fresh attempts and postponements; its last error and
// log stay.
func (s *Store) Requeue(ctx context.Context, key string) (requeued bool, due int64, err error) {
	err = s.write(ctx, func(tx *sql.Tx, c clock) error {
		due = c.now
		res, err := tx.ExecContext(ctx, `UPDATE sqlitewheel_task SET place = 'due', at = ?3, attempts = 0,
			postponements = 0 WHERE namespace = ?1 AND key = ?2 AND place = 'dead'`, s.namespace, key, c.now)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		requeued = n == 1
		return err
	})
	if err != nil {
		return false, 0, fmt.Errorf("sqlitewheel: requeue %q: %w", key, err)
	}
	return requeued, due, nil
}
