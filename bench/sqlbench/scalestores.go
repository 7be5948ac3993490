package sqlbench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-timingwheel/timingwheel/pgwheel"
	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/sqlitewheel"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// openScalePostgres migrates pgwheel's tables into a schema of this run's (so that their size
// is the backlog's alone) and opens a store on it with a pool of Producers + Concurrency/4 + 8
// connections, as the comparison's (newPool). drop drops the schema.
func openScalePostgres(ctx context.Context, cfg ScaleConfig, run string) (*scaleStore, error) {
	if cfg.PostgresDSN == "" {
		return nil, errors.New("postgres: no DSN")
	}
	schema := "sqlscale_" + run
	pc, err := pgxpool.ParseConfig(cfg.PostgresDSN)
	if err != nil {
		return nil, err
	}
	pc.ConnConfig.RuntimeParams["search_path"] = schema
	pc.MaxConns = int32(cfg.Producers + cfg.Concurrency/4 + 8)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, err
	}
	dropSchema := func(ctx context.Context, keep bool) error {
		var err error
		if !keep {
			_, err = pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
		}
		pool.Close()
		return err
	}
	if _, err := pool.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
		return nil, errors.Join(err, dropSchema(ctx, false))
	}
	if err := pgwheel.Migrate(ctx, pool); err != nil {
		return nil, errors.Join(err, dropSchema(ctx, false))
	}
	const ns = "scale"
	st, err := pgwheel.New(pool, ns)
	if err != nil {
		return nil, errors.Join(err, dropSchema(ctx, false))
	}
	return &scaleStore{
		store: st,
		size: func(ctx context.Context) ([]int64, error) {
			var n int64
			err := pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
				FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
				WHERE n.nspname = $1 AND c.relkind = 'r'`, schema).Scan(&n)
			return []int64{n}, err
		},
		timerd: func() ([]string, []string) {
			u, err := url.Parse(cfg.PostgresDSN)
			if err != nil { // ParseConfig read it: a keyword/value DSN, which timerd does not take
				return []string{"-store", "postgres://invalid"}, nil
			}
			v := u.Query()
			v.Set("search_path", schema)
			u.RawQuery = v.Encode()
			return []string{"-store", u.String(), "-namespace", ns}, nil
		},
		where: "PostgreSQL schema " + schema + ", namespace " + ns,
		drop:  dropSchema,
	}, nil
}

// openScaleSQLite opens a new file in cfg.SQLiteDir; drop removes it.
func openScaleSQLite(ctx context.Context, cfg ScaleConfig) (*scaleStore, error) {
	if cfg.SQLiteDir == "" {
		return nil, errors.New("sqlite: no directory")
	}
	path := filepath.Join(cfg.SQLiteDir, "sqlscale.db")
	if err := removeSQLite(path); err != nil {
		return nil, err
	}
	st, err := sqlitewheel.Open(ctx, path, sqlitewheel.Options{})
	if err != nil {
		return nil, err
	}
	return &scaleStore{
		store: st,
		size: func(ctx context.Context) ([]int64, error) {
			// The WAL's pages into the file, so that its size is the data's.
			if _, err := st.DB().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
				return nil, err
			}
			var n int64
			for _, p := range []string{path, path + "-wal"} {
				fi, err := os.Stat(p)
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					return nil, err
				}
				if err == nil {
					n += fi.Size()
				}
			}
			return []int64{n}, nil
		},
		timerd: func() ([]string, []string) {
			return []string{"-store", "sqlite:" + path, "-namespace", sqlitewheel.DefaultNamespace}, nil
		},
		where: "SQLite file " + path,
		drop: func(_ context.Context, keep bool) error {
			if keep {
				return st.Close()
			}
			return errors.Join(st.Close(), removeSQLite(path))
		},
	}, nil
}

// openScaleRedisCluster opens a store of rediswheel's default shard count on a namespace of this
// run's; size is used_memory per master; drop deletes the namespace's keys.
func openScaleRedisCluster(ctx context.Context, cfg ScaleConfig, run string) (*scaleStore, error) {
	if len(cfg.RedisClusterAddrs) == 0 {
		return nil, errors.New("redis-cluster: no addresses")
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cfg.RedisClusterAddrs})
	ns := "sqlscale-" + run
	st, err := rediswheel.NewStore(c, ns, rediswheel.DefaultShards)
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if err := c.Ping(ctx).Err(); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	masters, err := clusterMasters(ctx, c)
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return &scaleStore{
		store: st,
		size: func(ctx context.Context) ([]int64, error) {
			out := make([]int64, len(masters))
			for i, m := range masters {
				info, err := m.Info(ctx, "memory").Result()
				if err != nil {
					return nil, err
				}
				if out[i], err = infoField(info, "used_memory"); err != nil {
					return nil, err
				}
			}
			return out, nil
		},
		timerd: func() ([]string, []string) {
			u := "redis://" + cfg.RedisClusterAddrs[0]
			for i, a := range cfg.RedisClusterAddrs[1:] {
				sep := "&"
				if i == 0 {
					sep = "?"
				}
				u += sep + "addr=" + a
			}
			return []string{"-store", u, "-redis-cluster", "-namespace", ns, "-shards", strconv.Itoa(rediswheel.DefaultShards)}, nil
		},
		where: "Redis namespace " + ns,
		drop: func(ctx context.Context, keep bool) error {
			var errs []error
			for _, m := range masters {
				if !keep {
					errs = append(errs, deleteKeys(ctx, m, "{"+ns+".*"))
				}
				errs = append(errs, m.Close())
			}
			return errors.Join(append(errs, c.Close())...)
		},
	}, nil
}

// clusterMasters opens a client on each master of c, in the order of their addresses.
func clusterMasters(ctx context.Context, c *redis.ClusterClient) ([]*redis.Client, error) {
	var addrs []string
	slots, err := c.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	for _, s := range slots {
		if len(s.Nodes) > 0 && !slices.Contains(addrs, s.Nodes[0].Addr) {
			addrs = append(addrs, s.Nodes[0].Addr)
		}
	}
	if len(addrs) == 0 {
		return nil, errors.New("redis-cluster: no master")
	}
	slices.Sort(addrs)
	var out []*redis.Client
	for _, a := range addrs {
		out = append(out, redis.NewClient(&redis.Options{Addr: a}))
	}
	return out, nil
}

// infoField reads a numeric field of an INFO reply.
func infoField(info, field string) (int64, error) {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO has no %s", field)
}

// deleteKeys deletes the keys matching pattern of one master, one UNLINK each (they may lie in
// different slots).
func deleteKeys(ctx context.Context, c *redis.Client, pattern string) error {
	iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	for _, k := range keys {
		if err := c.Unlink(ctx, k).Err(); err != nil {
			return err
		}
	}
	return nil
}
