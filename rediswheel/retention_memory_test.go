package rediswheel

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRetainedMemory measures the Redis memory one retained task costs (run
// with REDISWHEEL_MEASURE=1; it logs, it asserts only a loose bound): n tasks
// with a 100-byte payload, each delivered once and done, with the record m|,
// delivery c| and a one-entry history h| that claim and settle write, then
// MEMORY USAGE of the shard's keys. The figure is what doc.go states.
func TestRetainedMemory(t *testing.T) {
	if os.Getenv("REDISWHEEL_MEASURE") != "1" {
		t.Skip("REDISWHEEL_MEASURE=1 measures the memory per retained task")
	}
	c := standalone(t)
	ctx := context.Background()
	const n = 10000
	payload := []byte(strings.Repeat("x", 100))
	usage := func(q *testQueue) int64 {
		var total int64
		for _, k := range q.keys[0] {
			if v, err := c.MemoryUsage(ctx, k, 0).Result(); err == nil {
				total += v
			}
		}
		return total
	}
	for _, retention := range []time.Duration{0, time.Hour} {
		q := newQueue(t, c, Options{Shards: 1, Retention: retention})
		for i := 0; i < n; i += 256 {
			var items []Item
			for j := i; j < min(n, i+256); j++ {
				items = append(items, Item{Key: fmt.Sprintf("order:%08d", j), Payload: payload, At: time.Now().Add(-time.Second)})
			}
			_, err := q.AddBatch(ctx, items)
			require.NoError(t, err)
		}
		scheduled := usage(q)
		for done := 0; done < n; {
			got, err := q.claim(ctx, 0, maxBatch, time.Minute)
			require.NoError(t, err)
			var os []outcome
			for _, d := range got.tasks {
				delivered(t, q, d)
				// As add.lua writes it (R1): added, original due, size, timeout,
				// max attempts, backoff base, limit, type.
				c.HSetNX(ctx, q.keys[0][4], "m|"+d.task.Key, fmt.Sprintf("%d|%d|100|0|0|0|0|", time.Now().UnixMilli(), time.Now().UnixMilli()))
				os = append(os, outcome{d: d, kind: outcomeDone})
			}
			_, err = q.settle(ctx, 0, os)
			require.NoError(t, err)
			done += len(got.tasks)
		}
		after := usage(q)
		for _, k := range q.keys[0] {
			if v, err := c.MemoryUsage(ctx, k, 0).Result(); err == nil {
				t.Logf("retention %v: %s: %d bytes per task", retention, k, v/n)
			}
		}
		t.Logf("retention %v: %d tasks scheduled: %d bytes (%d per task); after done: %d bytes (%d per task)",
			retention, n, scheduled, scheduled/n, after, after/n)
		if retention > 0 {
			require.Less(t, after/n, int64(1000), "bytes per retained task")
		}
	}
}
