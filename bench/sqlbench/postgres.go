package sqlbench

import (
	"context"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/pgwheel"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// TunedFetchPollInterval is the River system "river-tuned"'s FetchPollInterval (default 1 s).
const TunedFetchPollInterval = 50 * time.Millisecond

// newPool opens a pool of cfg.PoolSize connections on cfg.PostgresDSN: each PostgreSQL system
// gets one of its own, of the same size, with a connection open for each producer (see warm;
// all of them, three pools of 40, would pass the server's default max_connections of 100).
func newPool(ctx context.Context, cfg Config) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(cfg.PostgresDSN)
	if err != nil {
		return nil, err
	}
	pc.MaxConns = int32(cfg.PoolSize)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, err
	}
	if err := warm(ctx, pool, min(cfg.Producers, cfg.PoolSize)); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// warm opens n connections of pool at once and gives them back, so that no system opens the
// connections its producers use inside a measurement, as a running application's pool has
// them open. (pgwheel coalesces single adds onto a connection or two, so without it pgwheel's
// first batch workload opened its pool: docs/bench/sql.md, "Batch adds, round 1".)
func warm(ctx context.Context, pool *pgxpool.Pool, n int) error {
	conns := make([]*pgxpool.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for range n {
		c, err := pool.Acquire(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	return nil
}

// pgwheelSystem is a durable.Queue on pgwheel, each workload in a namespace of its own whose
// rows are deleted afterwards.
func pgwheelSystem(cfg Config, pool *pgxpool.Pool, run string) system {
	return system{name: "pgwheel", open: func(ctx context.Context, id string) (instance, error) {
		ns := fmt.Sprintf("sqlbench-%s-%s", run, id)
		st, err := pgwheel.New(pool, ns)
		if err != nil {
			return nil, err
		}
		return newDurableInstance(cfg, st, func(ctx context.Context) error {
			// The execution log and results go with their task (ON DELETE CASCADE).
			_, err := pool.Exec(ctx, `DELETE FROM pgwheel_task WHERE namespace = $1`, ns)
			if err == nil {
				_, err = pool.Exec(ctx, `DELETE FROM pgwheel_queue WHERE namespace = $1`, ns)
			}
			return err
		})
	}}
}

// riverPostgresSystem is River on pool, its tables in cfg.RiverSchema (migrated by setUp), each
// workload on a queue of its own whose jobs are deleted afterwards.
func riverPostgresSystem(cfg Config, pool *pgxpool.Pool, name, run string, cooldown, poll time.Duration, only ...Workload) system {
	schema := pgx.Identifier{cfg.RiverSchema}.Sanitize()
	return system{name: name, only: only, open: func(ctx context.Context, id string) (instance, error) {
		queue := fmt.Sprintf("sqlbench-%s-%s-%s", run, name, id)
		count := func(ctx context.Context) (n int, err error) {
			err = pool.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.river_job WHERE queue = $1 AND state <> 'completed'`, queue).Scan(&n)
			return n, err
		}
		drop := func(ctx context.Context) error {
			_, err := pool.Exec(ctx, `DELETE FROM `+schema+`.river_job WHERE queue = $1`, queue)
			if err == nil {
				_, err = pool.Exec(ctx, `DELETE FROM `+schema+`.river_queue WHERE name = $1`, queue)
			}
			return err
		}
		return newRiverInstance(cfg, riverpgxv5.New(pool), riverOptions{schema: cfg.RiverSchema, queue: queue, cooldown: cooldown, poll: poll}, count, drop)
	}}
}

// postgresSystems opens a pool per PostgreSQL system and migrates pgwheel's tables and River's
// schema. close closes
// the pools.
func postgresSystems(ctx context.Context, cfg Config, run string) (systems []system, closeAll func(), err error) {
	var pools []*pgxpool.Pool
	closePools := func() {
		for _, p := range pools {
			p.Close()
		}
	}
	closeAll = closePools
	pool := func() (*pgxpool.Pool, error) {
		p, err := newPool(ctx, cfg)
		if err == nil {
			pools = append(pools, p)
		}
		return p, err
	}
	defer func() {
		if err != nil {
			closePools() // closeAll is nil by now
		}
	}()

	pp, err := pool()
	if err != nil {
		return nil, nil, err
	}
	if err := pgwheel.Migrate(ctx, pp); err != nil {
		return nil, nil, fmt.Errorf("pgwheel migrations: %w", err)
	}
	systems = append(systems, pgwheelSystem(cfg, pp, run))
	rp, err := pool()
	if err != nil {
		return nil, nil, err
	}
	if _, err := rp.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{cfg.RiverSchema}.Sanitize()); err != nil {
		return nil, nil, err
	}
	if err := migrateRiver(ctx, cfg, riverpgxv5.New(rp), cfg.RiverSchema); err != nil {
		return nil, nil, fmt.Errorf("river migrations: %w", err)
	}
	systems = append(systems, riverPostgresSystem(cfg, rp, "river", run, 0, 0))
	rfp, err := pool()
	if err != nil {
		return nil, nil, err
	}
	systems = append(systems, riverPostgresSystem(cfg, rfp, "river-tuned", run, river.FetchCooldownMin, TunedFetchPollInterval, Fires, Lateness))
	return systems, closeAll, nil
}
