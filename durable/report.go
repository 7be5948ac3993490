package durable

import "log/slog"

// report hands an error Run cannot return to Options.OnError or, when that
// is nil, to slog.Default at warning level: a library does not print, but an
// error nobody sees is worse. op names the call that failed: claim, extend
// or settle.
func (r *runner) report(op string, err error) {
	r.q.observeError(StoreOp(op), err)
	r.q.report(op, err)
}

// report is runner.report without the Observer, for the errors of loops
// that are not Run's (Periodic, whose op is "periodic").
func (q *Queue) report(op string, err error) {
	if q.opts.OnError != nil {
		q.opts.OnError(err)
		return
	}
	args := []any{"op", op, "err", err}
	for _, a := range q.opts.LogAttrs {
		args = append(args, a)
	}
	slog.Default().Warn("durable: "+op+" failed", args...)
}
