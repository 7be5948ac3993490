package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/pgwheel"
	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/sqlitewheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
)

// schemaCheckTimeout bounds New's look at a PostgreSQL store's schema: a
// database that is not reachable at once is left to the readiness check.
const schemaCheckTimeout = 5 * time.Second

// openTimeout bounds opening a store that opens at once (a SQLite file).
const openTimeout = 30 * time.Second

// backend is the store a Server keeps its tasks and schedule definitions
// in, with what Server needs of its connection: a readiness probe and a
// close.
type backend struct {
	kind  string // "redis", "postgres" or "sqlite": for the log
	store durable.Store
	redis redis.UniversalClient // the Redis store's client (tests hook it); nil on another store
	// streams is the Redis that stream tasks append to (openStreams); nil:
	// none, and the API refuses stream tasks.
	streams redis.UniversalClient
	defs    schedules.Definitions
	// ping checks the connection (readiness, with the Queue's Stats).
	ping  func(ctx context.Context) error
	close func() error
}

// openBackend opens the store cfg names. Its errors are configuration
// mistakes (a URL its driver cannot parse) or, for a store that must be
// opened at once (a SQLite file), why it could not be.
func openBackend(cfg config.Config) (*backend, error) {
	var b *backend
	var err error
	switch cfg.Store {
	case config.StoreRedis:
		b, err = openRedis(cfg)
	case config.StoreSQLite:
		b, err = openSQLite(cfg)
	case config.StorePostgres:
		b, err = openPostgres(cfg)
	default:
		return nil, fmt.Errorf("server: store %q is not available", cfg.Store)
	}
	if err != nil {
		return nil, err
	}
	if err := b.openStreams(cfg.Streams); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// openStreams sets b.streams: a client of its own for -stream-redis-url
// (connecting lazily, as the store's: a stream Redis that is down fails
// the stream tasks' deliveries, which are retried), else the Redis store's
// client, else none. b.close then closes a client of its own too.
func (b *backend) openStreams(s config.Streams) error {
	if s.RedisURL == "" {
		b.streams = b.redis
		return nil
	}
	client, err := connect(s.RedisURL, s.RedisCluster, "-stream-redis-url")
	if err != nil {
		return err
	}
	closeStore := b.close
	b.streams, b.close = client, func() error { return errors.Join(closeStore(), client.Close()) }
	return nil
}

// openRedis connects to Redis lazily: go-redis dials at the first command,
// so a Server starts with Redis down and /readyz says so.
func openRedis(cfg config.Config) (*backend, error) {
	client, err := connect(cfg.RedisURL, cfg.RedisCluster, "-redis-url")
	if err != nil {
		return nil, err
	}
	st, err := rediswheel.NewStore(client, cfg.Namespace, cfg.Shards)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("server: %w", err)
	}
	return &backend{kind: "redis", store: st, redis: client, defs: schedules.WithErrors(schedules.RedisDefinitions(client, cfg.Namespace), rediswheel.Unavailable),
		ping: func(ctx context.Context) error { return client.Ping(ctx).Err() }, close: client.Close}, nil
}

// connect makes the Redis client the URL describes, a cluster client if
// cluster; credentials, database and TLS (rediss://) all come through it.
// An error names flag, the URL's.
func connect(rawURL string, cluster bool, flag string) (redis.UniversalClient, error) {
	if cluster {
		opts, err := redis.ParseClusterURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("server: %s: %w", flag, err)
		}
		return redis.NewClusterClient(opts), nil
	}
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("server: %s: %w", flag, err)
	}
	return redis.NewClient(opts), nil
}

// openSQLite opens the SQLite file (creating its directory and, for a new
// file, its schema: see sqlitewheel.Open) and keeps the schedule
// definitions in the same file.
func openSQLite(cfg config.Config) (*backend, error) {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	if err := os.MkdirAll(filepath.Dir(cfg.StorePath), 0o700); err != nil {
		return nil, fmt.Errorf("server: SQLite store: %w", err)
	}
	st, err := sqlitewheel.Open(ctx, cfg.StorePath, sqlitewheel.Options{Namespace: cfg.Namespace})
	if err != nil {
		return nil, fmt.Errorf("server: SQLite store %s: %w", cfg.StorePath, err)
	}
	db, err := sql.Open("sqlite", cfg.StorePath+"?_pragma=busy_timeout(5000)")
	if err == nil {
		var defs schedules.Definitions
		if defs, err = schedules.SQLiteDefinitions(ctx, db, cfg.Namespace); err == nil {
			return &backend{kind: "sqlite", store: st, defs: schedules.WithErrors(defs, sqlitewheel.Unavailable), ping: db.PingContext,
				close: func() error { return errors.Join(db.Close(), st.Close()) }}, nil
		}
		db.Close()
	}
	st.Close()
	return nil, fmt.Errorf("server: SQLite store %s: %w", cfg.StorePath, err)
}

// openPostgres makes a pool that connects lazily, so a Server starts with
// the database down and /readyz says so. The schema is never changed here
// (timerd migrate does it): if the database answers at once, one that was
// not migrated (or was by a newer timerd) is refused now, with what to run;
// the readiness check tells it too.
func openPostgres(cfg config.Config) (*backend, error) {
	pcfg, err := pgxpool.ParseConfig(cfg.StoreURL)
	if err != nil {
		return nil, errors.New("server: -store: not a PostgreSQL URL pgx can read") // its error may quote the password
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		return nil, fmt.Errorf("server: PostgreSQL store: %w", err)
	}
	st, err := pgwheel.New(pool, cfg.Namespace)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("server: %w", err)
	}
	check := func(ctx context.Context) error {
		if err := pgwheel.CheckSchema(ctx, pool); err != nil {
			return err
		}
		return schedules.CheckPostgres(ctx, pool)
	}
	ctx, cancel := context.WithTimeout(context.Background(), schemaCheckTimeout)
	defer cancel()
	switch err := check(ctx); {
	case errors.Is(err, pgwheel.ErrSchemaTooNew):
		// A newer timerd migrated it: this one must not run on it, and its
		// migrate refuses too (README.md, "Upgrade and rollback").
		pool.Close()
		return nil, fmt.Errorf("server: PostgreSQL store: %w (this timerd is older than the database: run the timerd that migrated it, or restore the backup taken before)", err)
	case errors.Is(err, pgwheel.ErrSchemaTooOld) || errors.Is(err, schedules.ErrNotMigrated):
		pool.Close()
		return nil, fmt.Errorf("server: PostgreSQL store: %w (run timerd migrate with the same -store)", err)
	}
	return &backend{kind: "postgres", store: st, defs: schedules.WithErrors(schedules.PostgresDefinitions(pool, cfg.Namespace), pgwheel.Unavailable),
		ping: check, close: func() error { pool.Close(); return nil }}, nil
}
