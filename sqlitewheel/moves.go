package sqlitewheel

import (
	"context"
	"database/sql"

	"github.com/go-timingwheel/timingwheel/durable"
)

// The moves shared by claim, settle and cancel, as rediswheel's
// lua/common.lua and pgwheel's finish.go have them: each runs inside the
// caller's write transaction.

// delivering is the current delivery of a task in flight, as claim
// recorded it; attempt is -1 when there is none.
type delivering struct {
	attempt int
	worker  string
	started int64
}

// maxHistoryError is the longest error text a history entry keeps (the full
// last error is the task's last_error).
const maxHistoryError = 256

// remember appends one delivery, with its result, to the task's execution
// log, then forgets all but the newest keep entries. With keep <= 0, or no
// current delivery, it logs nothing. The result's body is cut to
// durable.MaxResultBody here too, so a Store caller cannot store more than
// the Queue would.
func (s *Store) remember(ctx context.Context, tx *sql.Tx, key string, d delivering, finish int64, outcome, errText string, r durable.Result, keep int) error {
	if keep <= 0 || d.attempt < 0 {
		return nil
	}
	if len(errText) > maxHistoryError {
		errText = cutText(errText, maxHistoryError)
	}
	if len(r.Body) > durable.MaxResultBody {
		r.Body, r.Truncated = r.Body[:durable.MaxResultBody], true
	}
	if r.Body == nil {
		r.Body = []byte{} // NOT NULL: no body is x''
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO sqlitewheel_delivery
		(namespace, key, attempt, worker, started, finished, outcome, error, result_code, result_body, result_truncated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.namespace, key, d.attempt, d.worker, d.started, finish, outcome, errText, r.Code, r.Body, r.Truncated); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM sqlitewheel_delivery WHERE namespace = ?1 AND key = ?2 AND id <= (
		SELECT id FROM sqlitewheel_delivery WHERE namespace = ?1 AND key = ?2
		ORDER BY id DESC LIMIT 1 OFFSET ?3)`, s.namespace, key, keep)
	return err
}

// retire finishes a task as state ("done" or "cancelled"). With retention
// it is kept until nowUp + retention (never trimmed before its full
// retention) with a result row, its attempts, last error, policy and log
// left for Get, its payload dropped; the row stays, so Add of the key stays
// a no-op while it is retained. Without retention the row goes, and its log
// and result with it (ON DELETE CASCADE). A task done has no last error: it
// succeeded, and its log keeps each attempt's error; a cancelled one keeps it.
func (s *Store) retire(ctx context.Context, tx *sql.Tx, key, state string, c clock, retainMs int64) error {
	if retainMs <= 0 {
		_, err := tx.ExecContext(ctx, `DELETE FROM sqlitewheel_task WHERE namespace = ? AND key = ?`, s.namespace, key)
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sqlitewheel_task SET place = 'kept', at = ?3, payload = x'',
		token = NULL, cancel_requested = 0, postponements = 0, unconfirmed = 0,
		last_error = CASE WHEN ?4 = 'done' THEN '' ELSE last_error END
		WHERE namespace = ?1 AND key = ?2`, s.namespace, key, c.after(retainMs), state); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO sqlitewheel_result (namespace, key, state, finished) VALUES (?, ?, ?, ?)
		ON CONFLICT (namespace, key) DO UPDATE SET state = excluded.state, finished = excluded.finished`,
		s.namespace, key, state, c.now)
	return err
}

// bury moves a task to the dead set with its last error; the caller trims
// the dead set afterwards (trimDead).
func (s *Store) bury(ctx context.Context, tx *sql.Tx, key string, c clock, errText string) error {
	_, err := tx.ExecContext(ctx, `UPDATE sqlitewheel_task SET place = 'dead', at = ?3, last_error = ?4,
		token = NULL, unconfirmed = 0 WHERE namespace = ?1 AND key = ?2`, s.namespace, key, c.now, errText)
	return err
}

// trimDeadLimit is how many dead tasks one burial may forget past the cap,
// as lua/common.lua's bury: the work of a call stays bounded.
const trimDeadLimit = 16

// count reads how many tasks of the namespace are in place, from
// sqlitewheel_count (kept by triggers): one row, however many tasks.
func (s *Store) count(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, place string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT coalesce((SELECT n FROM sqlitewheel_count
		WHERE namespace = ? AND place = ?), 0)`, s.namespace, place).Scan(&n)
	return n, err
}

// trimOldest forgets the oldest tasks of place (by at, then key), at most n.
func (s *Store) trimOldest(ctx context.Context, tx *sql.Tx, place string, n int) (int, error) {
	if n <= 0 {
		return 0, nil
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM sqlitewheel_task WHERE namespace = ?1 AND key IN (
		SELECT key FROM sqlitewheel_task WHERE namespace = ?1 AND place = ?2 ORDER BY at, key LIMIT ?3)`,
		s.namespace, place, n)
	if err != nil {
		return 0, err
	}
	k, err := res.RowsAffected()
	return int(k), err
}

// trimDead forgets the oldest dead tasks while more than cap are dead, at
// most limit of them, and returns how many.
func (s *Store) trimDead(ctx context.Context, tx *sql.Tx, cap, limit int) (int, error) {
	n, err := s.count(ctx, tx, "dead")
	if err != nil {
		return 0, err
	}
	return s.trimOldest(ctx, tx, "dead", min(n-cap, limit))
}

// trimKept forgets retained tasks whose retention has ended, at most limit,
// then the oldest while more than cap are retained: at most limit in all.
// It returns how many it forgot.
func (s *Store) trimKept(ctx context.Context, tx *sql.Tx, c clock, cap, limit int) (int, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM sqlitewheel_task WHERE namespace = ?1 AND key IN (
		SELECT key FROM sqlitewheel_task WHERE namespace = ?1 AND place = 'kept' AND at <= ?2
		ORDER BY at, key LIMIT ?3)`, s.namespace, c.now, limit)
	if err != nil {
		return 0, err
	}
	k, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	n := int(k)
	kept, err := s.count(ctx, tx, "kept")
	if err != nil {
		return 0, err
	}
	more, err := s.trimOldest(ctx, tx, "kept", min(kept-cap, limit-n))
	return n + more, err
}
