package rediswheel

import "log/slog"

// report hands an error Run cannot return to Options.OnError or, when that
// is nil, to slog.Default at warning level: a library does not print, but an
// error nobody sees is worse. op names the call that failed: claim, extend
// or settle.
func (r *runner) report(op string, err error) {
	r.q.observeError(RedisOp(op), err)
	if r.q.opts.OnError != nil {
		r.q.opts.OnError(err)
		return
	}
	slog.Default().Warn("rediswheel: "+op+" failed", "op", op, "err", err, "namespace", r.q.opts.Namespace)
}
