package pgwheel

import (
	"context"
	"embed"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The migrations, one file per schema version, named NNNN_what.sql and
// numbered from 1 without gaps. A released file is never edited: a change
// is the next file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// allMigrations reads the embedded files in version order. A gap, a
// duplicate or a badly named file is a build defect, so it panics (the
// tests load them).
func allMigrations() []migration {
	entries, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		panic("pgwheel: migrations: " + err.Error())
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			panic("pgwheel: migration file " + e.Name() + " is not NNNN_what.sql")
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			panic("pgwheel: migrations: " + err.Error())
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			panic(fmt.Sprintf("pgwheel: migration %s: want version %d", m.name, i+1))
		}
	}
	return ms
}

// SchemaVersion is the schema version this code works with: the newest
// migration's.
var SchemaVersion = len(allMigrations())

// Beginner is what Migrate needs: a *pgxpool.Pool, a *pgx.Conn or a pgx.Tx
// (then Migrate runs in a savepoint of it).
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// migrateLock is the transaction-level advisory lock Migrate holds, so that
// processes migrating at once apply each migration once. Any fixed number
// works; this one is "pgwheel" in ASCII.
const migrateLock = 0x7067776865656c

// Migrate brings the database's pgwheel schema up to SchemaVersion: it
// creates the table pgwheel_schema (one row per applied version) if absent
// and applies the missing migrations in order, all in one transaction, so a
// failure leaves the schema as it was. Re-running it on a current database
// changes nothing. A database whose schema is newer than this code is left
// untouched and reported with ErrSchemaTooNew: an older binary must not run
// against tables it does not know.
//
// Nothing in this package migrates by itself: a Store's operations fail on
// a database that was not migrated (CheckSchema tells why).
func Migrate(ctx context.Context, db Beginner) error {
	return migrateTo(ctx, db, SchemaVersion)
}

// migrateTo is Migrate up to version (<= SchemaVersion): the tests make
// databases of an older version with it.
func migrateTo(ctx context.Context, db Beginner, version int) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgwheel: migrate: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
		return fmt.Errorf("pgwheel: migrate: lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS pgwheel_schema (
		version integer PRIMARY KEY,
		applied timestamptz NOT NULL DEFAULT clock_timestamp())`); err != nil {
		return fmt.Errorf("pgwheel: migrate: %w", err)
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM pgwheel_schema`).Scan(&current); err != nil {
		return fmt.Errorf("pgwheel: migrate: %w", err)
	}
	if current > SchemaVersion {
		return fmt.Errorf("%w: database at version %d, this code knows up to %d", ErrSchemaTooNew, current, SchemaVersion)
	}
	for _, m := range allMigrations()[min(current, version):version] {
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("pgwheel: migrate: %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO pgwheel_schema (version) VALUES ($1)`, m.version); err != nil {
			return fmt.Errorf("pgwheel: migrate: %s: %w", m.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgwheel: migrate: commit: %w", err)
	}
	return nil
}

// DatabaseSchemaVersion reads the version the database was migrated to, 0
// when Migrate never ran on it.
func DatabaseSchemaVersion(ctx context.Context, db Querier) (int, error) {
	var exists bool
	if err := db.QueryRow(ctx, `SELECT to_regclass('pgwheel_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("pgwheel: schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := db.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM pgwheel_schema`).Scan(&v); err != nil {
		return 0, fmt.Errorf("pgwheel: schema version: %w", err)
	}
	return v, nil
}

// CheckSchema reports whether the database is at SchemaVersion: nil, or an
// error wrapping ErrSchemaTooOld or ErrSchemaTooNew.
func CheckSchema(ctx context.Context, db Querier) error {
	v, err := DatabaseSchemaVersion(ctx, db)
	switch {
	case err != nil:
		return err
	case v < SchemaVersion:
		return fmt.Errorf("%w (database at version %d, code at %d)", ErrSchemaTooOld, v, SchemaVersion)
	case v > SchemaVersion:
		return fmt.Errorf("%w (database at version %d, code at %d)", ErrSchemaTooNew, v, SchemaVersion)
	}
	return nil
}
