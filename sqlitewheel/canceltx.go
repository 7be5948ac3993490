package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// cancelIn is Cancel's work in tx, which the caller commits: written once
// for Cancel and CancelTx.
func (s *Store) cancelIn(ctx context.Context, tx *sql.Tx, c clock, key string, retention time.Duration, maxRetained int) (durable.CancelResult, error) {
	var out durable.CancelResult
	var place string
	err := tx.QueryRowContext(ctx, `SELECT place FROM sqlitewheel_task WHERE namespace = ? AND key = ?`,
		s.namespace, key).Scan(&place)
	switch {
	case err == sql.ErrNoRows:
		err = nil // in no state: nothing to cancel
	case err != nil:
		return out, err
	case place == "due", place == "dead":
		err = s.retire(ctx, tx, key, "cancelled", c, millisCeil(retention))
	case place == "lease":
		_, err = tx.ExecContext(ctx, `UPDATE sqlitewheel_task SET cancel_requested = 1
			WHERE namespace = ? AND key = ?`, s.namespace, key)
	case place == "kept":
		_, err = tx.ExecContext(ctx, `DELETE FROM sqlitewheel_task WHERE namespace = ? AND key = ?`, s.namespace, key)
	}
	if err != nil {
		return out, err
	}
	out.Found = place != ""
	out.RetainedTrimmed, err = s.trimKept(ctx, tx, c, maxRetained, 16+1)
	return out, err
}

// CancelTx is Queue.Cancel inside the caller's transaction, tx begun on DB
// (see AddTx): the task is cancelled, finally, when tx commits, and a
// rollback leaves it as it was (scheduled, it fires when due). tx holds the
// file's write lock, so no claim runs while it is open: a task that falls
// due meanwhile is not delivered before the commit, and never after one. A
// task in flight is marked, as Queue.Cancel marks it: whatever its handler
// returns, its Settle finishes it as cancelled (durable's state table).
// retention and maxRetained are the Queue's (q.Options().Retention and
// MaxRetained; 0: durable.DefaultMaxRetained), so that the cancel retains
// what Queue.Cancel would. Found is false when the key is in no state.
func (s *Store) CancelTx(ctx context.Context, tx *sql.Tx, key string, retention time.Duration, maxRetained int) (durable.CancelResult, error) {
	if tx == nil {
		panic("sqlitewheel.CancelTx: nil transaction")
	}
	if err := checkText(key, durable.MaxKeyLen); err != nil {
		return durable.CancelResult{}, fmt.Errorf("sqlitewheel: cancel: %w: %w", durable.ErrKey, err)
	}
	if retention < 0 || maxRetained < 0 {
		panic(fmt.Sprintf("sqlitewheel.CancelTx: retention %v, maxRetained %d", retention, maxRetained))
	}
	if maxRetained == 0 {
		maxRetained = durable.DefaultMaxRetained
	}
	out, err := s.cancelIn(ctx, tx, readClock(), key, retention, maxRetained)
	if err != nil {
		return durable.CancelResult{}, fmt.Errorf("sqlitewheel: cancel %q: %w", key, classify(err))
	}
	return out, nil
}
