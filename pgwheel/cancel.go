package pgwheel

import (
	"context"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/jackc/pgx/v5"
)

// Cancel is durable.Store's Cancel.
func (s *Store) Cancel(ctx context.Context, key string, retention time.Duration, maxRetained int) (durable.CancelResult, error) {
	code, trimmed, err := s.cancel(ctx, key, retention, maxRetained)
	if err != nil {
		return durable.CancelResult{}, unavailable(err)
	}
	return durable.CancelResult{Found: code != cancelUnknown, RetainedTrimmed: trimmed}, nil
}

// cancelCode is what Cancel did; the numbers are rediswheel's cancelCode.
type cancelCode int

const (
	cancelUnknown   cancelCode = 0 // no task under the key
	cancelScheduled cancelCode = 1 // a scheduled or retrying task: finished as cancelled
	cancelInFlight  cancelCode = 2 // marked: its Settle finishes it as cancelled, it is never retried
	cancelDead      cancelCode = 3 // a dead task: finished as cancelled
	cancelForgotten cancelCode = 4 // a retained finished task: forgotten, a later Add is a new task
)

// cancel ends the task for good, in one transaction: a scheduled,
// retrying or dead task is finished as cancelled (retained for retention,
// forgotten at once when it is 0); a task in flight is marked, so that
// Extend reports durable.ExtendCancelled and Settle finishes it as cancelled
// whatever its outcome; a retained task is forgotten. It then trims up to
// 17 retained tasks (retention over, or past maxRetained), and returns how
// many.
func (s *Store) cancel(ctx context.Context, key string, retention time.Duration, maxRetained int) (cancelCode, int, error) {
	if err := checkKey(key); err != nil {
		return 0, 0, err
	}
	if retention < 0 || maxRetained < 0 {
		return 0, 0, fmt.Errorf("%w: cancel: retention %v, max retained %d", ErrArgument, retention, maxRetained)
	}
	var code cancelCode
	var trimmed int
	err := s.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var err error
		code, trimmed, err = s.cancelIn(ctx, pgxTx{tx}, key, retention, maxRetained)
		return err
	})
	if err != nil {
		return 0, 0, schemaMissing(fmt.Errorf("pgwheel: cancel %q: %w", key, err))
	}
	return code, trimmed, nil
}
