package pgwheel

import (
	"context"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Stats is durable.Store's Stats: the one partition's counts, from one
// snapshot (one statement). It counts the namespace's tasks by place,
// reading the namespace's part of the index pgwheel_task_place_at: its cost
// grows with the number of tasks, unlike every other operation's. The counts
// per state split place 'due' and place 'kept' with the partial indexes
// pgwheel_task_retrying and pgwheel_result_cancelled (migration 2), which
// hold only the retrying and the cancelled tasks; their predicates are
// repeated here word for word, so the planner can use them.
func (s *Store) Stats(ctx context.Context) ([]durable.ShardStats, error) {
	var st durable.ShardStats
	var oldest, retrying, cancelled int64
	err := s.pool.QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE t.place = 'due' AND t.at <= c.now),
		count(*) FILTER (WHERE t.place = 'due' AND t.at > c.now),
		count(*) FILTER (WHERE t.place = 'lease'),
		count(*) FILTER (WHERE t.place = 'dead'),
		count(*) FILTER (WHERE t.place = 'kept'),
		coalesce((extract(epoch FROM c.now - min(t.at) FILTER (WHERE t.place = 'due' AND t.at <= c.now)) * 1000)::bigint, 0),
		coalesce((SELECT paused FROM pgwheel_queue WHERE namespace = $1), false),
		(SELECT count(*) FROM pgwheel_task WHERE namespace = $1
			AND place = 'due' AND (attempts > 0 OR last_error <> '')),
		(SELECT count(*) FROM pgwheel_result WHERE namespace = $1
			AND state = 'cancelled')
		FROM pgwheel_clock() c LEFT JOIN pgwheel_task t ON t.namespace = $1
		GROUP BY c.now`, s.namespace).Scan(&st.Due, &st.Scheduled, &st.InFlight, &st.Dead,
		&st.Retained, &oldest, &st.Paused, &retrying, &cancelled)
	if err != nil {
		return nil, unavailable(fmt.Errorf("pgwheel: stats: %w", err))
	}
	st.OldestDue = time.Duration(oldest) * time.Millisecond
	st.States = durable.StateCounts{
		Scheduled: st.Due + st.Scheduled - retrying, Retrying: retrying, InFlight: st.InFlight,
		Dead: st.Dead, Done: st.Retained - cancelled, Cancelled: cancelled,
	}
	return []durable.ShardStats{st}, nil
}
