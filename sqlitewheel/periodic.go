package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Periodic is durable.Store's Periodic (lua/periodic.lua), one write
// transaction per step: the registry maps a schedule's name to its pointer,
// the Unix ms of the latest occurrence added as a task. An advance whose to
// is not after from is an error: the pointer never goes backwards.
func (s *Store) Periodic(ctx context.Context, op durable.PeriodicOp, name string, from, to int64) (durable.PeriodicState, error) {
	switch op {
	case durable.PeriodicRegister, durable.PeriodicRead, durable.PeriodicRemove:
	case durable.PeriodicAdvance:
		if to <= from {
			return durable.PeriodicState{}, fmt.Errorf("sqlitewheel: periodic %q: advance to %d is not after %d", name, to, from)
		}
	default:
		return durable.PeriodicState{}, fmt.Errorf("sqlitewheel: periodic %q: unknown op %q", name, op)
	}
	if name == "" {
		return durable.PeriodicState{}, fmt.Errorf("sqlitewheel: periodic: missing name")
	}
	var out durable.PeriodicState
	err := s.write(ctx, func(tx *sql.Tx, c clock) error {
		out = durable.PeriodicState{Now: c.now}
		var p int64
		err := tx.QueryRowContext(ctx, `SELECT pointer FROM sqlitewheel_periodic WHERE namespace = ? AND name = ?`,
			s.namespace, name).Scan(&p)
		exists := err == nil
		if err != nil && err != sql.ErrNoRows {
			return err
		}
		set := func(v int64) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO sqlitewheel_periodic (namespace, name, pointer) VALUES (?, ?, ?)
				ON CONFLICT (namespace, name) DO UPDATE SET pointer = excluded.pointer`, s.namespace, name, v)
			return err
		}
		switch {
		case op == durable.PeriodicRegister && !exists:
			out.Status, out.Pointer = 1, c.now
			return set(c.now)
		case !exists:
			out.Status = -1
		case op == durable.PeriodicRegister, op == durable.PeriodicRead:
			out.Pointer = p
		case op == durable.PeriodicRemove:
			out.Pointer = p
			_, err = tx.ExecContext(ctx, `DELETE FROM sqlitewheel_periodic WHERE namespace = ? AND name = ?`, s.namespace, name)
			return err
		case p != from: // another replica moved it
			out.Pointer = p
		default:
			out.Status, out.Pointer = 1, to
			return set(to)
		}
		return nil
	})
	if err != nil {
		return durable.PeriodicState{}, fmt.Errorf("sqlitewheel: periodic %s %q: %w", op, name, err)
	}
	return out, nil
}
