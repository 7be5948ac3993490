package sqlbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// Workload names one measurement (see the package doc).
type Workload string

const (
	Single   Workload = "single"
	Batch    Workload = "batch"
	Fires    Workload = "fires"
	Lateness Workload = "lateness"
)

// Workloads is every workload, in the order a round runs them.
var Workloads = []Workload{Single, Batch, Fires, Lateness}

// Config describes one comparison.
type Config struct {
	Rounds        int           // interleaved rounds, each running every system on every workload
	Tasks         int           // tasks in the single, batch and fires workloads
	LatenessTasks int           // tasks in the lateness workload
	Spread        time.Duration // the lateness workload's tasks are due evenly over 1 s … 1 s + Spread
	Producers     int           // goroutines adding tasks
	Concurrency   int           // handler slots of each worker
	Batch         int           // tasks per batch call
	// Warmup is how long the lateness workload's worker runs before the first add, so that it
	// is measured in its steady state, as a long-running worker: a River client's scheduler
	// starts after its leader election and a random pause of up to 1 s, then passes every 5 s,
	// and with no warm-up its first pass would fall just after the adds.
	Warmup time.Duration

	// SQLiteDir, if set, runs the SQLite systems on files made in it (one per workload).
	SQLiteDir string
	// PostgresDSN, if set, runs the PostgreSQL systems on that database. pgwheel's tables must
	// be migrated (pgwheel.Migrate); River's are migrated by Run into RiverSchema.
	PostgresDSN string
	// RiverSchema is the PostgreSQL schema River's tables live in (default "sqlbench_river").
	RiverSchema string
	// PoolSize is each PostgreSQL system's pool size (default Producers + Concurrency/4 + 8).
	PoolSize int
	// Systems, if not empty, keeps only the systems named in it.
	Systems []string
	// Workloads, if not empty, keeps only the workloads named in it (to profile one).
	Workloads []Workload
	// Logger receives River's log lines and the durable Queue's errors (default: discarded).
	Logger *slog.Logger
	// Progress, if set, is called after each measurement.
	Progress func(Result)
}

// Result is one system's figures on one workload in one round.
type Result struct {
	Run      string   `json:"run"` // when the run started (UTC, RFC 3339): tells runs apart in a JSON lines file
	Round    int      `json:"round"`
	System   string   `json:"system"`
	Workload Workload `json:"workload"`
	Tasks    int      `json:"tasks"`
	// PerSec is adds/s (single, batch) or fires/s (fires); 0 for lateness.
	PerSec float64 `json:"per_sec,omitempty"`
	// Lateness quantiles and early handlers, lateness workload only.
	LatenessP50 time.Duration `json:"lateness_p50_ns,omitempty"`
	LatenessP99 time.Duration `json:"lateness_p99_ns,omitempty"`
	LatenessMax time.Duration `json:"lateness_max_ns,omitempty"`
	Early       int           `json:"early"`
	// Err is why the measurement failed; its figures are then zero.
	Err string `json:"err,omitempty"`
}

// system is one task queue on one database. Each workload runs on a fresh instance.
type system struct {
	name string
	// only, if not empty, lists the workloads the system runs.
	only []Workload
	open func(ctx context.Context, id string) (instance, error)
}

func (s system) runs(w Workload) bool { return len(s.only) == 0 || slices.Contains(s.only, w) }

// instance is what a workload needs of a task queue. Tasks carry the due time the producer asked
// for, so every system is measured against the same instant.
type instance interface {
	add(ctx context.Context, key string, due time.Time) error
	addBatch(ctx context.Context, keys []string, due []time.Time) error
	// start starts a worker calling handle(key, due) for each task; stop stops it and waits
	// for it to end.
	start(handle func(key string, due time.Time)) (stop func() error, err error)
	// unfinished counts the tasks the store holds that have not finished (scheduled, due,
	// running, retrying or dead).
	unfinished(ctx context.Context) (int, error)
	// close deletes the instance's tasks and releases it; no worker runs.
	close(ctx context.Context) error
}

// Run measures every system on every workload, Config.Rounds times, and returns every result
// in the order measured. A failed measurement is a Result with Err set and does not stop the
// run; Run returns an error only when a system cannot be set up at all.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if cfg.Rounds <= 0 || cfg.Tasks <= 0 || cfg.LatenessTasks <= 0 || cfg.Spread <= 0 ||
		cfg.Producers <= 0 || cfg.Concurrency <= 0 || cfg.Batch <= 0 {
		return nil, fmt.Errorf("sqlbench: incomplete config %+v", cfg)
	}
	cfg = withDefaults(cfg)
	runStart := time.Now().UTC().Format(time.RFC3339)
	systems, cleanup, err := setUp(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if len(systems) == 0 {
		return nil, errors.New("sqlbench: no system to run (set SQLiteDir or PostgresDSN, check Systems)")
	}

	var results []Result
	for round := range cfg.Rounds {
		for _, w := range Workloads {
			for i := range systems {
				sys := systems[(i+round)%len(systems)]
				if !sys.runs(w) || len(cfg.Workloads) > 0 && !slices.Contains(cfg.Workloads, w) {
					continue
				}
				if err := ctx.Err(); err != nil {
					return results, err
				}
				r := measure(ctx, cfg, sys, w, round)
				r.Run = runStart
				results = append(results, r)
				if cfg.Progress != nil {
					cfg.Progress(r)
				}
			}
		}
	}
	return results, nil
}

// withDefaults fills in cfg's optional fields.
func withDefaults(cfg Config) Config {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RiverSchema == "" {
		cfg.RiverSchema = "sqlbench_river"
	}
	if cfg.PoolSize == 0 {
		cfg.PoolSize = cfg.Producers + cfg.Concurrency/4 + 8
	}
	return cfg
}

// measure runs workload w on a fresh instance of sys.
func measure(ctx context.Context, cfg Config, sys system, w Workload, round int) Result {
	r := Result{Round: round + 1, System: sys.name, Workload: w, Tasks: cfg.Tasks}
	if w == Lateness {
		r.Tasks = cfg.LatenessTasks
	}
	inst, err := sys.open(ctx, fmt.Sprintf("r%d-%s", round+1, w))
	if err == nil {
		switch w {
		case Single, Batch:
			r.PerSec, err = measureAdds(ctx, cfg, inst, w == Batch)
		case Fires:
			r.PerSec, err = measureFires(ctx, cfg, inst)
		case Lateness:
			err = measureLateness(ctx, cfg, inst, &r)
		}
		err = errors.Join(err, inst.close(context.WithoutCancel(ctx)))
	}
	if err != nil {
		return Result{Round: r.Round, System: r.System, Workload: w, Tasks: r.Tasks, Err: err.Error()}
	}
	return r
}
