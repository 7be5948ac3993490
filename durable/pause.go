package durable

import "context"

// Pause stops the namespace's deliveries: from the moment each partition's
// flag is set, every Run's claims on that partition lease nothing (they still return
// tasks of dead workers to due). Handlers already running go on and settle
// as usual. Adds, Replaces, Cancels, Reschedules and Requeues go on too, so
// a backlog builds up, visible in Stats. Pause is stored in the store and holds
// for every process on the namespace until Resume; it does not end Runs.
//
// It sets a flag on every partition (on Redis, one pipeline); an error means
// some partitions may be paused and others not (Stats.Paused reports any): call it again.
func (q *Queue) Pause(ctx context.Context) error {
	return q.store.Pause(ctx, true)
}

// Resume lets claims lease tasks again on every partition. This Queue's idle
// Runs claim at once; other processes' within their poll interval (at most
// a second). Resuming a namespace that is not paused does nothing.
func (q *Queue) Resume(ctx context.Context) error {
	if err := q.store.Pause(ctx, false); err != nil {
		return err
	}
	q.wake(0) // a Run may sleep up to PollInterval: let it claim now
	return nil
}
