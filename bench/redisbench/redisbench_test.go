package redisbench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRun runs every workload small, on REDISWHEEL_ADDR: Run itself fails unless each task ran
// exactly once.
func TestRun(t *testing.T) {
	addr := os.Getenv("REDISWHEEL_ADDR")
	if addr == "" || testing.Short() {
		t.Skip("needs REDISWHEEL_ADDR (scripts/redis.sh up) and takes about 10s")
	}
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	results, err := Run(context.Background(), Config{
		Client: client, Tasks: 300, SpreadTasks: 100, Spread: time.Second, Producers: 4, Concurrency: 8, Batch: 32,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		t.Logf("%+v", r)
		if r.AddsPerSec <= 0 || r.FiresPerSec <= 0 || r.RedisCPUAdd <= 0 {
			t.Errorf("%s: implausible result %+v", r.System, r)
		}
	}
	if len(results) == 2 && (results[0].AddsPerSecBatch <= 0 || results[1].AddsPerSecBatch != 0) {
		t.Errorf("want batched adds for rediswheel only; got %+v", results)
	}
	if len(results) != 2 || results[0].Early != 0 {
		t.Errorf("want rediswheel then asynq, rediswheel never early; got %+v", results)
	}
}
