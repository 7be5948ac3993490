package sqlbench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// durableInstance is a durable.Queue on a fresh store (sqlitewheel, pgwheel): the same code for
// every store, as an application would use it.
type durableInstance struct {
	q *durable.Queue
	// drop deletes the store's tasks and releases it.
	drop func(ctx context.Context) error
}

func newDurableInstance(cfg Config, st durable.Store, drop func(context.Context) error) (*durableInstance, error) {
	q, err := durable.New(st, durable.Options{
		Concurrency: cfg.Concurrency,
		OnError:     func(err error) { cfg.Logger.Warn("durable", "err", err) },
	})
	if err != nil {
		return nil, errors.Join(err, drop(context.Background()))
	}
	return &durableInstance{q: q, drop: drop}, nil
}

func (d *durableInstance) add(ctx context.Context, key string, due time.Time) error {
	added, err := d.q.Add(ctx, key, encodeDue(due), due)
	if err == nil && !added {
		err = fmt.Errorf("task %s already exists", key)
	}
	return err
}

func (d *durableInstance) addBatch(ctx context.Context, keys []string, due []time.Time) error {
	items := make([]durable.Item, len(keys))
	for i, k := range keys {
		items[i] = durable.Item{Key: k, Payload: encodeDue(due[i]), At: due[i]}
	}
	added, err := d.q.AddBatch(ctx, items)
	if err != nil {
		return err
	}
	for i, ok := range added {
		if !ok {
			return fmt.Errorf("task %s already exists", keys[i])
		}
	}
	return nil
}

func (d *durableInstance) start(handle func(key string, due time.Time)) (func() error, error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- d.q.Run(ctx, func(_ context.Context, t durable.Task) error {
			due, err := decodeDue(t.Payload)
			if err != nil {
				return durable.Permanent(err)
			}
			handle(t.Key, due)
			return nil
		})
	}()
	return func() error { cancel(); return <-done }, nil
}

func (d *durableInstance) unfinished(ctx context.Context) (int, error) {
	s, err := d.q.Stats(ctx)
	t := s.Total
	return int(t.Due + t.Scheduled + t.InFlight + t.Dead), err
}

func (d *durableInstance) close(ctx context.Context) error { return d.drop(ctx) }

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
