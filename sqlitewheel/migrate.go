package sqlitewheel

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"sort"
	"strconv"
	"strings"
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
		panic("sqlitewheel: migrations: " + err.Error())
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			panic("sqlitewheel: migration file " + e.Name() + " is not NNNN_what.sql")
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			panic("sqlitewheel: migrations: " + err.Error())
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			panic(fmt.Sprintf("sqlitewheel: migration %s: want version %d", m.name, i+1))
		}
	}
	return ms
}

// SchemaVersion is the schema version this code works with: the newest
// migration's.
var SchemaVersion = len(allMigrations())

// Migrate brings the file at path up to SchemaVersion, creating it if
// absent: it creates the table sqlitewheel_schema (one row per applied
// version, with the Unix ms it was applied) if absent and applies the
// missing migrations in order, all in one transaction, so a failure leaves
// the file as it was. Re-running it on a current file changes nothing. A
// file whose schema is newer than this code is left untouched and reported
// with ErrSchemaTooNew: an older binary must not run against tables it
// does not know. Call it with no Store open on the file.
func Migrate(ctx context.Context, path string, opts Options) error {
	w, err := openWriter(path, opts.BusyTimeout)
	if err != nil {
		return err
	}
	defer w.Close()
	v, err := prepareSchema(ctx, w, false)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return schemaError(v)
	}
	return nil
}

// FileSchemaVersion reads the version the file at path was migrated to, 0
// when Migrate never ran on it (or the file is new: it is then created,
// empty).
func FileSchemaVersion(ctx context.Context, path string) (int, error) {
	w, err := openWriter(path, 0)
	if err != nil {
		return 0, err
	}
	defer w.Close()
	var v int
	err = w.QueryRowContext(ctx, schemaVersionSQL).Scan(&v)
	if err != nil && !strings.Contains(err.Error(), "no such table") {
		return 0, fmt.Errorf("sqlitewheel: schema version: %w", classify(err))
	}
	return v, nil
}

const schemaVersionSQL = `SELECT coalesce(max(version), 0) FROM sqlitewheel_schema`

// schemaError tells why a file at version v cannot be used.
func schemaError(v int) error {
	if v > SchemaVersion {
		return fmt.Errorf("%w (file at version %d, code at %d)", ErrSchemaTooNew, v, SchemaVersion)
	}
	return fmt.Errorf("%w (file at version %d, code at %d)", ErrSchemaTooOld, v, SchemaVersion)
}

// prepareSchema runs in one write transaction: it reads the file's schema
// version and applies the missing migrations if the file is brand new (it
// holds no table at all) or if all is set. It returns the version the file
// is at afterwards; a newer file is left untouched.
func prepareSchema(ctx context.Context, w *sql.DB, onlyNew bool) (version int, err error) {
	tx, err := beginWrite(ctx, w, 0) // IMMEDIATE: two processes migrating at once apply each migration once
	if err != nil {
		return 0, fmt.Errorf("sqlitewheel: migrate: %w", classify(err))
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	var tables int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		return 0, fmt.Errorf("sqlitewheel: migrate: %w", classify(err))
	}
	var current int
	var hasSchema int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'sqlitewheel_schema'`).Scan(&hasSchema); err != nil {
		return 0, fmt.Errorf("sqlitewheel: migrate: %w", classify(err))
	}
	if hasSchema > 0 {
		if err := tx.QueryRowContext(ctx, schemaVersionSQL).Scan(&current); err != nil {
			return 0, fmt.Errorf("sqlitewheel: migrate: %w", classify(err))
		}
	}
	if current >= SchemaVersion || (onlyNew && tables > 0) {
		return current, nil
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS sqlitewheel_schema (
		version INTEGER PRIMARY KEY,
		applied INTEGER NOT NULL)`); err != nil {
		return 0, fmt.Errorf("sqlitewheel: migrate: %w", classify(err))
	}
	for _, m := range allMigrations()[current:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return 0, fmt.Errorf("sqlitewheel: migrate: %s: %w", m.name, classify(err))
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sqlitewheel_schema (version, applied) VALUES (?, ?)`,
			m.version, readClock().now); err != nil {
			return 0, fmt.Errorf("sqlitewheel: migrate: %s: %w", m.name, classify(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("sqlitewheel: migrate: commit: %w", classify(err))
	}
	return SchemaVersion, nil
}
