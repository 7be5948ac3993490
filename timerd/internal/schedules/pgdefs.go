package schedules

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgTable holds the definitions of every namespace on a PostgreSQL store,
// beside pgwheel's tables; MigratePostgres creates it.
const pgTable = `CREATE TABLE IF NOT EXISTS timerd_schedule (
	namespace  text  NOT NULL,
	name       text  NOT NULL,
	definition bytea NOT NULL,
	PRIMARY KEY (namespace, name)
)`

// MigratePostgres creates timerd's own table (timerd migrate runs it after
// pgwheel.Migrate); it is idempotent.
func MigratePostgres(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, pgTable); err != nil {
		return fmt.Errorf("schedules: create timerd_schedule: %w", err)
	}
	return nil
}

// ErrNotMigrated reports a PostgreSQL database without timerd's table:
// timerd migrate was not run on it.
var ErrNotMigrated = errors.New("schedules: the database was not migrated for timerd")

// CheckPostgres reports whether timerd's table exists, so that a server
// started before `timerd migrate` says so instead of failing every call.
func CheckPostgres(ctx context.Context, pool *pgxpool.Pool) error {
	var ok bool
	err := pool.QueryRow(ctx, `SELECT to_regclass('timerd_schedule') IS NOT NULL`).Scan(&ok)
	if err == nil && !ok {
		err = fmt.Errorf("%w: table timerd_schedule is missing", ErrNotMigrated)
	}
	return err
}

// pgDefinitions keeps the definitions in timerd_schedule. A transaction
// holding an advisory lock on the name makes each Swap and Delete atomic,
// the name's absence included.
type pgDefinitions struct {
	pool *pgxpool.Pool
	ns   string
}

// PostgresDefinitions returns the Definitions of namespace on pool. It
// panics on a nil pool: a mistake in the program.
func PostgresDefinitions(pool *pgxpool.Pool, namespace string) Definitions {
	if pool == nil {
		panic("schedules.PostgresDefinitions: nil pool")
	}
	return &pgDefinitions{pool: pool, ns: namespace}
}

// locked runs f in a transaction that holds the name's advisory lock.
func (p *pgDefinitions) locked(ctx context.Context, name string, f func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('timerd_schedule:' || $1 || ':' || $2, 0))`, p.ns, name); err != nil {
			return err
		}
		return f(tx)
	})
}

func (p *pgDefinitions) Swap(ctx context.Context, name string, raw []byte) (old []byte, err error) {
	err = p.locked(ctx, name, func(tx pgx.Tx) error {
		if old, err = getDefinition(ctx, tx, p.ns, name); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO timerd_schedule (namespace, name, definition) VALUES ($1, $2, $3)
			ON CONFLICT (namespace, name) DO UPDATE SET definition = excluded.definition`, p.ns, name, raw)
		return err
	})
	return old, err
}

func (p *pgDefinitions) Get(ctx context.Context, name string) ([]byte, error) {
	return getDefinition(ctx, p.pool, p.ns, name)
}

func (p *pgDefinitions) All(ctx context.Context) (map[string][]byte, error) {
	rows, err := p.pool.Query(ctx, `SELECT name, definition FROM timerd_schedule WHERE namespace = $1`, p.ns)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	var name string
	var raw []byte
	_, err = pgx.ForEachRow(rows, []any{&name, &raw}, func() error {
		out[name] = raw
		return nil
	})
	return out, err
}

func (p *pgDefinitions) Delete(ctx context.Context, name string) (old []byte, err error) {
	err = p.locked(ctx, name, func(tx pgx.Tx) error {
		if old, err = getDefinition(ctx, tx, p.ns, name); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM timerd_schedule WHERE namespace = $1 AND name = $2`, p.ns, name)
		return err
	})
	return old, err
}

// getDefinition reads one definition, nil if there is none.
func getDefinition(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, ns, name string) ([]byte, error) {
	var raw []byte
	err := q.QueryRow(ctx, `SELECT definition FROM timerd_schedule WHERE namespace = $1 AND name = $2`, ns, name).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return raw, err
}
