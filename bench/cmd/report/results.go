package main

import "github.com/go-timingwheel/timingwheel/bench/internal/results"

// The JSON lines written by the workload programs under bench/cmd.
type (
	accuracy   = results.Accuracy
	burst      = results.Burst
	purgatory  = results.Purgatory
	idle       = results.Idle
	httpServer = results.HTTPServer
	fireCost   = results.FireCost
)

type report struct {
	docs       string
	ops        benchSet
	headline   benchSet
	heap       benchSet
	parallel   benchSet
	scaling    benchSet // the root package's benchmarks, per GOMAXPROCS
	accuracy   []accuracy
	burst      []burst
	purgatory  []purgatory
	idle       []idle
	httpServer []httpServer
	fireCost   []fireCost // absent from reports older than the program
	env        env
	matrix     matrix // the root package's BenchmarkMatrix (bench/matrix.sh)
	benchstat  string
	// purgatoryNotes is docs/bench/purgatory.md, measured by hand (profiles,
	// counters), printed under section 7's table.
	purgatoryNotes string
	// redisNotes, timerdNotes, sqlNotes and scaleNotes are docs/bench/redis.md,
	// timerd.md, sql.md and scale.md, measured by their own commands (bench/redisbench,
	// bench/timerd.sh, make -C bench sql, make -C bench scale), printed as sections 10 to 13.
	redisNotes, timerdNotes, sqlNotes, scaleNotes string
}
