package sqlbench

import (
	"context"
	"slices"
	"strconv"
	"time"
)

// setUp returns the systems cfg asks for, in the order of the first round: the PostgreSQL ones,
// then the SQLite ones. cleanup releases what they share (pools).
func setUp(ctx context.Context, cfg Config) (systems []system, cleanup func(), err error) {
	cleanup = func() {}
	run := strconv.FormatInt(time.Now().UnixNano(), 36) // names this run's queues and namespaces
	if cfg.PostgresDSN != "" {
		pg, closePG, err := postgresSystems(ctx, cfg, run)
		if err != nil {
			return nil, nil, err
		}
		systems, cleanup = append(systems, pg...), closePG
	}
	if cfg.SQLiteDir != "" {
		systems = append(systems, sqliteSystems(cfg, cfg.SQLiteDir)...)
	}
	if len(cfg.Systems) > 0 {
		systems = slices.DeleteFunc(systems, func(s system) bool { return !slices.Contains(cfg.Systems, s.name) })
	}
	return systems, cleanup, nil
}
