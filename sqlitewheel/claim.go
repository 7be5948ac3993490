package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Claim is durable.Store's Claim, in one write transaction (lua/claim.lua):
// it reaps up to lim.ReapBatch expired leases, then, unless the namespace is
// paused, leases up to limit tasks due by the clock read once the write lock
// is held, earliest first, each with a fresh fencing token. Every statement
// walks the index sqlitewheel_task_place_at from one end: the work is
// bounded by limit and lim.ReapBatch, not by the tasks stored.
func (s *Store) Claim(ctx context.Context, partition, limit int, lease time.Duration, lim durable.Limits) (durable.Claimed, error) {
	if partition != 0 || limit < 0 || lease <= 0 {
		return durable.Claimed{}, fmt.Errorf("sqlitewheel: claim: partition %d, limit %d, lease %v", partition, limit, lease)
	}
	var out durable.Claimed
	err := s.write(ctx, func(tx *sql.Tx, c clock) error {
		out = durable.Claimed{Now: c.now}
		var paused int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT paused FROM sqlitewheel_queue
			WHERE namespace = ?), 0)`, s.namespace).Scan(&paused); err != nil {
			return err
		}
		out.Paused = paused != 0
		buried, err := s.reap(ctx, tx, c, lim)
		if err != nil {
			return fmt.Errorf("reap: %w", err)
		}
		if !out.Paused && limit > 0 {
			if out.Tasks, err = s.lease(ctx, tx, c, limit, millisCeil(lease), lim.WorkerID); err != nil {
				return fmt.Errorf("lease: %w", err)
			}
		}
		if buried > 0 {
			if out.DeadTrimmed, err = s.trimDead(ctx, tx, lim.MaxDead, trimDeadLimit*buried); err != nil {
				return fmt.Errorf("trim dead: %w", err)
			}
		}
		// While paused, due tasks are not waited for: the worker polls at
		// its idle pace until Resume.
		out.Next = -1
		if !out.Paused {
			if out.Next, err = s.first(ctx, tx, "due"); err != nil {
				return err
			}
		}
		l, err := s.first(ctx, tx, "lease")
		if err != nil {
			return err
		}
		if l >= 0 && (out.Next < 0 || l < out.Next) {
			out.Next = l
		}
		return nil
	})
	if err != nil {
		return durable.Claimed{}, fmt.Errorf("sqlitewheel: claim: %w", err)
	}
	return out, nil
}

// first is the earliest at of place, -1 if none: one step into the index.
func (s *Store) first(ctx context.Context, tx *sql.Tx, place string) (int64, error) {
	var at int64
	err := tx.QueryRowContext(ctx, `SELECT coalesce(min(at), -1) FROM sqlitewheel_task
		WHERE namespace = ? AND place = ?`, s.namespace, place).Scan(&at)
	return at, err
}

// reap handles up to lim.ReapBatch expired leases and returns how many it
// buried. A lease that ran out means its worker died or stalled, or that the
// claim's reply never reached it: the task goes back to due at once with
// last error "lease expired" (to dead when out of attempts; finished as
// cancelled when Cancel came meanwhile), its token dropped so that the late
// worker's Settle and Extend are refused. Its attempt is given back when no
// Extend or Settle confirmed the claim, for up to lim.MaxUnconfirmed claims
// in a row (lua/claim.lua's rule).
func (s *Store) reap(ctx context.Context, tx *sql.Tx, c clock, lim durable.Limits) (int, error) {
	if lim.ReapBatch <= 0 {
		return 0, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT key, attempts, unconfirmed, max_attempts, cancel_requested,
		coalesce(delivery_attempt, -1), coalesce(worker, ''), coalesce(started, 0)
		FROM sqlitewheel_task WHERE namespace = ? AND place = 'lease' AND at <= ?
		ORDER BY at, key LIMIT ?`, s.namespace, c.now, lim.ReapBatch)
	if err != nil {
		return 0, err
	}
	type expired struct {
		key                           string
		attempts, unconfirmed, ownMax int
		cancelled                     bool
		d                             delivering
	}
	var exp []expired
	for rows.Next() {
		var e expired
		if err := rows.Scan(&e.key, &e.attempts, &e.unconfirmed, &e.ownMax, &e.cancelled,
			&e.d.attempt, &e.d.worker, &e.d.started); err != nil {
			rows.Close()
			return 0, err
		}
		exp = append(exp, e)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	buried := 0
	for _, e := range exp {
		if err := s.remember(ctx, tx, e.key, e.d, c.now, "lease expired", "", durable.Result{}, lim.HistoryLen); err != nil {
			return 0, err
		}
		if e.cancelled {
			if err := s.retire(ctx, tx, e.key, "cancelled", c, millisCeil(lim.Retention)); err != nil {
				return 0, err
			}
			continue
		}
		attempts := e.attempts
		if e.unconfirmed > 0 && e.unconfirmed <= lim.MaxUnconfirmed {
			attempts-- // maybe a lost claim reply: no handler ran
		}
		max := e.ownMax
		if max == 0 {
			max = lim.MaxAttempts
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sqlitewheel_task SET attempts = ? WHERE namespace = ? AND key = ?`,
			attempts, s.namespace, e.key); err != nil {
			return 0, err
		}
		if attempts >= max {
			// bury resets unconfirmed: a Requeue starts the bound over.
			if err := s.bury(ctx, tx, e.key, c, "lease expired"); err != nil {
				return 0, err
			}
			buried++
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sqlitewheel_task SET place = 'due', at = ?, token = NULL,
			last_error = 'lease expired' WHERE namespace = ? AND key = ?`, c.now, s.namespace, e.key); err != nil {
			return 0, err
		}
	}
	return buried, nil
}

// lease takes up to limit due tasks, earliest first, and leases them until
// nowUp + leaseMs, each with a fresh token from sqlitewheel_token.
func (s *Store) lease(ctx context.Context, tx *sql.Tx, c clock, limit int, leaseMs int64, worker string) ([]durable.ClaimedTask, error) {
	rows, err := tx.QueryContext(ctx, `SELECT key, at FROM sqlitewheel_task
		WHERE namespace = ? AND place = 'due' AND at <= ? ORDER BY at, key LIMIT ?`, s.namespace, c.now, limit)
	if err != nil {
		return nil, err
	}
	var out []durable.ClaimedTask
	for rows.Next() {
		var t durable.ClaimedTask
		if err := rows.Scan(&t.Key, &t.Due); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil || len(out) == 0 {
		return nil, err
	}
	// One counter step for the batch; the counter commits with the claim,
	// so a token is never handed out twice, across restarts too.
	var last int64
	if err := tx.QueryRowContext(ctx, `UPDATE sqlitewheel_token SET last = last + ? RETURNING last`,
		len(out)).Scan(&last); err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	for i := range out {
		t := &out[i]
		token := last - int64(len(out)) + int64(i) + 1
		var timeout, base, blimit int64
		if err := tx.QueryRowContext(ctx, `UPDATE sqlitewheel_task SET place = 'lease', at = ?3, token = ?4,
			attempts = attempts + 1, unconfirmed = unconfirmed + 1, delivery_attempt = attempts + 1,
			started = ?5, worker = ?6
			WHERE namespace = ?1 AND key = ?2
			RETURNING payload, attempts, original_due, type, timeout_ms, max_attempts, backoff_base_ms, backoff_limit_ms,
				postponements`,
			s.namespace, t.Key, c.nowUp+leaseMs, token, c.now, worker).Scan(&t.Payload, &t.Attempt, &t.OriginalDue,
			&t.Policy.Type, &timeout, &t.Policy.MaxAttempts, &base, &blimit, &t.Postponements); err != nil {
			return nil, err
		}
		t.Token = strconv.FormatInt(token, 10)
		t.Policy.Timeout = time.Duration(timeout) * time.Millisecond
		t.Policy.BackoffBase = time.Duration(base) * time.Millisecond
		t.Policy.BackoffLimit = time.Duration(blimit) * time.Millisecond
	}
	return out, nil
}
