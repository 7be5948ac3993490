package sqlitewheel

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// The store's figures, on a fresh file per benchmark in the test's temporary
// directory (its disk's fsync decides the single adds):
//
//	go test -run '^$' -bench . -benchtime 2000x -count 3 ./sqlitewheel
//
// Each reports its rate as adds/s or fires/s.

// BenchmarkAdd: one AddAfter at a time, each its own transaction and commit.
func BenchmarkAdd(b *testing.B) {
	st, _ := openTemp(b, Options{})
	q, err := durable.New(st, durable.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if ok, err := q.AddAfter(ctx, "k"+strconv.Itoa(i), nil, time.Hour); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "adds/s")
}

// BenchmarkAddBatch: AddBatch of 100 tasks, one transaction each.
func BenchmarkAddBatch(b *testing.B) {
	st, _ := openTemp(b, Options{})
	q, err := durable.New(st, durable.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	at := time.Now().Add(time.Hour)
	b.ResetTimer()
	for i := 0; i < b.N; i += 100 {
		items := make([]durable.Item, 0, 100)
		for j := i; j < i+100 && j < b.N; j++ {
			items = append(items, durable.Item{Key: "k" + strconv.Itoa(j), At: at})
		}
		if _, err := q.AddBatch(ctx, items); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "adds/s")
}

// BenchmarkFire: b.N tasks due at once, added in batches, then one Run
// (default Concurrency 64) fires them all: claims, handlers, settles.
func BenchmarkFire(b *testing.B) {
	st, _ := openTemp(b, Options{})
	q, err := durable.New(st, durable.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var items []durable.Item
	for i := range b.N {
		items = append(items, durable.Item{Key: "k" + strconv.Itoa(i), At: time.Now()})
	}
	if _, err := q.AddBatch(ctx, items); err != nil {
		b.Fatal(err)
	}
	var fired atomic.Int64
	all := make(chan struct{})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	b.ResetTimer()
	go func() {
		done <- q.Run(rctx, func(context.Context, durable.Task) error {
			if fired.Add(1) == int64(b.N) {
				close(all)
			}
			return nil
		})
	}()
	select {
	case <-all:
	case <-time.After(10 * time.Minute):
		b.Fatalf("fired %d of %d in 10 minutes", fired.Load(), b.N)
	}
	elapsed := b.Elapsed()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "fires/s")
}
