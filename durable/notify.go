package durable

import "context"

// listen runs the store's Notify, when the store is a Notifier, until the
// returned stop is called (which waits for it to return): tasks that other
// processes add then wake this Run's poller as this Queue's own Adds do.
// Its errors go to Options.OnError as op "notify"; the Notifier retries.
func (r *runner) listen() (stop func()) {
	n, ok := r.q.store.(Notifier)
	if !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(r.bgctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Notify(ctx, r.q.wake, func(err error) { r.q.report("notify", err) })
	}()
	return func() {
		cancel()
		<-done
	}
}
