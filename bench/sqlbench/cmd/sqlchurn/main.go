// Command sqlchurn measures pgwheel under churn (sqlbench.Churn): the claim cost with a backlog,
// before and after many tasks are pushed through, the probes' lateness after, and the settle of an
// emptied, analysed namespace; the migrations' storage parameters against the server's defaults,
// in interleaved rounds. It prints a markdown table, one row per variant and round, and the ratios
// of each round.
//
//	scripts/postgres.sh up && . .postgres/env && cd bench/sqlbench && go run ./cmd/sqlchurn
//
// It changes pgwheel_task's storage parameters while it runs (and puts back the migrations' at
// the end): run it on a database of its own.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/sqlbench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sqlchurn:", err)
		os.Exit(1)
	}
}

func run() error {
	var cfg sqlbench.ChurnConfig
	flag.StringVar(&cfg.DSN, "dsn", os.Getenv("PGWHEEL_DSN"), "PostgreSQL database (default $PGWHEEL_DSN)")
	flag.IntVar(&cfg.Rounds, "rounds", 2, "interleaved rounds")
	flag.IntVar(&cfg.Backlog, "backlog", 500_000, "tasks pending, due in a day")
	flag.IntVar(&cfg.Churn, "churn", 150_000, "tasks pushed through with the backlog there")
	flag.IntVar(&cfg.Empty, "empty", 100_000, "tasks pushed through the namespace then emptied")
	flag.IntVar(&cfg.Concurrency, "concurrency", 64, "the worker's handler slots")
	flag.DurationVar(&cfg.Window, "window", 90*time.Second, "how long to watch after the churn (autovacuum_naptime is 1 min by default)")
	flag.DurationVar(&cfg.ProbeEvery, "probe-every", 100*time.Millisecond, "a probe task every")
	jsonOut := flag.String("json", "", "append one JSON line per result to this file")
	variants := flag.String("variants", "", "comma-separated variants to run (migrated, defaults); all if empty")
	flag.Parse()
	if *variants != "" {
		cfg.Variants = strings.Split(*variants, ",")
	}
	if cfg.DSN == "" {
		return fmt.Errorf("no database: set PGWHEEL_DSN or -dsn")
	}
	cfg.Progress = func(s string) { fmt.Fprintln(os.Stderr, time.Now().UTC().Format("15:04:05"), s) }
	start := time.Now()
	results, err := sqlbench.Churn(context.Background(), cfg)
	if *jsonOut != "" {
		f, ferr := os.OpenFile(*jsonOut, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if ferr != nil {
			return ferr
		}
		enc := json.NewEncoder(f)
		for _, r := range results {
			enc.Encode(r) //nolint:errcheck
		}
		f.Close()
	}
	fmt.Printf("%d rounds; backlog %d, churn %d, emptied %d; concurrency %d; window %v; %s; GOMAXPROCS %d; took %v\n\n",
		cfg.Rounds, cfg.Backlog, cfg.Churn, cfg.Empty, cfg.Concurrency, cfg.Window, runtime.Version(),
		runtime.GOMAXPROCS(0), time.Since(start).Round(time.Second))
	fmt.Println("| round | variant | churn/s | claim buffers before → after → end | claim ms before → after → end | recovered | autovacuums | probe p50 / p99 / max | early | emptied: claim buffers, ms fresh → emptied | settle ms fresh → emptied | recovered |")
	fmt.Println("|---|---|---:|---|---|---:|---:|---|---:|---|---|---:|")
	for _, r := range results {
		if r.Err != "" {
			fmt.Printf("| %d | %s | FAILED: %s |\n", r.Round, r.Variant, r.Err)
			continue
		}
		fmt.Printf("| %d | %s | %.0f | %d → %d → %d | %s → %s → %s | %s | %d | %s / %s / %s | %d | %d → %d, %s → %s | %s → %s | %s |\n",
			r.Round, r.Variant, r.ChurnPerSec, r.Before.Buffers, r.After.Buffers, r.End.Buffers,
			ms(r.Before.Claim), ms(r.After.Claim), ms(r.End.Claim), since(r.Recovered), r.Autovacuums,
			ms(r.LatenessP50), ms(r.LatenessP99), ms(r.LatenessMax), r.Early,
			r.FreshClaim.Buffers, r.EmptiedClaim.Buffers, ms(r.FreshClaim.Claim), ms(r.EmptiedClaim.Claim),
			ms(r.FreshSettle), ms(r.EmptiedSettle), since(r.EmptiedRecovered))
	}
	fmt.Println()
	fmt.Println("Ratios per round, end of window over before (claim buffers, claim time) and emptied over fresh (settle).")
	for _, r := range results {
		if r.Err != "" || r.Before.Buffers == 0 || r.Before.Claim == 0 || r.FreshSettle == 0 {
			continue
		}
		fmt.Printf("- round %d %s: claim buffers %.2f×, claim time %.2f× (right after the churn %.2f×, %.2f×), settle %.2f×\n",
			r.Round, r.Variant, float64(r.End.Buffers)/float64(r.Before.Buffers), float64(r.End.Claim)/float64(r.Before.Claim),
			float64(r.After.Buffers)/float64(r.Before.Buffers), float64(r.After.Claim)/float64(r.Before.Claim),
			float64(r.EmptiedSettle)/float64(r.FreshSettle))
	}
	if err != nil {
		return err
	}
	for _, r := range results {
		if r.Err != "" {
			return fmt.Errorf("a round failed (see above)")
		}
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func since(d time.Duration) string {
	if d < 0 {
		return "not in window"
	}
	return d.Round(100 * time.Millisecond).String()
}
