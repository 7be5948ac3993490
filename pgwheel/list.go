package pgwheel

import (
	"context"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// List is durable.Store's List, in one snapshot (there is one partition):
// it pages through the tasks in state, ordered by their time in that
// state (due time, lease end, death, end of retention), then key, after
// the position after (nil for the start); next is nil after the last page.
// The position is a key of the place's index, pgwheel_task_due, _lease,
// _dead or _kept (keyset paging; the place is a constant in the SQL, as a
// partial index's predicate needs):
// a task that stays put is listed exactly once whatever changes around it;
// one that moves may be listed twice or not at all. Each page is one
// snapshot.
func (s *Store) List(ctx context.Context, state durable.State, after *durable.ListPos, limit int) (tasks []durable.TaskInfo, next *durable.ListPos, err error) {
	defer func() { err = unavailable(err) }()
	place, filter := "", ""
	switch state {
	case durable.StateScheduled:
		place, filter = "due", "AND t.attempts = 0 AND t.last_error = ''"
	case durable.StateRetrying:
		place, filter = "due", "AND (t.attempts > 0 OR t.last_error <> '')"
	case durable.StateInFlight:
		place = "lease"
	case durable.StateDead:
		place = "dead"
	case durable.StateDone:
		place, filter = "kept", "AND coalesce(r.state, 'done') = 'done'"
	case durable.StateCancelled:
		place, filter = "kept", "AND r.state = 'cancelled'"
	default:
		return nil, nil, fmt.Errorf("%w: %q", durable.ErrState, state)
	}
	if limit < 1 || limit > durable.MaxListLimit {
		return nil, nil, fmt.Errorf("%w: %d (want 1..%d)", durable.ErrLimit, limit, durable.MaxListLimit)
	}
	afterAt := pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true} // before every time
	afterKey := ""
	if after != nil {
		afterAt = pgtype.Timestamptz{Time: time.UnixMilli(after.At), Valid: true}
		afterKey = after.Key
	}
	err = s.inTx(ctx, snapshotTx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT t.key, t.at FROM pgwheel_task t
			LEFT JOIN pgwheel_result r USING (namespace, key)
			WHERE t.namespace = $1 AND t.place = '`+place+`' AND (t.at, t.key) > ($2, $3) `+filter+`
			ORDER BY t.at, t.key LIMIT $4`, s.namespace, afterAt, afterKey, limit+1)
		if err != nil {
			return err
		}
		var keys []string
		var last time.Time
		for rows.Next() {
			var k string
			if err := rows.Scan(&k, &last); err != nil {
				rows.Close()
				return err
			}
			keys = append(keys, k)
			if len(keys) == limit {
				next = &durable.ListPos{At: last.UnixMilli(), Key: k}
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(keys) <= limit {
			next = nil // no row past this page
		} else {
			keys = keys[:limit]
		}
		tasks, err = s.infos(ctx, tx, keys)
		return err
	})
	if err != nil {
		return nil, nil, schemaMissing(fmt.Errorf("pgwheel: list %s: %w", state, err))
	}
	return tasks, next, nil
}
