// Command sqlscale measures durable.Queue with a large backlog (sqlbench.Scale) on PostgreSQL,
// SQLite and a Redis Cluster: bytes per task, adds/s, the claim cost and Stats' time empty, at
// -overview-at and at -tasks pending and after a churn, the probes' lateness, and timerd's
// dashboard overview. It prints a markdown table. make -C bench scale runs it on servers of its
// own (scripts/postgres.sh, scripts/redis.sh) with the timerd it builds:
//
//	make -C bench scale                              # 10M tasks, every store
//	SCALE_FLAGS='-tasks 200000 -overview-at 100000 -churn 20000' make -C bench scale
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/sqlbench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sqlscale:", err)
		os.Exit(1)
	}
}

func run() error {
	var cfg sqlbench.ScaleConfig
	stores := flag.String("stores", "postgres,sqlite,redis-cluster", "comma-separated stores, measured in this order")
	flag.StringVar(&cfg.PostgresDSN, "dsn", os.Getenv("PGWHEEL_DSN"), "PostgreSQL database (default $PGWHEEL_DSN)")
	flag.StringVar(&cfg.SQLiteDir, "sqlite-dir", os.TempDir(), "directory for the SQLite file")
	cluster := flag.String("redis-cluster", os.Getenv("REDISWHEEL_CLUSTER_ADDRS"), "comma-separated Redis Cluster seeds (default $REDISWHEEL_CLUSTER_ADDRS)")
	flag.IntVar(&cfg.Tasks, "tasks", 10_000_000, "the backlog: tasks pending")
	flag.IntVar(&cfg.OverviewAt, "overview-at", 1_000_000, "the intermediate stop, where timerd's overview is measured")
	flag.IntVar(&cfg.Batch, "batch", 1000, "tasks per AddBatch")
	flag.IntVar(&cfg.Producers, "producers", 4, "goroutines adding")
	flag.IntVar(&cfg.PayloadBytes, "payload", 128, "bytes of each task's payload")
	flag.DurationVar(&cfg.Offset, "offset", 6*time.Hour, "the backlog's first due time after the start")
	flag.DurationVar(&cfg.Horizon, "horizon", 24*time.Hour, "the backlog is due over this span from -offset")
	flag.IntVar(&cfg.Concurrency, "concurrency", 64, "the worker's handler slots")
	flag.IntVar(&cfg.Churn, "churn", 200_000, "tasks pushed through with the backlog in place")
	flag.DurationVar(&cfg.Window, "window", 20*time.Second, "each probe window")
	flag.DurationVar(&cfg.ProbeEvery, "probe-every", 50*time.Millisecond, "a probe task every")
	flag.IntVar(&cfg.StatsCalls, "stats-calls", 21, "Stats calls (and overview requests) timed at each stop")
	flag.IntVar(&cfg.ClaimCalls, "claim-calls", 21, "claims timed at each stop")
	flag.BoolVar(&cfg.Overdue, "overdue", false, "the backlog due in the past (-offset -horizon before the start): only the fill, bytes, Stats and the overview")
	flag.BoolVar(&cfg.Keep, "keep", false, "leave each store's data at the end (the progress line says where), to drop by hand")
	flag.DurationVar(&cfg.FillLimit, "fill-limit", 0, "stop the fill after this long and measure the backlog reached (0: none)")
	flag.StringVar(&cfg.Timerd, "timerd", "", "timerd binary for the overview (empty: not measured)")
	jsonOut := flag.String("json", "", "append one JSON line per store to this file")
	flag.Parse()
	cfg.Stores = strings.Split(*stores, ",")
	if *cluster != "" {
		cfg.RedisClusterAddrs = strings.Split(*cluster, ",")
	}
	cfg.Progress = func(s string) { fmt.Fprintln(os.Stderr, time.Now().UTC().Format("15:04:05"), s) }
	start := time.Now()
	results, err := sqlbench.Scale(context.Background(), cfg)
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
	limit := "none"
	if cfg.FillLimit > 0 {
		limit = cfg.FillLimit.String()
	}
	fmt.Printf("%d tasks pending asked (fill limit %s; the backlog column says what was reached) (payload %d B, due over %v from +%v), stop at %d; batch %d, %d producers; concurrency %d; churn %d; windows %v, a probe every %v; %d Stats and %d claim calls per stop; %s; GOMAXPROCS %d; took %v\n\n",
		cfg.Tasks, limit, cfg.PayloadBytes, cfg.Horizon, cfg.Offset, cfg.OverviewAt, cfg.Batch, cfg.Producers, cfg.Concurrency, cfg.Churn,
		cfg.Window, cfg.ProbeEvery, cfg.StatsCalls, cfg.ClaimCalls, runtime.Version(), runtime.GOMAXPROCS(0), time.Since(start).Round(time.Second))
	fmt.Println("| store | backlog | bytes/task | adds/s (each segment) | claim ms median (max) at each stop → after churn → a window later | Stats ms median (max) at each stop → after churn → a window later | churn/s | lateness p50 / p99 / max, ms: backlog; after churn | overview ms median (max) | /v1/stats ms median (max) | took |")
	fmt.Println("|---|---:|---:|---|---|---|---:|---|---|---|---:|")
	for _, r := range results {
		if r.Err != "" {
			fmt.Printf("| %s | FAILED: %s |\n", r.Store, r.Err)
			continue
		}
		var fills, claims, stats []string
		for _, f := range r.Fill {
			fills = append(fills, fmt.Sprintf("%.0f", f.AddsPerSec))
		}
		cs := slices.Clone(r.Claims)
		if !r.Overdue {
			cs = append(cs, r.AfterChurn)
		}
		if r.AfterWindow != nil {
			cs = append(cs, *r.AfterWindow)
		}
		for _, c := range cs {
			if r.Overdue { // no claim: it would lease the backlog
				claims = []string{"n/a"}
			} else {
				claims = append(claims, fmt.Sprintf("%s: %s", count(c.Pending), tm(c.Claim)))
			}
			stats = append(stats, fmt.Sprintf("%s: %s", count(c.Pending), tm(c.Stats)))
		}
		ov, api := "n/a", "n/a"
		if o := r.Overview; o != nil {
			ov, api = count(o.Pending)+": "+tm(o.Overview), count(o.Pending)+": "+tm(o.APIStats)
		}
		bytes := fmt.Sprintf("%.0f", r.BytesPerTask)
		if len(r.BytesPerMaster) > 0 {
			var per []string
			for _, b := range r.BytesPerMaster {
				per = append(per, fmt.Sprintf("%.0f%%", 100*float64(b)/float64(r.Bytes)))
			}
			bytes += " (" + strings.Join(per, " / ") + ")"
		}
		store := r.Store
		if r.Overdue {
			store += " (overdue)"
		}
		fmt.Printf("| %s | %d | %s | %.0f (%s) | %s | %s | %.0f | %s; %s | %s | %s | %v |\n", store, r.Tasks, bytes, r.AddsPerSec,
			strings.Join(fills, ", "), strings.Join(claims, " → "), strings.Join(stats, " → "), r.ChurnPerSec,
			late(r.Lateness), late(r.LatenessAfter), ov, api, r.Took.Round(time.Second))
	}
	fmt.Println()
	fmt.Println("Stops: pending tasks when measured (the last two: right after the churn, and a probe window later). Redis bytes: share of each master.")
	if err != nil {
		return err
	}
	for _, r := range results {
		if r.Err != "" {
			return fmt.Errorf("a store failed (see above)")
		}
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func tm(t sqlbench.ScaleTiming) string { return ms(t.Median) + " (" + ms(t.Max) + ")" }

func late(l sqlbench.ScaleLateness) string {
	s := ms(l.P50) + " / " + ms(l.P99) + " / " + ms(l.Max)
	if l.Early > 0 {
		s += fmt.Sprintf(", %d EARLY", l.Early)
	}
	return s
}

// count writes n as 0, 10k, 1M, 10M.
func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
