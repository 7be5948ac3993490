package pgwheel

import (
	"context"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Stats is durable.Store's Stats: the one partition's counts, from one
// snapshot (one statement). The due tasks (scheduled and retrying: the
// backlog, however large) are counted by the namespace's rows of
// pgwheel_count plus the deltas appended since their last fold (migration
// 4): a few rows. The places the Queue bounds are counted from the index:
// in flight (the workers' Concurrency), dead (MaxDead), retained and
// cancelled among them (MaxRetained). Telling the due tasks that are due
// now from those due later reads the index over the tasks due now (as
// sqlitewheel does), so that part grows with the tasks overdue, not with
// the backlog.
func (s *Store) Stats(ctx context.Context) ([]durable.ShardStats, error) {
	var st durable.ShardStats
	var due, oldest, retrying, cancelled int64
	err := s.pool.QueryRow(ctx, statsSQL, s.namespace).Scan(&due, &retrying, &st.InFlight, &st.Dead,
		&st.Retained, &cancelled, &st.Due, &oldest, &st.Paused)
	if err != nil {
		return nil, unavailable(schemaMissing(fmt.Errorf("pgwheel: stats: %w", err)))
	}
	st.Scheduled = due - st.Due
	st.OldestDue = time.Duration(oldest) * time.Millisecond
	st.States = durable.StateCounts{
		Scheduled: due - retrying, Retrying: retrying, InFlight: st.InFlight,
		Dead: st.Dead, Done: st.Retained - cancelled, Cancelled: cancelled,
	}
	return []durable.ShardStats{st}, nil
}

// statsSQL reads, for namespace $1: the counts of kinds due and retrying,
// of places lease, dead and kept and of the cancelled tasks, then the tasks
// due now and how long the oldest has waited (ms), then the pause flag. The
// due-now count compares with now() (the statement's start: Stats is a
// transaction of its own, so it is the clock's reading to the microsecond),
// a stable function the planner reads when it estimates, so that the index
// range is its plan whatever the statistics: joined to the clock's row, on
// statistics of a nearly empty namespace, the planner scanned the whole
// place and filtered by the clock (700 pages for 20,000 scheduled tasks);
// compared with a scalar subquery of it, unknown when planning, it guessed
// a third of the namespace due and scanned the table (1M scheduled: 17,000
// pages, 107 ms, against 49 pages, 0.6 ms). If the kinds change, adjust
// migrations/0004_counts.sql.
const statsSQL = `WITH c AS MATERIALIZED (SELECT now FROM pgwheel_clock()),
	k AS MATERIALIZED (SELECT kind, sum(n)::bigint AS n FROM (
		SELECT kind, n FROM pgwheel_count WHERE namespace = $1
		UNION ALL
		SELECT kind, n FROM pgwheel_count_delta WHERE namespace = $1) u
		GROUP BY kind),
	d AS MATERIALIZED (SELECT count(*) AS n, min(at) AS oldest FROM pgwheel_task
		WHERE namespace = $1 AND place = 'due' AND at <= date_trunc('milliseconds', now()))
	SELECT
		coalesce((SELECT n FROM k WHERE kind = 'due'), 0),
		coalesce((SELECT n FROM k WHERE kind = 'retrying'), 0),
		(SELECT count(*) FROM pgwheel_task WHERE namespace = $1 AND place = 'lease'),
		(SELECT count(*) FROM pgwheel_task WHERE namespace = $1 AND place = 'dead'),
		(SELECT count(*) FROM pgwheel_task WHERE namespace = $1 AND place = 'kept'),
		(SELECT count(*) FROM pgwheel_result WHERE namespace = $1 AND state = 'cancelled'),
		d.n,
		coalesce((extract(epoch FROM c.now - d.oldest) * 1000)::bigint, 0),
		coalesce((SELECT paused FROM pgwheel_queue WHERE namespace = $1), false)
	FROM c, d`
