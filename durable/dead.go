package durable

import (
	"context"
	"slices"
	"time"
)

// DeadTask is a task that ran out of attempts or failed permanently.
type DeadTask struct {
	Key      string
	Payload  []byte
	Attempts int       // deliveries it had
	Died     time.Time // by the store's clock, to the millisecond
	// LastError is the text of its last failure (cut at 1 KiB), or "lease
	// expired" if its last worker vanished.
	LastError string
}

// Dead lists up to limit dead tasks, oldest first. Each partition of the
// store keeps at most Options.MaxDead of them. It reads limit tasks from
// every partition, so keep
// limit small (say, up to a few thousand).
func (q *Queue) Dead(ctx context.Context, limit int) ([]DeadTask, error) {
	if limit <= 0 {
		return nil, nil
	}
	all, err := q.store.Dead(ctx, limit)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(all, func(a, b DeadTask) int { return a.Died.Compare(b.Died) })
	if len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

// Requeue moves the dead task under key back to due at once, with its
// attempts reset, and reports whether key was dead. Its payload and last
// error are kept (the error until it succeeds).
func (q *Queue) Requeue(ctx context.Context, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	requeued, due, err := q.store.Requeue(ctx, key)
	if err != nil {
		return false, err
	}
	if requeued {
		q.wake(due)
	}
	return requeued, nil
}
