// Command redisbench compares rediswheel with asynq on one Redis server and prints a markdown
// table. See package redisbench for what each column measures.
//
//	scripts/redis.sh up && . .redis/env && cd bench && go run ./cmd/redisbench
//
// Give it a server nothing else uses: Redis CPU per task is read from the whole server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/redisbench"
	"github.com/redis/go-redis/v9"
)

func main() {
	addr := os.Getenv("REDISWHEEL_ADDR")
	if addr == "" {
		addr = "127.0.0.1:16379"
	}
	flag.StringVar(&addr, "addr", addr, "standalone Redis server (default $REDISWHEEL_ADDR)")
	tasks := flag.Int("tasks", 20000, "tasks in the adds and fires workloads")
	spreadTasks := flag.Int("spread-tasks", 10000, "tasks in the lateness workload")
	spread := flag.Duration("spread", 10*time.Second, "the lateness workload's tasks are due evenly over this")
	producers := flag.Int("producers", 16, "goroutines adding tasks")
	concurrency := flag.Int("concurrency", 64, "handler slots of each worker")
	batch := flag.Int("batch", 256, "tasks per AddBatch call in rediswheel's batched adds workload (0 skips it)")
	flag.Parse()

	client := redis.NewClient(&redis.Options{Addr: addr, PoolSize: max(*producers, *concurrency) + 16})
	defer client.Close()
	ctx := context.Background()
	version, err := client.Info(ctx, "server").Result()
	if err != nil {
		fmt.Fprintln(os.Stderr, "redisbench:", err)
		os.Exit(1)
	}
	results, err := redisbench.Run(ctx, redisbench.Config{
		Client: client, Tasks: *tasks, SpreadTasks: *spreadTasks, Spread: *spread,
		Producers: *producers, Concurrency: *concurrency, Batch: *batch,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}

	fmt.Printf("%d tasks (adds, fires); %d tasks due over %v (lateness); %d producers; concurrency %d; batch %d; %s; GOMAXPROCS %d; Redis %s\n\n",
		*tasks, *spreadTasks, *spread, *producers, *concurrency, *batch, runtime.Version(), runtime.GOMAXPROCS(0), redisVersion(version))
	fmt.Println("| system | adds/s (single) | Redis CPU/add (single) | adds/s (batched) | Redis CPU/add (batched) | fires/s | Redis CPU/fire | lateness p50 | p99 | max | early |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		batchRate, batchCPU := "n/a", "n/a"
		if r.AddsPerSecBatch > 0 {
			batchRate, batchCPU = fmt.Sprintf("%.0f", r.AddsPerSecBatch), r.RedisCPUAddBatch.Round(100*time.Nanosecond).String()
		}
		fmt.Printf("| %s | %.0f | %v | %s | %s | %.0f | %v | %v | %v | %v | %d |\n", r.System,
			r.AddsPerSec, r.RedisCPUAdd.Round(100*time.Nanosecond), batchRate, batchCPU, r.FiresPerSec, r.RedisCPUFire.Round(100*time.Nanosecond),
			r.LatenessP50.Round(100*time.Microsecond), r.LatenessP99.Round(100*time.Microsecond), r.LatenessMax.Round(100*time.Microsecond), r.Early)
	}
}

func redisVersion(info string) string {
	var v string
	for _, line := range strings.Split(info, "\n") {
		if _, err := fmt.Sscanf(line, "redis_version:%s", &v); err == nil {
			return v
		}
	}
	return "?"
}
