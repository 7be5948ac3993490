package durable

import (
	"context"
	"fmt"
	"time"
)

// heartbeat extends the leases of running handlers every Lease/3, one
// Store.Extend per partition, until stop is closed. Lease/3 leaves two more beats before
// a lease runs out, so one slow or failed call does not lose a task.
//
// A handler whose task is no longer ours (its lease ran out and was reaped,
// so a late ack would be rejected anyway) or was cancelled has its context
// cancelled with ErrLeaseLost or ErrCanceled as the cause.
func (r *runner) heartbeat(stop <-chan struct{}) {
	every := r.q.opts.Lease / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		r.beat.Lock()
		r.mu.Lock()
		byPartition := map[int][]*delivery{}
		for d := range r.leases {
			byPartition[d.partition] = append(byPartition[d.partition], d)
		}
		r.mu.Unlock()
		for partition, ds := range byPartition {
			for len(ds) > 0 {
				n := min(len(ds), maxBatch)
				r.extend(partition, ds[:n], every)
				ds = ds[n:]
			}
		}
		r.beat.Unlock()
	}
}

func (r *runner) extend(partition int, ds []*delivery, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(r.bgctx, timeout)
	defer cancel()
	codes, err := r.q.extend(ctx, partition, ds, r.q.opts.Lease)
	if err != nil {
		r.report("extend", err)
		return
	}
	for i, code := range codes {
		switch code {
		case ExtendLost:
			ds[i].cancel(ErrLeaseLost)
		case ExtendCancelled:
			ds[i].cancel(ErrCanceled)
		}
	}
}

// extend pushes the leases of ds, all in partition, to lease from now, and
// returns one ExtendCode per delivery.
func (q *Queue) extend(ctx context.Context, partition int, ds []*delivery, lease time.Duration) ([]ExtendCode, error) {
	leases := make([]Lease, len(ds))
	for i, d := range ds {
		leases[i] = Lease{Key: d.task.Key, Token: d.token}
	}
	codes, err := q.store.Extend(ctx, partition, lease, leases)
	if err == nil && len(codes) != len(ds) {
		err = fmt.Errorf("durable: extend partition %d: %d codes for %d leases", partition, len(codes), len(ds))
	}
	return codes, err
}
