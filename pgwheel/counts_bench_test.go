package pgwheel

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// BenchmarkAddCounts measures adds with the counts' triggers (migration 4)
// and without them (disabled for the sub-benchmark), alternated by
// -count: single adds from 16 goroutines at once (each its own statement and
// transaction, as concurrent writers that a single counter row per namespace
// would serialise), batches of 100, and whole lives of 64 tasks at a time
// (add, claim, settle done). -count repeats each sub-benchmark in
// a row: alternate by running it -count 1 several times. The figures are
// in docs/design/pg-counts.md.
//
//	for i in 1 2 3 4; do go test -run '^$' -bench AddCounts -benchtime 2s -count 1 ./pgwheel; done
func BenchmarkAddCounts(b *testing.B) {
	needDB(b)
	ctx := context.Background()
	triggers := func(b *testing.B, on bool) {
		b.Helper()
		verb := "ENABLE"
		if !on {
			verb = "DISABLE"
		}
		for _, tbl := range []string{"pgwheel_task", "pgwheel_result"} {
			if _, err := sharedPool.Exec(ctx, `ALTER TABLE `+tbl+` `+verb+` TRIGGER USER`); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Cleanup(func() { triggers(b, true) })
	for _, counts := range []bool{true, false} {
		name := "counts"
		if !counts {
			name = "no-counts"
		}
		b.Run("single/"+name, func(b *testing.B) {
			triggers(b, counts)
			s := newStore(b)
			var n atomic.Int64
			b.SetParallelism(8) // 16 goroutines on 2 CPUs
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r := &durable.AddRequest{Key: "k" + strconv.FormatInt(n.Add(1), 10),
						At: time.Hour.Milliseconds(), Relative: true}
					s.Add(ctx, []*durable.AddRequest{r})
					if r.Err != nil || r.Status != durable.AddStored {
						b.Errorf("add: %v %v", r.Status, r.Err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "adds/s")
		})
	}
	for _, counts := range []bool{true, false} {
		name := "counts"
		if !counts {
			name = "no-counts"
		}
		b.Run("batch100/"+name, func(b *testing.B) {
			triggers(b, counts)
			s := newStore(b)
			for i := range b.N {
				reqs := make([]*durable.AddRequest, 100)
				for j := range reqs {
					reqs[j] = &durable.AddRequest{Key: strconv.Itoa(i) + "-" + strconv.Itoa(j),
						At: time.Hour.Milliseconds(), Relative: true}
				}
				s.Add(ctx, reqs)
				for _, r := range reqs {
					if r.Err != nil || r.Status != durable.AddStored {
						b.Fatalf("add: %v %v", r.Status, r.Err)
					}
				}
			}
			b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "adds/s")
		})
	}
	// A task's whole life in batches of 64: added due, claimed, settled done.
	for _, counts := range []bool{true, false} {
		name := "counts"
		if !counts {
			name = "no-counts"
		}
		b.Run("cycle64/"+name, func(b *testing.B) {
			triggers(b, counts)
			s := newStore(b)
			p := hourLease
			p.Limit = 64
			for i := range b.N {
				tasks := make([]NewTask, 64)
				for j := range tasks {
					tasks[j] = NewTask{Key: strconv.Itoa(i) + "-" + strconv.Itoa(j)}
				}
				if _, err := s.add(ctx, tasks...); err != nil {
					b.Fatal(err)
				}
				c, err := s.claim(ctx, p)
				if err != nil || len(c.Tasks) != 64 {
					b.Fatalf("claim: %d tasks, %v", len(c.Tasks), err)
				}
				ss := make([]settlement, len(c.Tasks))
				for j, ct := range c.Tasks {
					ss[j] = settlement{Key: ct.Key, Token: ct.Token, Outcome: durable.OutcomeDone}
				}
				if _, err := s.settle(ctx, settleParams{HistoryLen: 10, DeadCap: 100}, ss); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}
