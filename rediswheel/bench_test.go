package rediswheel

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAdd measures one Add, a round trip and one script, from 8
// goroutines per CPU. It fails unless every Add stored a task.
func BenchmarkAdd(b *testing.B) {
	q := newQueue(b, standalone(b), Options{})
	ctx := context.Background()
	at := time.Now().Add(time.Hour)
	var next, stored atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			added, err := q.Add(ctx, strconv.FormatInt(next.Add(1), 10), []byte("payload"), at)
			if err != nil {
				b.Error(err)
				return
			}
			if added {
				stored.Add(1)
			}
		}
	})
	b.StopTimer()
	if stored.Load() != int64(b.N) {
		b.Fatalf("stored %d tasks of %d", stored.Load(), b.N)
	}
}

// BenchmarkEndToEnd measures a task's whole life once due: claim, handler,
// batched ack. Tasks are added before the timer starts; it stops once all
// have run and the namespace is empty.
func BenchmarkEndToEnd(b *testing.B) {
	q := newQueue(b, standalone(b), Options{Concurrency: 256})
	ctx := context.Background()
	for i := range b.N {
		if _, err := q.Add(ctx, strconv.Itoa(i), nil, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	var ran atomic.Int64
	done := make(chan struct{})
	b.ResetTimer()
	stop := run(b, q, func(ctx context.Context, tk Task) error {
		if ran.Add(1) == int64(b.N) {
			close(done)
		}
		return nil
	})
	<-done
	for leftovers(b, q) != 0 {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	stop()
	if ran.Load() != int64(b.N) {
		b.Fatalf("ran %d tasks of %d", ran.Load(), b.N)
	}
}

// BenchmarkAddLone measures a lone Add, one round trip and one script call
// of one task, with no options and with all four, from one goroutine: the
// cost a caller adding one task at a time pays.
func BenchmarkAddLone(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []TaskOption
	}{
		{"plain", nil},
		{"options", []TaskOption{TaskType("mail"), TaskTimeout(time.Minute), TaskMaxAttempts(5), TaskBackoff(time.Second, time.Hour)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			q := newQueue(b, standalone(b), Options{})
			ctx := context.Background()
			at := time.Now().Add(time.Hour)
			b.ResetTimer()
			for i := range b.N {
				added, err := q.Add(ctx, strconv.Itoa(i), []byte("payload"), at, bc.opts...)
				if err != nil || !added {
					b.Fatalf("Add %d: %v, %v", i, added, err)
				}
			}
		})
	}
}

// BenchmarkClaimBacklog measures the Redis CPU (INFO cpu, main thread) of a
// claim of a full batch and its ack from a backlog of 100k overdue tasks: the
// figure TestBacklogDrainsInBoundedScripts logs but, being time, does not
// assert. Each ack releases the batch back to due, so the backlog stays.
func BenchmarkClaimBacklog(b *testing.B) {
	c := standalone(b)
	q := newQueue(b, c, Options{})
	ctx := context.Background()
	const n = 100_000
	var items []Item
	for i := range n {
		items = append(items, Item{Key: strconv.Itoa(i), Payload: []byte("p"), At: time.Now().Add(-time.Hour)})
	}
	for len(items) > 0 {
		k := min(len(items), 4096)
		if _, err := q.AddBatch(ctx, items[:k]); err != nil {
			b.Fatal(err)
		}
		items = items[k:]
	}
	b.ResetTimer()
	var claimCPU, ackCPU time.Duration
	for i := range b.N {
		shard := i % len(q.keys)
		var cl claimed
		var err error
		claimCPU += redisCPU(b, q, func() { cl, err = q.claim(ctx, shard, maxBatch, time.Minute) })
		if err != nil || len(cl.tasks) != maxBatch {
			b.Fatalf("claim: %d tasks, %v", len(cl.tasks), err)
		}
		os := make([]outcome, len(cl.tasks))
		for j, d := range cl.tasks {
			os[j] = outcome{d: d, kind: outcomeRelease}
		}
		ackCPU += redisCPU(b, q, func() { _, err = q.settle(ctx, shard, os) })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(claimCPU.Microseconds())/float64(b.N), "redis-cpu-µs/claim")
	b.ReportMetric(float64(ackCPU.Microseconds())/float64(b.N), "redis-cpu-µs/ack")
}
