package server

import (
	"context"
	"errors"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/ssrf"
)

// workerHandler is what the workers run: a Mux with rediswheel's HTTP
// handler under HTTPTaskType, sending through the Guard's checked client
// with timeout for a callback that gives none (0: rediswheel's default).
// A callback whose destination the Guard refuses at dial time (its name now
// resolves to a private address, or the allowlist changed since it was
// created) is dead-lettered at once rather than retried MaxAttempts times:
// retrying will not change the answer, and the dead set is where an
// operator looks (requeue it once the allowlist names the destination).
func workerHandler(guard *ssrf.Guard, timeout time.Duration) rediswheel.Handler {
	var opts []rediswheel.HTTPOption
	if timeout > 0 {
		opts = append(opts, rediswheel.HTTPDefaultTimeout(timeout))
	}
	send := rediswheel.HTTPHandler(guard.Client(), opts...)
	mux := rediswheel.NewMux()
	mux.HandleFunc(rediswheel.HTTPTaskType, func(ctx context.Context, t rediswheel.Task) error {
		err := send(ctx, t)
		if errors.Is(err, ssrf.ErrForbidden) {
			return rediswheel.Permanent(err)
		}
		return err
	})
	return mux.Handler
}
