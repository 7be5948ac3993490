package sqlbench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// lead is how far ahead of the first add the lateness workload's first task is due.
const lead = time.Second

// measureAdds adds cfg.Tasks tasks due in an hour, one per call or in batches, and returns adds/s.
// It fails unless the store then holds every one of them.
func measureAdds(ctx context.Context, cfg Config, inst instance, batched bool) (float64, error) {
	start := time.Now()
	later := start.Add(time.Hour)
	due := func(int) time.Time { return later }
	var err error
	if batched {
		err = addBatched(ctx, cfg, inst, "addb", cfg.Tasks, due)
	} else {
		err = addSingle(ctx, cfg, inst, "add", cfg.Tasks, due)
	}
	elapsed := time.Since(start)
	if err != nil {
		return 0, err
	}
	if err := expectUnfinished(ctx, inst, cfg.Tasks); err != nil {
		return 0, err
	}
	return float64(cfg.Tasks) / elapsed.Seconds(), nil
}

// measureFires adds cfg.Tasks tasks already due, then starts a worker and returns fires/s from
// its start until the store holds no unfinished task.
func measureFires(ctx context.Context, cfg Config, inst instance) (float64, error) {
	now := time.Now()
	if err := addBatched(ctx, cfg, inst, "fire", cfg.Tasks, func(int) time.Time { return now }); err != nil {
		return 0, err
	}
	if err := expectUnfinished(ctx, inst, cfg.Tasks); err != nil {
		return 0, err
	}
	rec := newRecorder(cfg.Tasks)
	start := time.Now()
	stop, err := inst.start(rec.handle)
	if err != nil {
		return 0, err
	}
	err = rec.wait(ctx, time.Minute)
	var settled time.Time
	if err == nil {
		settled, err = waitFinished(ctx, inst, 30*time.Second)
	}
	if err = errors.Join(err, stop(), rec.check("fire", cfg.Tasks)); err != nil {
		return 0, err
	}
	return float64(cfg.Tasks) / settled.Sub(start).Seconds(), nil
}

// measureLateness starts a worker, waits cfg.Warmup, adds cfg.LatenessTasks tasks due evenly
// over lead … lead + cfg.Spread from then, and sets r's lateness figures once every one has run.
func measureLateness(ctx context.Context, cfg Config, inst instance, r *Result) error {
	rec := newRecorder(cfg.LatenessTasks)
	stop, err := inst.start(rec.handle)
	if err != nil {
		return err
	}
	select {
	case <-time.After(cfg.Warmup):
	case <-ctx.Done():
		return errors.Join(ctx.Err(), stop())
	}
	first := time.Now().Add(lead)
	step := cfg.Spread / time.Duration(max(cfg.LatenessTasks-1, 1))
	err = addBatched(ctx, cfg, inst, "late", cfg.LatenessTasks, func(i int) time.Time { return first.Add(time.Duration(i) * step) })
	if err == nil && time.Now().After(first) {
		// A task added after its due time would count the add's delay as lateness.
		err = fmt.Errorf("the adds took longer than %v", lead)
	}
	if err == nil {
		err = rec.wait(ctx, lead+cfg.Spread+time.Minute)
	}
	if err = errors.Join(err, stop(), rec.check("late", cfg.LatenessTasks)); err != nil {
		return err
	}
	late := rec.lateness()
	r.LatenessP50 = quantile(late, 0.50)
	r.LatenessP99 = quantile(late, 0.99)
	r.LatenessMax = late[len(late)-1]
	r.Early, _ = slices.BinarySearch(late, 0)
	return nil
}

func expectUnfinished(ctx context.Context, inst instance, want int) error {
	n, err := inst.unfinished(ctx)
	if err == nil && n != want {
		err = fmt.Errorf("the store holds %d unfinished tasks after the adds, want %d", n, want)
	}
	return err
}

// waitFinished polls until the store holds no unfinished task and returns when it saw that.
func waitFinished(ctx context.Context, inst instance, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		n, err := inst.unfinished(ctx)
		now := time.Now()
		if err != nil || n == 0 {
			return now, err
		}
		if now.After(deadline) {
			return now, fmt.Errorf("%d tasks still unfinished %v after their handlers ran", n, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// addSingle adds n tasks named prefix-0 … prefix-(n-1), task i due at due(i), one call each, from
// cfg.Producers goroutines.
func addSingle(ctx context.Context, cfg Config, inst instance, prefix string, n int, due func(i int) time.Time) error {
	return produce(cfg.Producers, n, 1, func(from, to int) error {
		return inst.add(ctx, prefix+"-"+strconv.Itoa(from), due(from))
	})
}

// addBatched is addSingle in calls of cfg.Batch tasks.
func addBatched(ctx context.Context, cfg Config, inst instance, prefix string, n int, due func(i int) time.Time) error {
	return produce(cfg.Producers, n, cfg.Batch, func(from, to int) error {
		keys := make([]string, 0, to-from)
		dues := make([]time.Time, 0, to-from)
		for i := from; i < to; i++ {
			keys = append(keys, prefix+"-"+strconv.Itoa(i))
			dues = append(dues, due(i))
		}
		return inst.addBatch(ctx, keys, dues)
	})
}

// produce calls add(from, to) for consecutive ranges of up to size of 0 … n-1 from producers
// goroutines, until every range is done or one call fails.
func produce(producers, n, size int, add func(from, to int) error) error {
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	errs := make([]error, producers)
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				from := int(next.Add(int64(size)) - int64(size))
				if from >= n {
					return
				}
				if err := add(from, min(from+size, n)); err != nil {
					errs[p] = err
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// recorder collects handler calls: which tasks ran, how often, and how late.
type recorder struct {
	want int
	done chan struct{}

	mu   sync.Mutex
	seen map[string]int
	late []time.Duration
}

func newRecorder(want int) *recorder {
	return &recorder{want: want, done: make(chan struct{}), seen: make(map[string]int, want), late: make([]time.Duration, 0, want)}
}

func (r *recorder) handle(key string, due time.Time) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[key]++
	if r.seen[key] > 1 {
		return
	}
	r.late = append(r.late, now.Sub(due))
	if len(r.late) == r.want {
		close(r.done)
	}
}

func (r *recorder) wait(ctx context.Context, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		r.mu.Lock()
		defer r.mu.Unlock()
		return fmt.Errorf("%d of %d tasks ran within %v", len(r.late), r.want, timeout)
	}
}

// check verifies that the tasks named prefix-0 … prefix-(n-1), and no other, each ran exactly once.
func (r *recorder) check(prefix string, n int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range n {
		if c := r.seen[prefix+"-"+strconv.Itoa(i)]; c != 1 {
			return fmt.Errorf("task %s-%d ran %d times", prefix, i, c)
		}
	}
	if len(r.seen) != n {
		return fmt.Errorf("%d distinct tasks ran, want %d", len(r.seen), n)
	}
	return nil
}

// lateness returns every task's lateness, sorted.
func (r *recorder) lateness() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	late := slices.Clone(r.late)
	slices.Sort(late)
	return late
}

// quantile is the nearest-rank q-quantile of sorted, which is not empty.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
