package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
)

// listScan is how many rows of a place one List page examines at most when
// its state shares the place with another (scheduled and retrying, done and
// cancelled), as rediswheel's listScan: a page of a rare state among many
// of the other stays bounded, and ends early with a cursor.
const listScan = 256

// List is durable.Store's List: a keyset page on the index
// sqlitewheel_task_place_at, (at, key) after the position, read with the
// page's tasks in one read transaction.
func (s *Store) List(ctx context.Context, state durable.State, after *durable.ListPos, limit int) (tasks []durable.TaskInfo, next *durable.ListPos, err error) {
	place, budget := "", limit
	switch state {
	case durable.StateScheduled, durable.StateRetrying:
		place, budget = "due", max(limit, listScan)
	case durable.StateInFlight:
		place = "lease"
	case durable.StateDead:
		place = "dead"
	case durable.StateDone, durable.StateCancelled:
		place, budget = "kept", max(limit, listScan)
	default:
		return nil, nil, fmt.Errorf("sqlitewheel: list: unknown state %q", state)
	}
	if limit < 1 {
		return nil, nil, fmt.Errorf("sqlitewheel: list: limit %d", limit)
	}
	// Before every position: the smallest time, and "" sorts before every key.
	pos := durable.ListPos{At: -1 << 63}
	if after != nil {
		pos = *after
	}
	err = s.read(ctx, func(tx *sql.Tx) error {
		tasks, next = nil, nil
		rows, err := tx.QueryContext(ctx, `SELECT key, at FROM sqlitewheel_task
			WHERE namespace = ? AND place = ? AND (at, key) > (?, ?) ORDER BY at, key LIMIT ?`,
			s.namespace, place, pos.At, pos.Key, budget+1)
		if err != nil {
			return err
		}
		var scanned []durable.ListPos
		for rows.Next() {
			var p durable.ListPos
			if err := rows.Scan(&p.Key, &p.At); err != nil {
				rows.Close()
				return err
			}
			scanned = append(scanned, p)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for i, p := range scanned[:min(len(scanned), budget)] {
			info, err := s.info(ctx, tx, p.Key)
			if err != nil {
				return err
			}
			if info == nil || info.State != state {
				continue
			}
			tasks = append(tasks, *info)
			if len(tasks) == limit {
				if i+1 < len(scanned) {
					next = &p
				}
				return nil
			}
		}
		if len(scanned) > budget { // examined budget rows, more follow
			next = &scanned[budget-1]
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("sqlitewheel: list %s: %w", state, err)
	}
	return tasks, next, nil
}
