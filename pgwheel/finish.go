package pgwheel

import (
	"context"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/jackc/pgx/v5"
)

// The moves shared by claim, settle and cancel, as rediswheel's
// lua/common.lua has them: each queues its statements on a batch that the
// caller sends inside its transaction, after it locked the task's row.

// clock is one reading of the database clock (pgwheel_clock): now rounded
// down to the millisecond, nowUp rounded up. "Is it due?" compares with now;
// a deadline a delay > 0 ahead is nowUp + delay, never now + delay (up to a
// millisecond before the call's time + delay); a delay of 0 is now.
type clock struct{ now, nowUp time.Time }

func (c clock) after(ms int64) time.Time {
	if ms <= 0 {
		return c.now
	}
	return c.nowUp.Add(time.Duration(ms) * time.Millisecond)
}

const clockSQL = `SELECT now, now_up FROM pgwheel_clock()`

func readClock(ctx context.Context, q rowQuerier) (clock, error) {
	var c clock
	err := q.QueryRow(ctx, clockSQL).Scan(&c.now, &c.nowUp)
	return c, err
}

// delivering is the current delivery of a locked task in flight, as claim
// recorded it; attempt is -1 when there is none.
type delivering struct {
	attempt int
	worker  string
	started time.Time
}

// maxHistoryError is the longest error text a history entry keeps (the full
// last error is the task's last_error).
const maxHistoryError = 256

// remember appends one delivery, with its result, to the task's execution
// log, then forgets all but the newest keep entries. With keep <= 0, or no
// current delivery, it logs nothing. The result's body is cut to
// durable.MaxResultBody here too, so a Store caller cannot store more than
// the Queue would.
func (s *Store) remember(b *pgx.Batch, key string, d delivering, finish time.Time, outcome, errText string, r durable.Result, keep int) {
	if keep <= 0 || d.attempt < 0 {
		return
	}
	if len(errText) > maxHistoryError {
		errText = storableText(cutText(errText, maxHistoryError))
	}
	if len(r.Body) > durable.MaxResultBody {
		r.Body, r.Truncated = r.Body[:durable.MaxResultBody], true
	}
	if r.Body == nil {
		r.Body = []byte{} // NOT NULL
	}
	b.Queue(`INSERT INTO pgwheel_delivery (namespace, key, attempt, worker, started, finished, outcome, error,
		result_code, result_body, result_truncated)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		s.namespace, key, d.attempt, d.worker, d.started, finish, outcome, errText, r.Code, r.Body, r.Truncated)
	b.Queue(`DELETE FROM pgwheel_delivery WHERE namespace = $1 AND key = $2 AND id <= (
		SELECT id FROM pgwheel_delivery WHERE namespace = $1 AND key = $2
		ORDER BY id DESC OFFSET $3 LIMIT 1)`, s.namespace, key, keep)
}

// retire finishes a task as state ("done" or "cancelled"). With retention
// it is kept until nowUp + retention (never trimmed before its full
// retention) with a result row, its attempts, last error, policy and log
// left for Get, its payload dropped; the row stays, so Add of the key stays
// a no-op while it is retained. Without retention the row goes, and its log
// and result with it (ON DELETE CASCADE). A task done has no last error: it
// succeeded, and its log keeps each attempt's error; a cancelled one keeps it.
func (s *Store) retire(b *pgx.Batch, key, state string, c clock, retainMs int64) {
	if retainMs <= 0 {
		b.Queue(`DELETE FROM pgwheel_task WHERE namespace = $1 AND key = $2`, s.namespace, key)
		return
	}
	b.Queue(`UPDATE pgwheel_task SET place = 'kept', at = $3, payload = '', token = NULL,
		cancel_requested = false, postponements = 0, unconfirmed = 0,
		last_error = CASE WHEN $4 = 'done' THEN '' ELSE last_error END
		WHERE namespace = $1 AND key = $2`, s.namespace, key, c.after(retainMs), state)
	b.Queue(`INSERT INTO pgwheel_result (namespace, key, state, finished) VALUES ($1, $2, $3, $4)
		ON CONFLICT (namespace, key) DO UPDATE SET state = EXCLUDED.state, finished = EXCLUDED.finished`,
		s.namespace, key, state, c.now)
}

// bury moves a task to the dead set with its last error; the caller trims
// the dead set afterwards (trimDead).
func (s *Store) bury(b *pgx.Batch, key string, c clock, errText string) {
	b.Queue(`UPDATE pgwheel_task SET place = 'dead', at = $3, last_error = $4, token = NULL, unconfirmed = 0
		WHERE namespace = $1 AND key = $2`, s.namespace, key, c.now, storableText(errText))
}

// trimDeadLimit is how many dead tasks one call may forget past the cap, as
// lua/common.lua's bury: the work of a call stays bounded.
const trimDeadLimit = 16

// trimDeadSQL forgets the oldest dead tasks while more than $2 are dead,
// at most $3 of them. It counts the dead set (an index scan of at most
// about $2 rows), so callers run it only after a burial.
const trimDeadSQL = `DELETE FROM pgwheel_task WHERE namespace = $1 AND key IN (
	SELECT key FROM (
		SELECT key, at FROM pgwheel_task WHERE namespace = $1 AND place = 'dead'
		ORDER BY at DESC, key DESC OFFSET $2) o
	ORDER BY at, key LIMIT $3)`

// trimDead runs trimDeadSQL and returns how many it forgot.
func (s *Store) trimDead(ctx context.Context, tx pgx.Tx, cap, limit int) (int, error) {
	tag, err := tx.Exec(ctx, trimDeadSQL, s.namespace, cap, limit)
	return int(tag.RowsAffected()), err
}

// trimKeptExpiredSQL forgets retained tasks whose retention has ended by
// the clock it reads (so that a pipeline can send it before any reply), at
// most $2, skipping rows others hold. Every Settle runs it: it deletes the
// rows it locked by their ctid (a TID scan), not by a join on the key that
// the planner, on statistics taken when the namespace was near empty, made
// a scan of the whole namespace (EXPLAIN ANALYZE, 3,000 tasks in flight,
// none retained: 1.8 ms, against 0.6 ms by ctid).
const trimKeptExpiredSQL = `DELETE FROM pgwheel_task WHERE ctid = ANY (ARRAY(
	SELECT ctid FROM pgwheel_task WHERE namespace = $1 AND place = 'kept' AND at <= (SELECT now FROM pgwheel_clock())
	ORDER BY at, key LIMIT $2 FOR UPDATE SKIP LOCKED))`

// trimKeptOverCapSQL forgets the oldest retained tasks while more than $2
// are retained, at most $3.
const trimKeptOverCapSQL = `DELETE FROM pgwheel_task WHERE namespace = $1 AND key IN (
	SELECT key FROM (
		SELECT key, at FROM pgwheel_task WHERE namespace = $1 AND place = 'kept'
		ORDER BY at DESC, key DESC OFFSET $2) o
	ORDER BY at, key LIMIT $3)`

// sendBatch runs b in tx and reports the first failure.
func sendBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, b).Close()
}
