package sqlbench

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
)

// benchArgs is a River job: the task's key, unique (as a durable Add is idempotent by key), and
// the due time the producer asked for.
type benchArgs struct {
	Key string `json:"key" river:"unique"`
	Due int64  `json:"due"` // Unix ns
}

func (benchArgs) Kind() string { return "sqlbench" }

// uniqueByKey makes a job unique by its key within its queue, in every state but discarded and
// cancelled (River's default states).
var uniqueByKey = river.UniqueOpts{ByArgs: true, ByQueue: true}

type benchWorker struct {
	river.WorkerDefaults[benchArgs]
	handle *atomic.Pointer[func(key string, due time.Time)]
}

func (w benchWorker) Work(_ context.Context, job *river.Job[benchArgs]) error {
	(*w.handle.Load())(job.Args.Key, time.Unix(0, job.Args.Due))
	return nil
}

// riverInstance is one River client on one queue of a fresh database or queue.
type riverInstance[TTx any] struct {
	client *river.Client[TTx]
	queue  string
	handle atomic.Pointer[func(key string, due time.Time)]
	// count counts the queue's jobs that are not completed; drop deletes them and releases
	// the database.
	count func(ctx context.Context) (int, error)
	drop  func(ctx context.Context) error
}

// riverOptions are what differs between the River systems.
type riverOptions struct {
	schema   string
	queue    string
	cooldown time.Duration // FetchCooldown; 0 is River's default
	poll     time.Duration // FetchPollInterval; 0 is River's default
}

func newRiverInstance[TTx any](cfg Config, driver riverdriver.Driver[TTx], o riverOptions,
	count func(context.Context) (int, error), drop func(context.Context) error) (*riverInstance[TTx], error) {
	r := &riverInstance[TTx]{queue: o.queue, count: count, drop: drop}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, benchWorker{handle: &r.handle}); err != nil {
		return nil, errors.Join(err, drop(context.Background()))
	}
	client, err := river.NewClient(driver, &river.Config{
		Logger:            cfg.Logger,
		Queues:            map[string]river.QueueConfig{o.queue: {MaxWorkers: cfg.Concurrency}},
		Workers:           workers,
		Schema:            o.schema,
		FetchCooldown:     o.cooldown,
		FetchPollInterval: o.poll,
	})
	if err != nil {
		return nil, errors.Join(err, drop(context.Background()))
	}
	r.client = client
	return r, nil
}

// opts are a job's insert options. A job due now or earlier gets no ScheduledAt, so that it is
// inserted available, as a River user would insert it: with a ScheduledAt, even a past one, River
// inserts it scheduled, and only its scheduler (every 5 s) would make it available.
func (r *riverInstance[TTx]) opts(due time.Time) *river.InsertOpts {
	o := &river.InsertOpts{Queue: r.queue, UniqueOpts: uniqueByKey}
	if due.After(time.Now()) {
		o.ScheduledAt = due
	}
	return o
}

func (r *riverInstance[TTx]) add(ctx context.Context, key string, due time.Time) error {
	res, err := r.client.Insert(ctx, benchArgs{Key: key, Due: due.UnixNano()}, r.opts(due))
	if err == nil && res.UniqueSkippedAsDuplicate {
		err = fmt.Errorf("task %s already exists", key)
	}
	return err
}

func (r *riverInstance[TTx]) addBatch(ctx context.Context, keys []string, due []time.Time) error {
	params := make([]river.InsertManyParams, len(keys))
	for i, k := range keys {
		params[i] = river.InsertManyParams{Args: benchArgs{Key: k, Due: due[i].UnixNano()}, InsertOpts: r.opts(due[i])}
	}
	res, err := r.client.InsertMany(ctx, params)
	if err != nil {
		return err
	}
	for i, x := range res {
		if x.UniqueSkippedAsDuplicate {
			return fmt.Errorf("task %s already exists", keys[i])
		}
	}
	return nil
}

func (r *riverInstance[TTx]) start(handle func(key string, due time.Time)) (func() error, error) {
	r.handle.Store(&handle)
	if err := r.client.Start(context.Background()); err != nil {
		return nil, err
	}
	return func() error {
		// Stop waits for running jobs and for their completions to be written.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return r.client.Stop(ctx)
	}, nil
}

func (r *riverInstance[TTx]) unfinished(ctx context.Context) (int, error) { return r.count(ctx) }

func (r *riverInstance[TTx]) close(ctx context.Context) error { return r.drop(ctx) }
