package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Stats is durable.Store's Stats: one snapshot (one read transaction) of the
// namespace. The counts per place, and of the retrying and the cancelled
// tasks (migration 2), come from sqlitewheel_count, one row each;
// telling the due tasks that are due now from those due later reads the
// index over the tasks due now, so that part grows with the backlog.
func (s *Store) Stats(ctx context.Context) ([]durable.ShardStats, error) {
	st := durable.ShardStats{Shard: 0}
	err := s.read(ctx, func(tx *sql.Tx) error {
		now := readClock().now
		var retrying, cancelled int64
		counts := map[string]*int64{"due": new(int64), "lease": &st.InFlight, "dead": &st.Dead, "kept": &st.Retained,
			"retrying": &retrying, "cancelled": &cancelled}
		rows, err := tx.QueryContext(ctx, `SELECT place, n FROM sqlitewheel_count WHERE namespace = ?`, s.namespace)
		if err != nil {
			return err
		}
		for rows.Next() {
			var place string
			var n int64
			if err := rows.Scan(&place, &n); err != nil {
				rows.Close()
				return err
			}
			if p := counts[place]; p != nil {
				*p = n
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		var oldest int64
		var paused bool
		if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(min(at), ?2),
			coalesce((SELECT paused FROM sqlitewheel_queue WHERE namespace = ?1), 0)
			FROM sqlitewheel_task WHERE namespace = ?1 AND place = 'due' AND at <= ?2`,
			s.namespace, now).Scan(&st.Due, &oldest, &paused); err != nil {
			return err
		}
		st.Scheduled = *counts["due"] - st.Due
		st.OldestDue = time.Duration(now-oldest) * time.Millisecond
		st.Paused = paused
		st.States = durable.StateCounts{
			Scheduled: *counts["due"] - retrying, Retrying: retrying, InFlight: st.InFlight,
			Dead: st.Dead, Done: st.Retained - cancelled, Cancelled: cancelled,
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlitewheel: stats: %w", err)
	}
	return []durable.ShardStats{st}, nil
}
