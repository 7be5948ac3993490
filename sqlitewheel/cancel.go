package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Cancel is durable.Store's Cancel, in one write transaction
// (lua/cancel.lua): a scheduled, retrying or dead task is finished as
// cancelled (retained for retention, else forgotten), a task in flight is
// marked so that its Settle finishes it as cancelled, a retained task is
// forgotten. It then trims retained tasks as Settle does, 17 at most.
func (s *Store) Cancel(ctx context.Context, key string, retention time.Duration, maxRetained int) (durable.CancelResult, error) {
	var out durable.CancelResult
	err := s.write(ctx, func(tx *sql.Tx, c clock) error {
		var err error
		out, err = s.cancelIn(ctx, tx, c, key, retention, maxRetained)
		return err
	})
	if err != nil {
		return durable.CancelResult{}, fmt.Errorf("sqlitewheel: cancel %q: %w", key, err)
	}
	return out, nil
}
