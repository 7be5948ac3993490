package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Get is durable.Store's Get: the task's row, result and log, read in one
// read transaction (one snapshot); nil, nil when key is in no state.
func (s *Store) Get(ctx context.Context, key string) (*durable.TaskInfo, error) {
	var info *durable.TaskInfo
	err := s.read(ctx, func(tx *sql.Tx) error {
		var err error
		info, err = s.info(ctx, tx, key)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlitewheel: get %q: %w", key, err)
	}
	return info, nil
}

// info reads one task in tx; nil if there is none.
func (s *Store) info(ctx context.Context, tx *sql.Tx, key string) (*durable.TaskInfo, error) {
	i := &durable.TaskInfo{Key: key}
	var place string
	var at, originalDue, added, timeout, base, blimit int64
	var started, finished sql.NullInt64
	var result sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT t.type, t.place, t.at, t.original_due, t.attempts, t.last_error,
		t.payload_size, t.added, t.started, t.timeout_ms, t.max_attempts, t.backoff_base_ms, t.backoff_limit_ms,
		t.postponements, r.state, r.finished
		FROM sqlitewheel_task t LEFT JOIN sqlitewheel_result r USING (namespace, key)
		WHERE t.namespace = ? AND t.key = ?`, s.namespace, key).Scan(&i.Type, &place, &at, &originalDue,
		&i.Attempts, &i.LastError, &i.PayloadSize, &added, &started, &timeout, &i.MaxAttempts, &base, &blimit,
		&i.Postponements, &result, &finished)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	i.OriginalDue, i.Added, i.Started = time.UnixMilli(originalDue), time.UnixMilli(added), msTime(started)
	i.Timeout = time.Duration(timeout) * time.Millisecond
	i.BackoffBase, i.BackoffLimit = time.Duration(base)*time.Millisecond, time.Duration(blimit)*time.Millisecond
	switch place {
	case "due":
		i.State, i.Due = durable.StateScheduled, time.UnixMilli(at)
		if i.Attempts > 0 || i.LastError != "" {
			i.State = durable.StateRetrying
		}
	case "lease":
		i.State, i.Due = durable.StateInFlight, time.UnixMilli(at)
	case "dead":
		i.State, i.Finished = durable.StateDead, time.UnixMilli(at)
	case "kept":
		// A retained task always has a result row (retire writes both);
		// one without would read as done, as in rediswheel.
		i.State, i.Finished = durable.StateDone, msTime(finished)
		if result.String == string(durable.StateCancelled) {
			i.State = durable.StateCancelled
		}
	default:
		return nil, fmt.Errorf("task %q in unknown place %q", key, place)
	}
	rows, err := tx.QueryContext(ctx, `SELECT attempt, worker, started, finished, outcome, error,
		result_code, result_body, result_truncated
		FROM sqlitewheel_delivery WHERE namespace = ? AND key = ? ORDER BY id`, s.namespace, key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var d durable.Delivery
		var start, end int64
		if err := rows.Scan(&d.Attempt, &d.Worker, &start, &end, &d.Outcome, &d.Error,
			&d.Result.Code, &d.Result.Body, &d.Result.Truncated); err != nil {
			return nil, err
		}
		if len(d.Result.Body) == 0 {
			d.Result.Body = nil // none, as on every store
		}
		d.Start, d.End = time.UnixMilli(start), time.UnixMilli(end)
		i.History = append(i.History, d)
	}
	return i, rows.Err()
}
