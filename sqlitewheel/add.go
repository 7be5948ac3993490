package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// maxAddBatch caps the tasks of one add transaction: one commit (one fsync of
// the WAL) per batch, and a batch short enough that Claims and Settles wait
// little for the write lock.
const maxAddBatch = 512

// Add is durable.Store's Add: up to maxAddBatch requests per write
// transaction, in order, each as lua/add.lua stores it. Requests of a
// failed transaction share its error.
func (s *Store) Add(ctx context.Context, reqs []*durable.AddRequest) (earliest int64) {
	earliest = -1
	for len(reqs) > 0 {
		part := reqs[:min(len(reqs), maxAddBatch)]
		reqs = reqs[len(part):]
		first := int64(-1)
		err := s.write(ctx, func(tx *sql.Tx, c clock) error {
			first = -1
			var ins taskInsert
			for _, r := range part {
				status, at, err := s.addOne(ctx, tx, c, r, &ins)
				if err != nil {
					return fmt.Errorf("%q: %w", r.Key, err)
				}
				r.Status = status
				if status == durable.AddStored && (first < 0 || at < first) {
					first = at
				}
			}
			return nil
		})
		if err != nil {
			err = fmt.Errorf("sqlitewheel: add %d tasks: %w", len(part), err)
			for _, r := range part {
				r.Status, r.Err = 0, err
			}
			continue
		}
		if first >= 0 && (earliest < 0 || first < earliest) {
			earliest = first
		}
	}
	return earliest
}

// addOne stores r: Add only a new key (ON CONFLICT DO NOTHING: an existing
// key in any state, a retained one included, is left alone), Replace any
// task not in flight, which starts over: its row, log and result are
// deleted and a new row inserted. It returns the status and the due time.
// ins is the transaction's INSERT, prepared at its first use.
func (s *Store) addOne(ctx context.Context, tx *sql.Tx, c clock, r *durable.AddRequest, ins *taskInsert) (durable.AddStatus, int64, error) {
	at := r.At
	if r.Relative {
		at = c.after(r.At)
	}
	if r.Replace {
		var place string
		err := tx.QueryRowContext(ctx, `SELECT place FROM sqlitewheel_task WHERE namespace = ? AND key = ?`,
			s.namespace, r.Key).Scan(&place)
		switch {
		case err == sql.ErrNoRows:
		case err != nil:
			return 0, 0, err
		case place == "lease":
			return durable.AddInFlight, 0, nil
		default:
			if _, err := tx.ExecContext(ctx, `DELETE FROM sqlitewheel_task WHERE namespace = ? AND key = ?`,
				s.namespace, r.Key); err != nil {
				return 0, 0, err
			}
		}
	}
	payload := r.Payload
	if payload == nil {
		payload = []byte{} // the column is NOT NULL: an empty payload is x''
	}
	p := r.Policy
	res, err := ins.exec(ctx, tx, s.namespace, r.Key, at, payload, len(payload), c.now, p.Type,
		millisCeil(p.Timeout), p.MaxAttempts, millisCeil(p.BackoffBase), millisCeil(p.BackoffLimit))
	if err != nil {
		return 0, 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, 0, err
	}
	if n == 0 {
		return durable.AddExists, 0, nil
	}
	return durable.AddStored, at, nil
}

// taskInsert is addOne's INSERT, prepared once for the transaction it runs
// in (database/sql closes it at commit or rollback), so that a batch parses
// and plans it once rather than once a task (docs/bench/sql.md).
type taskInsert struct{ stmt *sql.Stmt }

const insertTaskSQL = `INSERT INTO sqlitewheel_task (namespace, key, place, at, payload, payload_size,
		added, original_due, type, timeout_ms, max_attempts, backoff_base_ms, backoff_limit_ms)
		VALUES (?1, ?2, 'due', ?3, ?4, ?5, ?6, ?3, ?7, ?8, ?9, ?10, ?11)
		ON CONFLICT (namespace, key) DO NOTHING`

func (ti *taskInsert) exec(ctx context.Context, tx *sql.Tx, args ...any) (sql.Result, error) {
	if ti.stmt == nil {
		st, err := tx.PrepareContext(ctx, insertTaskSQL)
		if err != nil {
			return nil, err
		}
		ti.stmt = st
	}
	return ti.stmt.ExecContext(ctx, args...)
}

// millisCeil is d in whole milliseconds, rounded up (a policy's duration is
// never shortened), 0 for d <= 0.
func millisCeil(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++
	}
	return ms
}

// msTime is the time of a stored Unix ms; the zero time for a NULL.
func msTime(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64)
}
