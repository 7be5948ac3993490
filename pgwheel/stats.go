package pgwheel

import (
	"context"
	"fmt"
	"time"
)

// Stats are a namespace's figures, from one snapshot.
type Stats struct {
	Now       time.Time     // the database clock
	DueNow    int           // scheduled or retrying and due
	Later     int           // scheduled or retrying, not due yet
	InFlight  int           // leased
	Dead      int           // dead
	Retained  int           // finished and retained
	OldestDue time.Duration // how late the oldest due task is; 0 when none is due
	Paused    bool
}

// Stats counts the namespace's tasks by state. It reads the namespace's
// part of the index pgwheel_task_place_at: its cost grows with the number
// of tasks, unlike every other operation's.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	var oldest int64
	err := s.pool.QueryRow(ctx, `SELECT c.now,
		count(*) FILTER (WHERE t.place = 'due' AND t.at <= c.now),
		count(*) FILTER (WHERE t.place = 'due' AND t.at > c.now),
		count(*) FILTER (WHERE t.place = 'lease'),
		count(*) FILTER (WHERE t.place = 'dead'),
		count(*) FILTER (WHERE t.place = 'kept'),
		coalesce((extract(epoch FROM c.now - min(t.at) FILTER (WHERE t.place = 'due' AND t.at <= c.now)) * 1000)::bigint, 0),
		coalesce((SELECT paused FROM pgwheel_queue WHERE namespace = $1), false)
		FROM pgwheel_clock() c LEFT JOIN pgwheel_task t ON t.namespace = $1
		GROUP BY c.now`, s.namespace).Scan(&st.Now, &st.DueNow, &st.Later, &st.InFlight, &st.Dead,
		&st.Retained, &oldest, &st.Paused)
	if err != nil {
		return Stats{}, fmt.Errorf("pgwheel: stats: %w", err)
	}
	st.Now = st.Now.UTC()
	st.OldestDue = time.Duration(oldest) * time.Millisecond
	return st, nil
}
