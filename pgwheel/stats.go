package pgwheel

import (
	"context"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Stats is durable.Store's Stats: the one partition's counts, from one
// snapshot. It counts the namespace's tasks by state. It reads the namespace's
// part of the index pgwheel_task_place_at: its cost grows with the number
// of tasks, unlike every other operation's.
func (s *Store) Stats(ctx context.Context) ([]durable.ShardStats, error) {
	var st durable.ShardStats
	var oldest int64
	err := s.pool.QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE t.place = 'due' AND t.at <= c.now),
		count(*) FILTER (WHERE t.place = 'due' AND t.at > c.now),
		count(*) FILTER (WHERE t.place = 'lease'),
		count(*) FILTER (WHERE t.place = 'dead'),
		count(*) FILTER (WHERE t.place = 'kept'),
		coalesce((extract(epoch FROM c.now - min(t.at) FILTER (WHERE t.place = 'due' AND t.at <= c.now)) * 1000)::bigint, 0),
		coalesce((SELECT paused FROM pgwheel_queue WHERE namespace = $1), false)
		FROM pgwheel_clock() c LEFT JOIN pgwheel_task t ON t.namespace = $1
		GROUP BY c.now`, s.namespace).Scan(&st.Due, &st.Scheduled, &st.InFlight, &st.Dead,
		&st.Retained, &oldest, &st.Paused)
	if err != nil {
		return nil, fmt.Errorf("pgwheel: stats: %w", err)
	}
	st.OldestDue = time.Duration(oldest) * time.Millisecond
	return []durable.ShardStats{st}, nil
}
