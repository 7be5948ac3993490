package schedules

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// pollInterval is how often Run reads the definitions: a change made by Put
// or Delete reaches the other processes within it. One poll is one HGETALL;
// with 100 definitions it costs ~0.75 ms of round trip and decoding
// (BenchmarkPoll, loopback Redis, 2-core EPYC), against the one registry read a second
// that durable's Periodic makes for each schedule anyway.
const pollInterval = time.Second

// Run runs every definition with durable's Periodic until ctx ends, then
// stops them, waits for them and returns nil. Call it in every timerd process
// (each time still runs once across all of them); it needs a Run of the Queue
// with HTTPHandler registered for durable.HTTPTaskType somewhere to deliver
// the occurrences. It polls the definitions every second: a new one starts,
// a changed one restarts as its new version, and a deleted one stops and is
// removed from durable's registry. A failed poll is logged and leaves the
// running schedules as they are.
func (s *Store) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	running := map[string]*runner{} // by periodic name
	defer func() {
		for _, r := range running {
			r.cancel()
		}
		wg.Wait()
	}()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		s.reconcile(ctx, running, &wg)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// runner is one definition's version running in this process.
type runner struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when Periodic has returned
	err    error         // what it returned; read only after done
}

// ended reports whether Periodic returned, and with what.
func (r *runner) ended() (bool, error) {
	select {
	case <-r.done:
		return true, r.err
	default:
		return false, nil
	}
}

// reconcile makes running match the definitions as read now.
func (s *Store) reconcile(ctx context.Context, running map[string]*runner, wg *sync.WaitGroup) {
	entries, err := s.read(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("schedules: reading the definitions", "err", err)
		}
		return
	}
	want := make(map[string]entry, len(entries))
	for _, e := range entries {
		want[e.periodic] = e
	}
	for p, r := range running {
		if _, ok := want[p]; !ok {
			// Deleted or changed. Put and Delete removed it already unless
			// their process died first: removing again is a no-op.
			r.cancel()
			delete(running, p)
			s.remove(ctx, p)
		}
	}
	for p, e := range want {
		if r := running[p]; r != nil {
			done, err := r.ended()
			// A schedule without more times stays ended; one removed by
			// another process (deleted and put back meanwhile) starts again.
			if !done || errors.Is(err, durable.ErrScheduleEnded) {
				continue
			}
		}
		running[p] = s.start(ctx, e, wg)
	}
}

// start runs e's schedule in a goroutine of its own.
func (s *Store) start(ctx context.Context, e entry, wg *sync.WaitGroup) *runner {
	sched, err := e.def.schedule()
	payload, err2 := durable.EncodeHTTPTask(e.def.Callback)
	rctx, cancel := context.WithCancel(ctx)
	r := &runner{cancel: cancel, done: make(chan struct{})}
	if err = errors.Join(err, err2); err != nil {
		// read decoded and validated it: this is a bug.
		s.log.Error("schedules: cannot run a definition", "name", e.def.Name, "err", err)
		r.err = durable.ErrScheduleEnded
		close(r.done)
		return r
	}
	opts := []durable.TaskOption{durable.TaskType(durable.HTTPTaskType)}
	if e.def.MaxAttempts > 0 {
		opts = append(opts, durable.TaskMaxAttempts(e.def.MaxAttempts))
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(r.done)
		r.err = s.q.Periodic(rctx, e.periodic, sched, payload, opts...)
		switch {
		case r.err == nil, errors.Is(r.err, durable.ErrPeriodicRemoved):
		case errors.Is(r.err, durable.ErrScheduleEnded):
			s.log.Info("schedules: a schedule has no more times", "name", e.def.Name, "err", r.err)
		default:
			s.log.Error("schedules: periodic ended", "name", e.def.Name, "err", r.err)
		}
	}()
	return r
}
