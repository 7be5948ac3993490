package pgwheel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/jackc/pgx/v5"
)

// The periodic registry (table pgwheel_periodic): per schedule name, the
// pointer, the latest occurrence added as a task (at registration, the
// registration time, which no task stands for). These are the operations
// of rediswheel's lua/periodic.lua, which the shared periodic logic drives:
// processes registering the same name share one pointer, and only the one
// whose Advance moves it adds the occurrence.

// periodicStatus is what a registry operation found; the numbers are
// lua/periodic.lua's.
type periodicStatus int

const (
	periodicMissing periodicStatus = -1 // no entry under the name (pointer zero)
	periodicNotDone periodicStatus = 0  // Register: it existed; Advance: another process moved it; Read, Remove: found
	periodicDone    periodicStatus = 1  // Register: created; Advance: moved
)

// periodicState is a registry operation's result.
type periodicState struct {
	Status  periodicStatus
	Pointer time.Time // the entry's pointer after the operation (Remove: the one removed)
	Now     time.Time // the database clock
}

// Periodic is durable.Store's Periodic. A name PostgreSQL's text cannot
// hold wraps durable.ErrPeriodicName.
func (s *Store) Periodic(ctx context.Context, op durable.PeriodicOp, name string, from, to int64) (durable.PeriodicState, error) {
	var st periodicState
	var err error
	switch op {
	case durable.PeriodicRegister:
		st, err = s.periodicRegister(ctx, name)
	case durable.PeriodicRead:
		st, err = s.periodicRead(ctx, name)
	case durable.PeriodicAdvance:
		st, err = s.periodicAdvance(ctx, name, time.UnixMilli(from), time.UnixMilli(to))
	case durable.PeriodicRemove:
		st, err = s.periodicRemove(ctx, name)
	default:
		return durable.PeriodicState{}, fmt.Errorf("%w: periodic op %q", ErrArgument, op)
	}
	if err != nil {
		return durable.PeriodicState{}, unavailable(err)
	}
	return durable.PeriodicState{Status: int64(st.Status), Pointer: max(millisOf(st.Pointer), 0), Now: st.Now.UnixMilli()}, nil
}

func (s *Store) periodicOp(ctx context.Context, op, sql, name string, args ...any) (periodicState, error) {
	if err := checkText(name, MaxKeyLen); err != nil {
		return periodicState{}, fmt.Errorf("%w: %w", durable.ErrPeriodicName, err)
	}
	var st periodicState
	var status, pointer int64
	if err := s.pool.QueryRow(ctx, sql, append([]any{s.namespace, name}, args...)...).Scan(&status, &pointer, &st.Now); err != nil {
		return periodicState{}, schemaMissing(fmt.Errorf("pgwheel: periodic %s %q: %w", op, name, err))
	}
	st.Status, st.Now = periodicStatus(status), st.Now.UTC()
	if pointer >= 0 {
		st.Pointer = fromMillis(pointer)
	}
	return st, nil
}

// periodicRegister creates the entry at the database clock unless it
// exists.
func (s *Store) periodicRegister(ctx context.Context, name string) (periodicState, error) {
	return s.periodicOp(ctx, "register", `WITH c AS (SELECT * FROM pgwheel_clock()),
	ins AS (
		INSERT INTO pgwheel_periodic (namespace, name, pointer) SELECT $1, $2, c.now FROM c
		ON CONFLICT (namespace, name) DO NOTHING RETURNING pointer)
	SELECT CASE WHEN EXISTS (SELECT 1 FROM ins) THEN 1 ELSE 0 END,
		`+msOf(`coalesce((SELECT pointer FROM ins), (SELECT pointer FROM pgwheel_periodic WHERE namespace = $1 AND name = $2))`)+`,
		c.now FROM c`, name)
}

// periodicRead reads the entry.
func (s *Store) periodicRead(ctx context.Context, name string) (periodicState, error) {
	return s.periodicOp(ctx, "read", `SELECT CASE WHEN p.pointer IS NULL THEN -1 ELSE 0 END,
		`+msOf(`p.pointer`)+`, c.now
		FROM pgwheel_clock() c LEFT JOIN pgwheel_periodic p ON p.namespace = $1 AND p.name = $2`, name)
}

// periodicAdvance moves the pointer from old to next (next must be after
// old: a pointer that went back would let an occurrence be added again
// after it ran), unless another process moved it first (periodicNotDone,
// with the pointer it holds).
func (s *Store) periodicAdvance(ctx context.Context, name string, old, next time.Time) (periodicState, error) {
	old, next = timeCeil(old), timeCeil(next)
	if !next.After(old) {
		return periodicState{}, fmt.Errorf("%w: periodic advance %q: %v is not after %v", ErrArgument, name, next, old)
	}
	if err := checkText(name, MaxKeyLen); err != nil {
		return periodicState{}, fmt.Errorf("%w: %w", durable.ErrPeriodicName, err)
	}
	var st periodicState
	// The row lock first: a process that lost the race then reads the
	// pointer the winner wrote, not its snapshot's.
	err := s.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		st = periodicState{Status: periodicMissing}
		var cur time.Time
		err := tx.QueryRow(ctx, `SELECT c.now, p.pointer FROM pgwheel_clock() c, pgwheel_periodic p
			WHERE p.namespace = $1 AND p.name = $2 FOR UPDATE OF p`, s.namespace, name).Scan(&st.Now, &cur)
		if errors.Is(err, pgx.ErrNoRows) {
			return tx.QueryRow(ctx, clockSQL).Scan(&st.Now, new(time.Time))
		}
		if err != nil {
			return err
		}
		st.Status, st.Pointer = periodicNotDone, cur.UTC()
		if !cur.Equal(old) {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE pgwheel_periodic SET pointer = $3 WHERE namespace = $1 AND name = $2`,
			s.namespace, name, next); err != nil {
			return err
		}
		st.Status, st.Pointer = periodicDone, next.UTC()
		return nil
	})
	if err != nil {
		return periodicState{}, schemaMissing(fmt.Errorf("pgwheel: periodic advance %q: %w", name, err))
	}
	st.Now = st.Now.UTC()
	return st, nil
}

// periodicRemove deletes the entry, returning the pointer it held.
func (s *Store) periodicRemove(ctx context.Context, name string) (periodicState, error) {
	return s.periodicOp(ctx, "remove", `WITH c AS (SELECT * FROM pgwheel_clock()),
	del AS (DELETE FROM pgwheel_periodic WHERE namespace = $1 AND name = $2 RETURNING pointer)
	SELECT CASE WHEN EXISTS (SELECT 1 FROM del) THEN 0 ELSE -1 END, `+msOf(`(SELECT pointer FROM del)`)+`, c.now FROM c`, name)
}
