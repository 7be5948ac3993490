package durable

import (
	"context"
	"time"
)

// shutdown ends the handlers of a Run whose poll has returned: it lets them
// run for up to ShutdownGrace, then cancels those still running with cause
// and waits for them all to return.
//
// Their leases are still extended and their results still settled meanwhile:
// heartbeat and settleLoop stop only after the handlers. A handler cancelled
// here that returns an error has its task released (see outcomeOf), which is
// why the grace ends with a cancellation and not with an abandonment: an
// abandoned task would wait out its lease and count the attempt.
func (r *runner) shutdown(cause error, stop context.CancelCauseFunc) {
	if grace := r.q.opts.ShutdownGrace; grace > 0 {
		idle := make(chan struct{})
		go func() {
			r.handlers.Wait()
			close(idle)
		}()
		t := time.NewTimer(grace)
		select {
		case <-idle:
		case <-t.C:
		}
		t.Stop()
		stop(cause)
		<-idle // all handlers returned, and the watcher with them
		return
	}
	stop(cause)
	r.handlers.Wait()
}
