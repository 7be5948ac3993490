// Package redisbench compares rediswheel with asynq (github.com/hibiken/asynq) on one Redis
// server, in one run, on three workloads:
//
//   - adds: Tasks tasks due in an hour, added by Producers goroutines, one Add (asynq: one Enqueue)
//     per task; adds/s and Redis CPU per add.
//   - batched adds (rediswheel only; asynq has no batch enqueue): the same, but each producer
//     hands Batch tasks at a time to AddBatch.
//   - fires: Tasks tasks already due, added with no worker running; then a worker starts and runs
//     them all. Fires/s is Tasks over the time from the worker's start to the last handler call;
//     Redis CPU per fire covers the same window.
//   - lateness: SpreadTasks tasks due evenly over Spread, starting 2 s after they are added, with a
//     worker already running; lateness is a handler's start minus the due time the producer asked
//     for, on this process's clock (Redis runs on the same host, so on the same clock).
//
// Both systems run with Concurrency handler slots and their own defaults otherwise. For asynq that
// means a scheduled task is moved to its queue by a forwarder that runs every 5 s
// (Config.DelayedTaskCheckInterval), and an idle worker looks for new tasks every second
// (Config.TaskCheckInterval); tasks due now are enqueued straight to the queue. Redis CPU is the
// server's used_cpu_user + used_cpu_sys (INFO cpu), so it counts everything the server did in the
// window, background work of either system included: run it on a server nothing else uses.
//
// Every run checks that it measured what it names: each task is handled exactly once. A task run
// before its due time is counted, not hidden: asynq stores due times in whole seconds.
package redisbench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/internal/measure"
	"github.com/redis/go-redis/v9"
)

// Config describes one comparison.
type Config struct {
	Client      *redis.Client // a standalone server that nothing else is using
	Tasks       int           // tasks in the adds and fires workloads
	SpreadTasks int           // tasks in the lateness workload
	Spread      time.Duration // the lateness workload's tasks are due evenly over Spread
	Producers   int           // goroutines adding tasks
	Concurrency int           // handler slots of each worker
	Batch       int           // tasks per call in the batched adds workload; 0 skips it
}

// Result is one system's figures.
type Result struct {
	System      string
	AddsPerSec  float64
	RedisCPUAdd time.Duration // Redis CPU per added task
	// AddsPerSecBatch and RedisCPUAddBatch are the batched adds workload's figures; zero for a
	// system without a batch add, or when Config.Batch is 0.
	AddsPerSecBatch  float64
	RedisCPUAddBatch time.Duration
	FiresPerSec      float64
	RedisCPUFire     time.Duration // Redis CPU per fired task
	LatenessP50      time.Duration
	LatenessP99      time.Duration
	LatenessMax      time.Duration
	// Early counts lateness-workload tasks whose handler started before their due time.
	Early int
}

// system is what a workload needs of a task queue. Tasks carry the due time the producer asked
// for, so both systems are measured against the same instant.
type system interface {
	name() string
	add(ctx context.Context, key string, due time.Time) error
	// start starts a worker calling handle(key, due) for each task; stop waits for it to end.
	start(handle func(key string, due time.Time)) (stop func(), err error)
	// clear deletes every key of the system's namespace; no worker runs.
	clear(ctx context.Context) error
}

// batchAdder is a system that can add many tasks in one call.
type batchAdder interface {
	addBatch(ctx context.Context, keys []string, due []time.Time) error
}

// Run measures each system in turn and returns their results in order.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if cfg.Client == nil || cfg.Tasks <= 0 || cfg.SpreadTasks <= 0 || cfg.Spread <= 0 || cfg.Producers <= 0 || cfg.Concurrency <= 0 {
		return nil, fmt.Errorf("redisbench: incomplete config %+v", cfg)
	}
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	var results []Result
	for _, newSystem := range []func() (system, error){
		func() (system, error) { return newRediswheel(cfg, "redisbench."+suffix) },
		func() (system, error) { return newAsynq(cfg, "redisbench-"+suffix), nil },
	} {
		sys, err := newSystem()
		if err != nil {
			return nil, err
		}
		r, err := measureSystem(ctx, cfg, sys)
		if cerr := sys.clear(context.Background()); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("redisbench: %s: %w", sys.name(), err)
		}
		results = append(results, r)
	}
	return results, nil
}

func measureSystem(ctx context.Context, cfg Config, sys system) (Result, error) {
	r := Result{System: sys.name()}

	// adds
	cpu0, err := redisCPU(ctx, cfg.Client)
	if err != nil {
		return r, err
	}
	start := time.Now()
	later := start.Add(time.Hour)
	if err := addAll(ctx, cfg, sys, "add", cfg.Tasks, func(int) time.Time { return later }); err != nil {
		return r, err
	}
	elapsed := time.Since(start)
	cpu1, err := redisCPU(ctx, cfg.Client)
	if err != nil {
		return r, err
	}
	r.AddsPerSec = float64(cfg.Tasks) / elapsed.Seconds()
	r.RedisCPUAdd = (cpu1 - cpu0) / time.Duration(cfg.Tasks)
	if err := sys.clear(ctx); err != nil {
		return r, err
	}

	// batched adds
	if b, ok := sys.(batchAdder); ok && cfg.Batch > 0 {
		cpu0, err := redisCPU(ctx, cfg.Client)
		if err != nil {
			return r, err
		}
		start := time.Now()
		later := start.Add(time.Hour)
		if err := addAllBatched(ctx, cfg, b, "addb", cfg.Tasks, later); err != nil {
			return r, err
		}
		elapsed := time.Since(start)
		cpu1, err := redisCPU(ctx, cfg.Client)
		if err != nil {
			return r, err
		}
		r.AddsPerSecBatch = float64(cfg.Tasks) / elapsed.Seconds()
		r.RedisCPUAddBatch = (cpu1 - cpu0) / time.Duration(cfg.Tasks)
		if err := sys.clear(ctx); err != nil {
			return r, err
		}
	}

	// fires
	now := time.Now()
	if err := addAll(ctx, cfg, sys, "fire", cfg.Tasks, func(int) time.Time { return now }); err != nil {
		return r, err
	}
	rec := newRecorder(cfg.Tasks)
	cpu0, err = redisCPU(ctx, cfg.Client)
	if err != nil {
		return r, err
	}
	start = time.Now()
	stop, err := sys.start(rec.handle)
	if err != nil {
		return r, err
	}
	err = rec.wait(ctx, time.Minute)
	last := rec.last()
	cpu1, cpuErr := redisCPU(ctx, cfg.Client)
	stop()
	if err = errors.Join(err, cpuErr, rec.check("fire", cfg.Tasks)); err != nil {
		return r, err
	}
	r.FiresPerSec = float64(cfg.Tasks) / last.Sub(start).Seconds()
	r.RedisCPUFire = (cpu1 - cpu0) / time.Duration(cfg.Tasks)
	if err := sys.clear(ctx); err != nil {
		return r, err
	}

	// lateness
	rec = newRecorder(cfg.SpreadTasks)
	stop, err = sys.start(rec.handle)
	if err != nil {
		return r, err
	}
	first := time.Now().Add(2 * time.Second)
	step := cfg.Spread / time.Duration(cfg.SpreadTasks)
	err = addAll(ctx, cfg, sys, "late", cfg.SpreadTasks, func(i int) time.Time { return first.Add(time.Duration(i) * step) })
	if err == nil {
		err = rec.wait(ctx, 2*time.Second+cfg.Spread+time.Minute)
	}
	stop()
	if err = errors.Join(err, rec.check("late", cfg.SpreadTasks)); err != nil {
		return r, err
	}
	late := rec.lateness()
	r.LatenessP50 = measure.Quantile(late, 0.50)
	r.LatenessP99 = measure.Quantile(late, 0.99)
	r.LatenessMax = late[len(late)-1]
	r.Early, _ = slices.BinarySearch(late, 0)
	return r, nil
}

// addAll adds n tasks named prefix-0 … prefix-(n-1), task i due at due(i), from cfg.Producers
// goroutines.
func addAll(ctx context.Context, cfg Config, sys system, prefix string, n int, due func(i int) time.Time) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, cfg.Producers)
	for p := range cfg.Producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := sys.add(ctx, prefix+"-"+strconv.Itoa(i), due(i)); err != nil {
					errs[p] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// addAllBatched is addAll for a batchAdder: each producer takes cfg.Batch tasks at a time, all due
// at due.
func addAllBatched(ctx context.Context, cfg Config, sys batchAdder, prefix string, n int, due time.Time) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, cfg.Producers)
	for p := range cfg.Producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys := make([]string, 0, cfg.Batch)
			dues := make([]time.Time, 0, cfg.Batch)
			for {
				from := int(next.Add(int64(cfg.Batch)) - int64(cfg.Batch))
				if from >= n {
					return
				}
				keys, dues = keys[:0], dues[:0]
				for i := from; i < min(from+cfg.Batch, n); i++ {
					keys = append(keys, prefix+"-"+strconv.Itoa(i))
					dues = append(dues, due)
				}
				if err := sys.addBatch(ctx, keys, dues); err != nil {
					errs[p] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// recorder collects handler calls: when each task ran and how late.
type recorder struct {
	want int
	done chan struct{}

	mu     sync.Mutex
	seen   map[string]int
	late   []time.Duration
	lastAt time.Time
	dups   int
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
		r.dups++
		return
	}
	r.late = append(r.late, now.Sub(due))
	r.lastAt = now
	if len(r.late) == r.want {
		close(r.done)
	}
}

func (r *recorder) wait(ctx context.Context, timeout time.Duration) error {
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(timeout):
		r.mu.Lock()
		defer r.mu.Unlock()
		return fmt.Errorf("%d of %d tasks ran within %v", len(r.late), r.want, timeout)
	}
}

func (r *recorder) last() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastAt
}

// check verifies that every task named prefix-i ran exactly once.
func (r *recorder) check(prefix string, n int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dups > 0 {
		return fmt.Errorf("%d tasks ran more than once", r.dups)
	}
	for i := range n {
		if r.seen[prefix+"-"+strconv.Itoa(i)] != 1 {
			return fmt.Errorf("task %s-%d ran %d times", prefix, i, r.seen[prefix+"-"+strconv.Itoa(i)])
		}
	}
	if len(r.seen) != n {
		return fmt.Errorf("%d distinct tasks ran, want %d", len(r.seen), n)
	}
	return nil
}

func (r *recorder) lateness() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	late := slices.Clone(r.late)
	slices.Sort(late)
	return late
}

// redisCPU is the CPU time the server has used so far, user plus system.
func redisCPU(ctx context.Context, c *redis.Client) (time.Duration, error) {
	info, err := c.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	var total float64
	found := 0
	for _, line := range strings.Split(info, "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_user" || name == "used_cpu_sys") {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return 0, fmt.Errorf("INFO cpu: %s: %w", line, err)
			}
			total += v
			found++
		}
	}
	if found != 2 {
		return 0, errors.New("INFO cpu: no used_cpu_user and used_cpu_sys")
	}
	return time.Duration(total * float64(time.Second)), nil
}

// encodeDue and decodeDue carry the due time the producer asked for in a task's payload.
func encodeDue(due time.Time) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(due.UnixNano()))
}

func decodeDue(payload []byte) (time.Time, error) {
	if len(payload) != 8 {
		return time.Time{}, fmt.Errorf("payload of %d bytes, want 8", len(payload))
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(payload))), nil
}

// deleteMatching deletes the keys matching pattern, SCAN by SCAN.
func deleteMatching(ctx context.Context, c *redis.Client, pattern string) error {
	iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 1000 {
			if err := c.Unlink(ctx, batch...).Err(); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		return c.Unlink(ctx, batch...).Err()
	}
	return nil
}
