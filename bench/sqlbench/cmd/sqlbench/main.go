// Command sqlbench compares the SQL stores of durable delayed tasks with River, in one run of
// interleaved rounds, and prints a markdown table of medians and the per-round ratios. See package
// sqlbench for what each column measures.
//
//	scripts/postgres.sh up && . .postgres/env && make -C bench sql
//
// Without PGWHEEL_DSN (or -dsn) it runs the SQLite systems only. -json FILE appends one JSON line
// per measurement (every round) to FILE.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/sqlbench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sqlbench:", err)
		os.Exit(1)
	}
}

func run() error {
	var cfg sqlbench.Config
	flag.IntVar(&cfg.Rounds, "rounds", 3, "interleaved rounds")
	flag.IntVar(&cfg.Tasks, "tasks", 3000, "tasks in the single, batch and fires workloads")
	flag.IntVar(&cfg.LatenessTasks, "lateness-tasks", 2000, "tasks in the lateness workload")
	flag.DurationVar(&cfg.Spread, "spread", 9*time.Second, "the lateness workload's tasks are due evenly from 1s to 1s + spread")
	flag.DurationVar(&cfg.Warmup, "warmup", 2*time.Second, "the lateness workload's worker runs this long before the first add")
	flag.IntVar(&cfg.Producers, "producers", 16, "goroutines adding tasks")
	flag.IntVar(&cfg.Concurrency, "concurrency", 64, "handler slots of each worker (durable Concurrency, River MaxWorkers)")
	flag.IntVar(&cfg.Batch, "batch", 100, "tasks per batch call (AddBatch, InsertMany)")
	flag.StringVar(&cfg.PostgresDSN, "dsn", os.Getenv("PGWHEEL_DSN"), "PostgreSQL database (default $PGWHEEL_DSN; empty skips PostgreSQL)")
	sqliteDir := flag.String("sqlite-dir", os.TempDir(), "directory for the SQLite files (empty skips SQLite)")
	systems := flag.String("systems", "", "comma-separated systems to run (default all)")
	workloads := flag.String("workloads", "", "comma-separated workloads to run (default all: single,batch,fires,lateness)")
	jsonOut := flag.String("json", "", "append one JSON line per measurement to this file")
	cpuProfile := flag.String("cpuprofile", "", "write this process's CPU profile of the whole run to this file")
	verbose := flag.Bool("v", false, "log River's and the durable Queue's warnings to stderr")
	flag.Parse()
	if *systems != "" {
		cfg.Systems = strings.Split(*systems, ",")
	}
	for _, w := range strings.Split(*workloads, ",") {
		if w != "" {
			cfg.Workloads = append(cfg.Workloads, sqlbench.Workload(w))
		}
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if *sqliteDir != "" {
		dir, err := os.MkdirTemp(*sqliteDir, "sqlbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.SQLiteDir = dir
	}
	cfg.Progress = func(r sqlbench.Result) {
		fmt.Fprintf(os.Stderr, "round %d %-18s %-8s %s\n", r.Round, r.System, r.Workload, figure(r))
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	start := time.Now()
	results, err := sqlbench.Run(context.Background(), cfg)
	if err != nil {
		return err
	}
	if *jsonOut != "" {
		if err := appendJSON(*jsonOut, results); err != nil {
			return err
		}
	}
	printTables(cfg, results, time.Since(start))
	for _, r := range results {
		if r.Err != "" {
			return fmt.Errorf("%d measurements failed (see above)", countFailed(results))
		}
	}
	return nil
}

func figure(r sqlbench.Result) string {
	switch {
	case r.Err != "":
		return "FAILED: " + r.Err
	case r.Workload == sqlbench.Lateness:
		return fmt.Sprintf("p50 %v p99 %v max %v early %d", ms(r.LatenessP50), ms(r.LatenessP99), ms(r.LatenessMax), r.Early)
	default:
		return fmt.Sprintf("%.0f/s", r.PerSec)
	}
}

func printTables(cfg sqlbench.Config, results []sqlbench.Result, took time.Duration) {
	fmt.Printf("%d rounds; %d tasks (single, batch, fires); %d tasks due over 1s…%v (lateness, after a %v warm-up); %d producers; concurrency %d; batch %d; %s; GOMAXPROCS %d; took %v\n\n",
		cfg.Rounds, cfg.Tasks, cfg.LatenessTasks, time.Second+cfg.Spread, cfg.Warmup, cfg.Producers, cfg.Concurrency, cfg.Batch,
		runtime.Version(), runtime.GOMAXPROCS(0), took.Round(time.Second))
	fmt.Println("| system | adds/s (single) | adds/s (batch) | fires/s | lateness p50 | p99 | max | early |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	sums := sqlbench.Summarize(results)
	for _, s := range sums {
		late := []string{"n/a", "n/a", "n/a", "n/a"}
		if s.Rounds > 0 {
			late = []string{ms(s.LatenessP50), ms(s.LatenessP99), ms(s.LatenessMax), fmt.Sprint(s.Early)}
		}
		fmt.Printf("| %s | %s | %s | %s | %s |\n", s.System, rate(s.Single), rate(s.Batch), rate(s.Fires), strings.Join(late, " | "))
	}
	fmt.Println()
	fmt.Println("Medians over the rounds; n/a: not run, or failed in a round (below).")
	for _, s := range sums {
		for _, e := range s.Errs {
			fmt.Printf("- %s: %s\n", s.System, e)
		}
	}

	fmt.Println()
	fmt.Println("| ratio (per round, then median) | adds/s single | adds/s batch | fires/s | lateness p99 (lower is better) |")
	fmt.Println("|---|---|---|---|---|")
	for _, pair := range [][2]string{{"pgwheel", "river"}, {"pgwheel", "river-tuned"}, {"sqlitewheel", "riversqlite"}} {
		row := []string{}
		any := false
		for _, w := range sqlbench.Workloads {
			rs := sqlbench.Ratios(results, pair[0], pair[1], w)
			if len(rs) == 0 {
				row = append(row, "n/a")
				continue
			}
			any = true
			parts := make([]string, len(rs))
			for i, x := range rs {
				parts[i] = fmt.Sprintf("%.2f", x)
			}
			row = append(row, fmt.Sprintf("%s → **%.2f×**", strings.Join(parts, ", "), sqlbench.Median(rs)))
		}
		if any {
			fmt.Printf("| %s / %s | %s |\n", pair[0], pair[1], strings.Join(row, " | "))
		}
	}
}

func appendJSON(path string, results []sqlbench.Result) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func countFailed(results []sqlbench.Result) int {
	n := 0
	for _, r := range results {
		if r.Err != "" {
			n++
		}
	}
	return n
}

func rate(x float64) string {
	if x == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", x)
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
