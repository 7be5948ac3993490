package server

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/ssrf"
)

// workerHandler is what the workers run: a Mux with durable's HTTP
// handler under HTTPTaskType, sending through the Guard's checked client
// with timeout for a callback that gives none (0: durable's default).
// A callback whose destination the Guard refuses at dial time (its name now
// resolves to a private address, or the allowlist changed since it was
// created) is dead-lettered at once rather than retried MaxAttempts times:
// retrying will not change the answer, and the dead set is where an
// operator looks (requeue it once the allowlist names the destination).
//
// With streams (the backend's stream Redis) the Mux also has rediswheel's
// StreamHandler under StreamTaskType, trimming at maxLen if positive.
// Without, a stream task (created by a process that had one) has no handler
// in the Mux, which dead-letters it: requeue it once this one has.
func workerHandler(guard *ssrf.Guard, timeout time.Duration, streams redis.UniversalClient, maxLen int64) durable.Handler {
	var opts []durable.HTTPOption
	if timeout > 0 {
		opts = append(opts, durable.HTTPDefaultTimeout(timeout))
	}
	send := durable.HTTPHandler(guard.Client(), opts...)
	mux := durable.NewMux()
	mux.HandleFunc(durable.HTTPTaskType, func(ctx context.Context, t durable.Task) error {
		err := send(ctx, t)
		if errors.Is(err, ssrf.ErrForbidden) {
			return durable.Permanent(err)
		}
		return err
	})
	if streams != nil {
		var opts []rediswheel.StreamOption
		if maxLen > 0 {
			opts = append(opts, rediswheel.StreamMaxLen(maxLen))
		}
		mux.Handle(rediswheel.StreamTaskType, rediswheel.StreamHandler(streams, opts...))
	}
	return mux.Handler
}
