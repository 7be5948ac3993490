package pgwheel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The periodic registry (table pgwheel_periodic): per schedule name, the
// pointer, the latest occurrence added as a task (at registration, the
// registration time, which no task stands for). These are the operations
// of rediswheel's lua/periodic.lua, which the shared periodic logic drives:
// processes registering the same name share one pointer, and only the one
// whose Advance moves it adds the occurrence.

// PeriodicStatus is what a registry operation found; the numbers are
// lua/periodic.lua's.
type PeriodicStatus int

const (
	PeriodicMissing PeriodicStatus = -1 // no entry under the name (pointer zero)
	PeriodicNotDone PeriodicStatus = 0  // Register: it existed; Advance: another process moved it; Read, Remove: found
	PeriodicDone    PeriodicStatus = 1  // Register: created; Advance: moved
)

// PeriodicState is a registry operation's result.
type PeriodicState struct {
	Status  PeriodicStatus
	Pointer time.Time // the entry's pointer after the operation (Remove: the one removed)
	Now     time.Time // the database clock
}

func (s *Store) periodicOp(ctx context.Context, op, sql, name string, args ...any) (PeriodicState, error) {
	if err := checkText(name, MaxKeyLen); err != nil {
		return PeriodicState{}, fmt.Errorf("%w: periodic name: %w", ErrArgument, err)
	}
	var st PeriodicState
	var status, pointer int64
	if err := s.pool.QueryRow(ctx, sql, append([]any{s.namespace, name}, args...)...).Scan(&status, &pointer, &st.Now); err != nil {
		return PeriodicState{}, fmt.Errorf("pgwheel: periodic %s %q: %w", op, name, err)
	}
	st.Status, st.Now = PeriodicStatus(status), st.Now.UTC()
	if pointer >= 0 {
		st.Pointer = fromMillis(pointer)
	}
	return st, nil
}

// PeriodicRegister creates the entry at the database clock unless it
// exists.
func (s *Store) PeriodicRegister(ctx context.Context, name string) (PeriodicState, error) {
	return s.periodicOp(ctx, "register", `WITH c AS (SELECT * FROM pgwheel_clock()),
	ins AS (
		INSERT INTO pgwheel_periodic (namespace, name, pointer) SELECT $1, $2, c.now FROM c
		ON CONFLICT (namespace, name) DO NOTHING RETURNING pointer)
	SELECT CASE WHEN EXISTS (SELECT 1 FROM ins) THEN 1 ELSE 0 END,
		`+msOf(`coalesce((SELECT pointer FROM ins), (SELECT pointer FROM pgwheel_periodic WHERE namespace = $1 AND name = $2))`)+`,
		c.now FROM c`, name)
}

// PeriodicRead reads the entry.
func (s *Store) PeriodicRead(ctx context.Context, name string) (PeriodicState, error) {
	return s.periodicOp(ctx, "read", `SELECT CASE WHEN p.pointer IS NULL THEN -1 ELSE 0 END,
		`+msOf(`p.pointer`)+`, c.now
		FROM pgwheel_clock() c LEFT JOIN pgwheel_periodic p ON p.namespace = $1 AND p.name = $2`, name)
}

// PeriodicAdvance moves the pointer from old to next (next must be after
// old: a pointer that went back would let an occurrence be added again
// after it ran), unless another process moved it first (PeriodicNotDone,
// with the pointer it holds).
func (s *Store) PeriodicAdvance(ctx context.Context, name string, old, next time.Time) (PeriodicState, error) {
	old, next = timeCeil(old), timeCeil(next)
	if !next.After(old) {
		return PeriodicState{}, fmt.Errorf("%w: periodic advance %q: %v is not after %v", ErrArgument, name, next, old)
	}
	if err := checkText(name, MaxKeyLen); err != nil {
		return PeriodicState{}, fmt.Errorf("%w: periodic name: %w", ErrArgument, err)
	}
	var st PeriodicState
	// The row lock first: a process that lost the race then reads the
	// pointer the winner wrote, not its snapshot's.
	err := s.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		st = PeriodicState{Status: PeriodicMissing}
		var cur time.Time
		err := tx.QueryRow(ctx, `SELECT c.now, p.pointer FROM pgwheel_clock() c, pgwheel_periodic p
			WHERE p.namespace = $1 AND p.name = $2 FOR UPDATE OF p`, s.namespace, name).Scan(&st.Now, &cur)
		if errors.Is(err, pgx.ErrNoRows) {
			return tx.QueryRow(ctx, clockSQL).Scan(&st.Now, new(time.Time))
		}
		if err != nil {
			return err
		}
		st.Status, st.Pointer = PeriodicNotDone, cur.UTC()
		if !cur.Equal(old) {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE pgwheel_periodic SET pointer = $3 WHERE namespace = $1 AND name = $2`,
			s.namespace, name, next); err != nil {
			return err
		}
		st.Status, st.Pointer = PeriodicDone, next.UTC()
		return nil
	})
	if err != nil {
		return PeriodicState{}, fmt.Errorf("pgwheel: periodic advance %q: %w", name, err)
	}
	st.Now = st.Now.UTC()
	return st, nil
}

// PeriodicRemove deletes the entry, returning the pointer it held.
func (s *Store) PeriodicRemove(ctx context.Context, name string) (PeriodicState, error) {
	return s.periodicOp(ctx, "remove", `WITH c AS (SELECT * FROM pgwheel_clock()),
	del AS (DELETE FROM pgwheel_periodic WHERE namespace = $1 AND name = $2 RETURNING pointer)
	SELECT CASE WHEN EXISTS (SELECT 1 FROM del) THEN 0 ELSE -1 END, `+msOf(`(SELECT pointer FROM del)`)+`, c.now FROM c`, name)
}
