package sqlbench

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"

	"github.com/go-timingwheel/timingwheel/sqlitewheel"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite" // the driver sqlitewheel uses, for River's database/sql pool
)

// sqliteSystems are sqlitewheel and River's SQLite driver, each workload on a new file in dir.
func sqliteSystems(cfg Config, dir string) []system {
	return []system{
		{name: "sqlitewheel", open: func(ctx context.Context, id string) (instance, error) {
			path := filepath.Join(dir, "sqlitewheel-"+id+".db")
			st, err := sqlitewheel.Open(ctx, path, sqlitewheel.Options{})
			if err != nil {
				return nil, err
			}
			return newDurableInstance(cfg, st, func(context.Context) error {
				return errors.Join(st.Close(), removeSQLite(path))
			})
		}},
		{name: "riversqlite", open: func(ctx context.Context, id string) (instance, error) {
			return openRiverSQLite(ctx, cfg, filepath.Join(dir, "river-"+id+".db"))
		}},
	}
}

// openRiverSQLite makes a River database at path with sqlitewheel's durability (WAL,
// synchronous=FULL: a commit is fsynced) and, as riversqlite's documentation asks, one
// connection.
func openRiverSQLite(ctx context.Context, cfg Config, path string) (instance, error) {
	db, err := sql.Open("sqlite", path+"?_busy_timeout=5000&_journal_mode=WAL&_synchronous=FULL")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	drop := func(context.Context) error { return errors.Join(db.Close(), removeSQLite(path)) }
	driver := riversqlite.New(db)
	if err := migrateRiver(ctx, cfg, driver, ""); err != nil {
		return nil, errors.Join(err, drop(ctx))
	}
	const queue = "sqlbench"
	count := func(ctx context.Context) (n int, err error) {
		err = db.QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE queue = ? AND state <> 'completed'`, queue).Scan(&n)
		return n, err
	}
	return newRiverInstance(cfg, driver, riverOptions{queue: queue}, count, drop)
}

// migrateRiver brings River's tables in schema ("" for SQLite's main) to its latest version.
func migrateRiver[TTx any](ctx context.Context, cfg Config, driver riverdriver.Driver[TTx], schema string) error {
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: cfg.Logger, Schema: schema})
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// removeSQLite removes a database file and the WAL files beside it.
func removeSQLite(path string) error {
	var errs []error
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
