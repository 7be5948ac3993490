package redisbench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/hibiken/asynq"
)

type rediswheelSystem struct {
	cfg Config
	ns  string
	q   *rediswheel.Queue
}

func newRediswheel(cfg Config, ns string) (*rediswheelSystem, error) {
	q, err := rediswheel.New(cfg.Client, rediswheel.Options{Namespace: ns, Concurrency: cfg.Concurrency})
	if err != nil {
		return nil, err
	}
	return &rediswheelSystem{cfg: cfg, ns: ns, q: q}, nil
}

func (s *rediswheelSystem) name() string { return "rediswheel" }

func (s *rediswheelSystem) add(ctx context.Context, key string, due time.Time) error {
	added, err := s.q.Add(ctx, key, encodeDue(due), due)
	if err == nil && !added {
		err = errors.New("rediswheel: task " + key + " already exists")
	}
	return err
}

func (s *rediswheelSystem) addBatch(ctx context.Context, keys []string, due []time.Time) error {
	items := make([]rediswheel.Item, len(keys))
	for i, k := range keys {
		items[i] = rediswheel.Item{Key: k, Payload: encodeDue(due[i]), At: due[i]}
	}
	added, err := s.q.AddBatch(ctx, items)
	if err != nil {
		return err
	}
	for i, ok := range added {
		if !ok {
			return errors.New("rediswheel: task " + keys[i] + " already exists")
		}
	}
	return nil
}

func (s *rediswheelSystem) start(handle func(key string, due time.Time)) (func(), error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.q.Run(ctx, func(_ context.Context, t rediswheel.Task) error {
			due, err := decodeDue(t.Payload)
			if err != nil {
				return rediswheel.Permanent(err)
			}
			handle(t.Key, due)
			return nil
		})
	}()
	return func() { cancel(); <-done }, nil
}

func (s *rediswheelSystem) clear(ctx context.Context) error {
	// Every key of a namespace starts with its shard's hash tag, "{" + ns + "." + shard + "}".
	return deleteMatching(ctx, s.cfg.Client, "{"+s.ns+".*")
}

// asynqSystem runs asynq with its defaults, except for the queue name (one per run, so that it
// can be deleted afterwards), the concurrency, and a logger that keeps quiet.
type asynqSystem struct {
	cfg    Config
	queue  string
	client *asynq.Client
}

func newAsynq(cfg Config, queue string) *asynqSystem {
	return &asynqSystem{cfg: cfg, queue: queue, client: asynq.NewClientFromRedisClient(cfg.Client)}
}

func (s *asynqSystem) name() string { return "asynq" }

func (s *asynqSystem) add(ctx context.Context, key string, due time.Time) error {
	// TaskID makes the add idempotent by key, as rediswheel's Add is.
	_, err := s.client.EnqueueContext(ctx, asynq.NewTask("bench", encodeDue(due)),
		asynq.Queue(s.queue), asynq.TaskID(key), asynq.ProcessAt(due))
	return err
}

func (s *asynqSystem) start(handle func(key string, due time.Time)) (func(), error) {
	srv := asynq.NewServerFromRedisClient(s.cfg.Client, asynq.Config{
		Concurrency: s.cfg.Concurrency,
		Queues:      map[string]int{s.queue: 1},
		Logger:      quietLogger{},
	})
	err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		due, err := decodeDue(t.Payload())
		if err != nil {
			return errors.Join(err, asynq.SkipRetry)
		}
		key, _ := asynq.GetTaskID(ctx)
		handle(key, due)
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return srv.Shutdown, nil
}

func (s *asynqSystem) clear(ctx context.Context) error {
	if err := deleteMatching(ctx, s.cfg.Client, "asynq:{"+s.queue+"}:*"); err != nil {
		return err
	}
	return s.cfg.Client.SRem(ctx, "asynq:queues", s.queue).Err()
}

// quietLogger discards asynq's log lines but its fatal ones: a failure shows up as tasks that
// never ran.
type quietLogger struct{}

func (quietLogger) Debug(...any)      {}
func (quietLogger) Info(...any)       {}
func (quietLogger) Warn(...any)       {}
func (quietLogger) Error(...any)      {}
func (quietLogger) Fatal(args ...any) { panic("asynq: " + fmt.Sprint(args...)) }
