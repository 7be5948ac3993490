package pgwheel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/jackc/pgx/v5"
)

// txWriter is the one transaction an operation writes in: the Store's own
// or the caller's pgx.Tx (pgxTx), or the caller's *sql.Tx (sqlTx). cancelIn
// is written once against it, so Cancel, CancelTx and CancelSQLTx cannot
// drift apart.
type txWriter interface {
	rowQuerier
	// exec runs one statement and returns the rows it changed.
	exec(ctx context.Context, sql string, args ...any) (int64, error)
	// send runs b's statements in order and reports the first failure: one
	// pipeline on pgx, one statement at a time on database/sql.
	send(ctx context.Context, b *pgx.Batch) error
}

type pgxTx struct{ pgx.Tx }

func (t pgxTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := t.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (t pgxTx) send(ctx context.Context, b *pgx.Batch) error { return sendBatch(ctx, t.Tx, b) }

func (s sqlTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := s.tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s sqlTx) send(ctx context.Context, b *pgx.Batch) error {
	for _, q := range b.QueuedQueries {
		if _, err := s.tx.ExecContext(ctx, q.SQL, q.Arguments...); err != nil {
			return err
		}
	}
	return nil
}

// cancelIn is cancel's work on tx (see cancel), which the caller commits.
func (s *Store) cancelIn(ctx context.Context, tx txWriter, key string, retention time.Duration, maxRetained int) (cancelCode, int, error) {
	c, err := readClock(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	var place string
	err = tx.QueryRow(ctx, `SELECT place FROM pgwheel_task WHERE namespace = $1 AND key = $2 FOR UPDATE`,
		s.namespace, key).Scan(&place)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, err
	}
	var b pgx.Batch
	code := cancelUnknown
	switch place {
	case "due", "dead":
		s.retire(&b, key, "cancelled", c, millisCeil(retention))
		code = cancelScheduled
		if place == "dead" {
			code = cancelDead
		}
	case "lease":
		b.Queue(`UPDATE pgwheel_task SET cancel_requested = true WHERE namespace = $1 AND key = $2`, s.namespace, key)
		code = cancelInFlight
	case "kept":
		b.Queue(`DELETE FROM pgwheel_task WHERE namespace = $1 AND key = $2`, s.namespace, key)
		code = cancelForgotten
	}
	if err := tx.send(ctx, &b); err != nil {
		return 0, 0, err
	}
	trimmed, err := s.trimKept(ctx, tx, maxRetained, 17, code == cancelScheduled || code == cancelDead)
	return code, trimmed, err
}

// trimKept forgets retained tasks whose retention has ended, at most limit,
// and, when overCap, then the oldest while more than cap are retained: at
// most limit in all. It returns how many it forgot.
func (s *Store) trimKept(ctx context.Context, tx txWriter, cap, limit int, overCap bool) (int, error) {
	n, err := tx.exec(ctx, trimKeptExpiredSQL, s.namespace, limit)
	if err != nil || !overCap || int(n) >= limit {
		return int(n), err
	}
	more, err := tx.exec(ctx, trimKeptOverCapSQL, s.namespace, cap, limit-int(n))
	return int(n + more), err
}

// cancelTx checks CancelTx's arguments, then runs cancelIn on tx.
func (s *Store) cancelTx(ctx context.Context, tx txWriter, key string, retention time.Duration, maxRetained int) (durable.CancelResult, error) {
	if err := checkKey(key); err != nil {
		return durable.CancelResult{}, err
	}
	if retention < 0 || maxRetained < 0 {
		return durable.CancelResult{}, fmt.Errorf("%w: cancel: retention %v, max retained %d", ErrArgument, retention, maxRetained)
	}
	if maxRetained == 0 {
		maxRetained = durable.DefaultMaxRetained
	}
	code, trimmed, err := s.cancelIn(ctx, tx, key, retention, maxRetained)
	if err != nil {
		return durable.CancelResult{}, fmt.Errorf("pgwheel: cancel %q: %w", key, err)
	}
	return durable.CancelResult{Found: code != cancelUnknown, RetainedTrimmed: trimmed}, nil
}

// CancelTx is Queue.Cancel inside the caller's transaction: the task is
// cancelled, finally, when tx commits, and a rollback leaves it as it was
// (scheduled, it fires when due). Until then the task's row is locked: a
// worker's claim skips it (claims skip locked rows), so a task that falls
// due while tx is open is not delivered before the commit, and never after
// one. A task in flight is marked, as Queue.Cancel marks it: whatever its
// handler returns, its Settle finishes it as cancelled (durable's state
// table), and its handler's context is cancelled at the next heartbeat
// after the commit. retention and maxRetained are the Queue's
// (q.Options().Retention and MaxRetained; 0: durable.DefaultMaxRetained),
// so that a cancel here retains what Queue.Cancel would. Found is false when
// the key is in no state. A cancel wakes no worker: it makes nothing due
// sooner. Run at READ COMMITTED (the default), as AddTx.
func (s *Store) CancelTx(ctx context.Context, tx pgx.Tx, key string, retention time.Duration, maxRetained int) (durable.CancelResult, error) {
	if tx == nil {
		panic("pgwheel.CancelTx: nil transaction")
	}
	return s.cancelTx(ctx, pgxTx{tx}, key, retention, maxRetained)
}

// CancelSQLTx is CancelTx for a database/sql transaction of any PostgreSQL
// driver (pgx's stdlib, lib/pq): the same statements, one at a time.
func (s *Store) CancelSQLTx(ctx context.Context, tx *sql.Tx, key string, retention time.Duration, maxRetained int) (durable.CancelResult, error) {
	if tx == nil {
		panic("pgwheel.CancelSQLTx: nil transaction")
	}
	return s.cancelTx(ctx, sqlTx{tx}, key, retention, maxRetained)
}

// ReplaceTx is Queue.Replace inside the caller's transaction, with AddTx's
// shape and guarantees: each task is stored whatever exists under its key,
// starting over (no attempts, history or result), except a task in flight,
// left alone (durable.AddInFlight); it becomes visible, and its wake-up is
// sent, when tx commits, and a rollback leaves the old task as it was.
// Every task is validated before any is stored.
func (s *Store) ReplaceTx(ctx context.Context, tx pgx.Tx, tasks ...NewTask) ([]Added, error) {
	if tx == nil {
		panic("pgwheel.ReplaceTx: nil transaction")
	}
	return s.addAll(ctx, tx, modeReplace, tasks)
}

// ReplaceSQLTx is ReplaceTx for a database/sql transaction.
func (s *Store) ReplaceSQLTx(ctx context.Context, tx *sql.Tx, tasks ...NewTask) ([]Added, error) {
	if tx == nil {
		panic("pgwheel.ReplaceSQLTx: nil transaction")
	}
	return s.addAll(ctx, sqlTx{tx}, modeReplace, tasks)
}

// RescheduleTx is Queue.Reschedule inside the caller's transaction: the
// scheduled or retrying task moves to at (rounded up to the millisecond)
// when tx commits, and its wake-up, if it is now the earliest, is sent
// then; a rollback leaves it due when it was. A task in flight is left
// alone (durable.RescheduleInFlight), a missing, dead or retained one too
// (durable.RescheduleMissing).
func (s *Store) RescheduleTx(ctx context.Context, tx pgx.Tx, key string, at time.Time) (durable.RescheduleResult, error) {
	if tx == nil {
		panic("pgwheel.RescheduleTx: nil transaction")
	}
	return s.rescheduleOn(ctx, tx, key, at)
}

// RescheduleSQLTx is RescheduleTx for a database/sql transaction.
func (s *Store) RescheduleSQLTx(ctx context.Context, tx *sql.Tx, key string, at time.Time) (durable.RescheduleResult, error) {
	if tx == nil {
		panic("pgwheel.RescheduleSQLTx: nil transaction")
	}
	return s.rescheduleOn(ctx, sqlTx{tx}, key, at)
}
