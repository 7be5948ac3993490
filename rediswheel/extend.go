package rediswheel

import (
	"context"
	"fmt"
	"time"
)

// heartbeat extends the leases of running handlers every Lease/3, one script
// call per shard, until stop is closed. Lease/3 leaves two more beats before
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
		r.mu.Lock()
		byShard := map[int][]*delivery{}
		for d := range r.leases {
			byShard[d.shard] = append(byShard[d.shard], d)
		}
		r.mu.Unlock()
		for shard, ds := range byShard {
			for len(ds) > 0 {
				n := min(len(ds), maxBatch)
				r.extend(shard, ds[:n], every)
				ds = ds[n:]
			}
		}
	}
}

func (r *runner) extend(shard int, ds []*delivery, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(r.bgctx, timeout)
	defer cancel()
	codes, err := r.q.extend(ctx, shard, ds, r.q.opts.Lease)
	if err != nil {
		r.report("extend", err)
		return
	}
	for i, code := range codes {
		switch code {
		case extendLost:
			ds[i].cancel(ErrLeaseLost)
		case extendCancelled:
			ds[i].cancel(ErrCanceled)
		}
	}
}

// An extendCode is what the extend script did with one lease; lua/extend.lua
// returns the same numbers.
type extendCode = int64

const (
	extendLost      extendCode = 0 // the token is not current: the task is no longer ours
	extendOK        extendCode = 1 // extended
	extendCancelled extendCode = 2 // extended, but Cancel was called for the task
)

// extend pushes the leases of ds, all in shard, to lease from now. It returns
// one extendCode per delivery. The arguments and the reply are
// lua/extend.lua's: change both together.
func (q *Queue) extend(ctx context.Context, shard int, ds []*delivery, lease time.Duration) ([]extendCode, error) {
	args := make([]any, 0, 1+2*len(ds))
	args = append(args, durationMilliCeil(lease))
	for _, d := range ds {
		args = append(args, d.task.Key, d.token)
	}
	codes, err := extendScript.Run(ctx, q.client, q.keys[shard], args...).Int64Slice()
	if err == nil && len(codes) != len(ds) {
		err = fmt.Errorf("unexpected reply %v", codes)
	}
	if err != nil {
		return nil, fmt.Errorf("rediswheel: extend shard %d: %w", shard, err)
	}
	return codes, nil
}
