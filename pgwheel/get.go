package pgwheel

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// State is where a task is in its life; the spellings are rediswheel's.
//
//	scheduled  place due, never delivered yet (or replaced since)
//	retrying   place due after an attempt was counted or an error recorded
//	in flight  place lease
//	dead       place dead
//	done       place kept, result done (retained)
//	cancelled  place kept, result cancelled (retained)
type State string

const (
	StateScheduled State = "scheduled"
	StateRetrying  State = "retrying"
	StateInFlight  State = "in flight"
	StateDead      State = "dead"
	StateDone      State = "done"
	StateCancelled State = "cancelled"
)

// TaskInfo is what Get and List tell about one task, read from one
// snapshot. Times are by the database clock, to the millisecond; zero when
// not applicable. The fields mean what rediswheel's TaskInfo's mean.
type TaskInfo struct {
	Key         string
	Type        string
	State       State
	Due         time.Time // next delivery (scheduled, retrying) or lease end (in flight)
	OriginalDue time.Time
	Attempts    int
	LastError   string
	PayloadSize int
	Added       time.Time
	Started     time.Time // when its last delivery began
	Finished    time.Time // when it died (dead) or finished (done, cancelled)
	Timeout     time.Duration
	MaxAttempts int
	History     []Delivery // oldest first
}

// Delivery is one past delivery of a task: a row of the execution log.
type Delivery struct {
	Attempt    int
	Worker     string
	Start, End time.Time
	Outcome    string // done, retry, dead, release, later, cancelled, lease expired
	Error      string
}

// Get reads one task; ErrNotFound when the key is in no state.
func (s *Store) Get(ctx context.Context, key string) (TaskInfo, error) {
	if err := checkKey(key); err != nil {
		return TaskInfo{}, err
	}
	var infos []TaskInfo
	err := s.inTx(ctx, snapshotTx, func(tx pgx.Tx) error {
		var err error
		infos, err = s.infos(ctx, tx, []string{key})
		return err
	})
	if err != nil {
		return TaskInfo{}, fmt.Errorf("pgwheel: get %q: %w", key, err)
	}
	if len(infos) == 0 {
		return TaskInfo{}, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	return infos[0], nil
}

// snapshotTx reads several statements from one snapshot.
var snapshotTx = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// infos reads the tasks of keys that exist, in the order of keys.
func (s *Store) infos(ctx context.Context, tx pgx.Tx, keys []string) ([]TaskInfo, error) {
	rows, err := tx.Query(ctx, `SELECT t.key, t.type, t.place, t.at, t.original_due, t.attempts, t.last_error,
		t.payload_size, t.added, t.started, t.timeout_ms, t.max_attempts, r.state, r.finished
		FROM pgwheel_task t LEFT JOIN pgwheel_result r USING (namespace, key)
		WHERE t.namespace = $1 AND t.key = ANY($2)`, s.namespace, keys)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]*TaskInfo, len(keys))
	for rows.Next() {
		var i TaskInfo
		var place string
		var at time.Time
		var started, finished *time.Time
		var result *string
		var timeout int64
		if err := rows.Scan(&i.Key, &i.Type, &place, &at, &i.OriginalDue, &i.Attempts, &i.LastError,
			&i.PayloadSize, &i.Added, &started, &timeout, &i.MaxAttempts, &result, &finished); err != nil {
			rows.Close()
			return nil, err
		}
		i.Timeout = time.Duration(timeout) * time.Millisecond
		i.OriginalDue, i.Added = i.OriginalDue.UTC(), i.Added.UTC()
		if started != nil {
			i.Started = started.UTC()
		}
		switch place {
		case "due":
			i.State, i.Due = StateScheduled, at.UTC()
			if i.Attempts > 0 || i.LastError != "" {
				i.State = StateRetrying
			}
		case "lease":
			i.State, i.Due = StateInFlight, at.UTC()
		case "dead":
			i.State, i.Finished = StateDead, at.UTC()
		case "kept":
			i.State = StateDone // a retained task without a result reads as done, as in rediswheel
			if result != nil && *result == string(StateCancelled) {
				i.State = StateCancelled
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
	rows, err = tx.Query(ctx, `SELECT key, attempt, worker, started, finished, outcome, error
		FROM pgwheel_delivery WHERE namespace = $1 AND key = ANY($2) ORDER BY key, id`, s.namespace, keys)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var key string
		var d Delivery
		if err := rows.Scan(&key, &d.Attempt, &d.Worker, &d.Start, &d.End, &d.Outcome, &d.Error); err != nil {
			rows.Close()
			return nil, err
		}
		d.Start, d.End = d.Start.UTC(), d.End.UTC()
		if i := byKey[key]; i != nil {
			i.History = append(i.History, d)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]TaskInfo, 0, len(byKey))
	for _, k := range keys {
		if i := byKey[k]; i != nil {
			out = append(out, *i)
		}
	}
	return out, nil
}
