package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Cancel is durable.Store's Cancel, in one write transaction
// (lua/cancel.lua): a scheduled, retrying or dead task is finished as
// cancelled (retained for retention, else forgotten), a task in flight is
// marked so that its Settle finishes it as cancelled, a retained task is
// forgotten. It then trims retained tasks as Settle does, 17 at most.
func (s *Store) Cancel(ctx context.Context, key string, retention time.Duration, maxRetained int) (durable.CancelResult, error) {
	var out durable.CancelResult
	err := s.write(ctx, func(tx *sql.Tx, c clock) error {
		out = durable.CancelResult{}
		var place string
		err := tx.QueryRowContext(ctx, `SELECT place FROM sqlitewheel_task WHERE namespace = ? AND key = ?`,
			s.namespace, key).Scan(&place)
		switch {
		case err == sql.ErrNoRows:
			err = nil // in no state: nothing to cancel
		case err != nil:
			return err
		case place == "due", place == "dead":
			err = s.retire(ctx, tx, key, "cancelled", c, millisCeil(retention))
		case place == "lease":
			_, err = tx.ExecContext(ctx, `UPDATE sqlitewheel_task SET cancel_requested = 1
				WHERE namespace = ? AND key = ?`, s.namespace, key)
		case place == "kept":
			_, err = tx.ExecContext(ctx, `DELETE FROM sqlitewheel_task WHERE namespace = ? AND key = ?`, s.namespace, key)
		}
		if err != nil {
			return err
		}
		out.Found = place != ""
		out.RetainedTrimmed, err = s.trimKept(ctx, tx, c, maxRetained, 16+1)
		return err
	})
	if err != nil {
		return durable.CancelResult{}, fmt.Errorf("sqlitewheel: cancel %q: %w", key, err)
	}
	return out, nil
}
