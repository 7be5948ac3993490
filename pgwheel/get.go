package pgwheel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/jackc/pgx/v5"
)

// Get is durable.Store's Get.
func (s *Store) Get(ctx context.Context, key string) (*durable.TaskInfo, error) {
	i, err := s.get(ctx, key)
	if errors.Is(err, durable.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return &i, nil
}

// get reads one task; durable.ErrNotFound when the key is in no state.
func (s *Store) get(ctx context.Context, key string) (durable.TaskInfo, error) {
	if err := checkKey(key); err != nil {
		return durable.TaskInfo{}, err
	}
	var infos []durable.TaskInfo
	err := s.inTx(ctx, snapshotTx, func(tx pgx.Tx) error {
		var err error
		infos, err = s.infos(ctx, tx, []string{key})
		return err
	})
	if err != nil {
		return durable.TaskInfo{}, schemaMissing(fmt.Errorf("pgwheel: get %q: %w", key, err))
	}
	if len(infos) == 0 {
		return durable.TaskInfo{}, fmt.Errorf("%w: %q", durable.ErrNotFound, key)
	}
	return infos[0], nil
}

// snapshotTx reads several statements from one snapshot.
var snapshotTx = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// infos reads the tasks of keys that exist, in the order of keys.
func (s *Store) infos(ctx context.Context, tx pgx.Tx, keys []string) ([]durable.TaskInfo, error) {
	rows, err := tx.Query(ctx, `SELECT t.key, t.type, t.place, t.at, t.original_due, t.attempts, t.last_error,
		t.payload_size, t.added, t.started, t.timeout_ms, t.max_attempts, t.backoff_base_ms, t.backoff_limit_ms,
		t.postponements, r.state, r.finished
		FROM pgwheel_task t LEFT JOIN pgwheel_result r USING (namespace, key)
		WHERE t.namespace = $1 AND t.key = ANY($2)`, s.namespace, keys)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]*durable.TaskInfo, len(keys))
	for rows.Next() {
		var i durable.TaskInfo
		var place string
		var at time.Time
		var started, finished *time.Time
		var result *string
		var timeout, base, limit int64
		if err := rows.Scan(&i.Key, &i.Type, &place, &at, &i.OriginalDue, &i.Attempts, &i.LastError,
			&i.PayloadSize, &i.Added, &started, &timeout, &i.MaxAttempts, &base, &limit, &i.Postponements,
			&result, &finished); err != nil {
			rows.Close()
			return nil, err
		}
		i.Timeout = time.Duration(timeout) * time.Millisecond
		i.BackoffBase, i.BackoffLimit = time.Duration(base)*time.Millisecond, time.Duration(limit)*time.Millisecond
		i.OriginalDue, i.Added = i.OriginalDue.UTC(), i.Added.UTC()
		if started != nil {
			i.Started = started.UTC()
		}
		switch place {
		case "due":
			i.State, i.Due = durable.StateScheduled, at.UTC()
			if i.Attempts > 0 || i.LastError != "" {
				i.State = durable.StateRetrying
			}
		case "lease":
			i.State, i.Due = durable.StateInFlight, at.UTC()
		case "dead":
			i.State, i.Finished = durable.StateDead, at.UTC()
		case "kept":
			i.State = durable.StateDone // a retained task without a result reads as done, as in rediswheel
			if result != nil && *result == string(durable.StateCancelled) {
				i.State = durable.StateCancelled
			}
			if finished != nil {
				i.Finished = finished.UTC()
			}
		default:
			rows.Close()
			return nil, fmt.Errorf("task %q in unknown place %q", i.Key, place)
		}
		byKey[i.Key] = &i
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = tx.Query(ctx, `SELECT key, attempt, worker, started, finished, outcome, error,
		result_code, result_body, result_truncated
		FROM pgwheel_delivery WHERE namespace = $1 AND key = ANY($2) ORDER BY key, id`, s.namespace, keys)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var key string
		var d durable.Delivery
		if err := rows.Scan(&key, &d.Attempt, &d.Worker, &d.Start, &d.End, &d.Outcome, &d.Error,
			&d.Result.Code, &d.Result.Body, &d.Result.Truncated); err != nil {
			rows.Close()
			return nil, err
		}
		if len(d.Result.Body) == 0 {
			d.Result.Body = nil // none, as on every store
		}
		d.Start, d.End = d.Start.UTC(), d.End.UTC()
		if i := byKey[key]; i != nil {
			i.History = append(i.History, d)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]durable.TaskInfo, 0, len(byKey))
	for _, k := range keys {
		if i := byKey[k]; i != nil {
			out = append(out, *i)
		}
	}
	return out, nil
}
