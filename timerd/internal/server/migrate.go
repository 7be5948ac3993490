package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/go-timingwheel/timingwheel/pgwheel"
	"github.com/go-timingwheel/timingwheel/sqlitewheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
)

// Migrate brings cfg's store to the schema this timerd works with, what
// `timerd migrate` runs: on PostgreSQL pgwheel.Migrate and timerd's own
// table, on SQLite sqlitewheel.Migrate and timerd's table (a new file is
// also migrated when timerd starts on it). A Redis store has no schema: it
// returns nil having done nothing, and says so in what. Running it again
// changes nothing; a store migrated by a newer timerd is refused, untouched.
func Migrate(ctx context.Context, cfg config.Config) (what string, err error) {
	switch cfg.Store {
	case config.StorePostgres:
		pcfg, err := pgxpool.ParseConfig(cfg.StoreURL)
		if err != nil {
			return "", errors.New("server: -store: not a PostgreSQL URL pgx can read")
		}
		pool, err := pgxpool.NewWithConfig(ctx, pcfg)
		if err != nil {
			return "", fmt.Errorf("server: PostgreSQL store: %w", err)
		}
		defer pool.Close()
		if err := pgwheel.Migrate(ctx, pool); err != nil {
			return "", err
		}
		if err := schedules.MigratePostgres(ctx, pool); err != nil {
			return "", err
		}
		return fmt.Sprintf("PostgreSQL store at pgwheel schema version %d, with timerd_schedule", pgwheel.SchemaVersion), nil
	case config.StoreSQLite:
		if err := os.MkdirAll(filepath.Dir(cfg.StorePath), 0o700); err != nil {
			return "", fmt.Errorf("server: SQLite store: %w", err)
		}
		if err := sqlitewheel.Migrate(ctx, cfg.StorePath, sqlitewheel.Options{Namespace: cfg.Namespace}); err != nil {
			return "", err
		}
		db, err := sql.Open("sqlite", cfg.StorePath+"?_pragma=busy_timeout(5000)")
		if err != nil {
			return "", fmt.Errorf("server: SQLite store: %w", err)
		}
		defer db.Close()
		if _, err := schedules.SQLiteDefinitions(ctx, db, cfg.Namespace); err != nil {
			return "", err
		}
		return fmt.Sprintf("SQLite store %s at sqlitewheel schema version %d, with timerd_schedule", cfg.StorePath, sqlitewheel.SchemaVersion), nil
	case config.StoreRedis:
		return "Redis store: no schema to migrate", nil
	}
	return "", fmt.Errorf("server: store %q is not available", cfg.Store)
}
