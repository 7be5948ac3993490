package pgwheel

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/require"
)

// statsBuffers runs Stats' statement under EXPLAIN ANALYZE and returns the
// shared buffers it touched (hit or read): the pages it read, whatever the
// machine's speed.
func statsBuffers(t *testing.T, s *Store) int64 {
	t.Helper()
	return planBuffers(t, sharedPool, statsSQL, s.namespace)
}

// planBuffers runs statement sql with args on q under EXPLAIN ANALYZE and
// returns the shared buffers it touched.
func planBuffers(t *testing.T, q Querier, sql string, args ...any) int64 {
	t.Helper()
	var plan []byte
	require.NoError(t, q.QueryRow(testCtx(t), `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+sql, args...).Scan(&plan))
	var p []struct {
		Plan struct {
			Hit  int64 `json:"Shared Hit Blocks"`
			Read int64 `json:"Shared Read Blocks"`
		}
	}
	require.NoError(t, json.Unmarshal(plan, &p))
	require.Len(t, p, 1)
	return p[0].Plan.Hit + p[0].Plan.Read
}

// TestStatsReadsBoundedPages: Stats reads as many pages with 20,000 tasks
// scheduled as with 100 (give or take the index levels a larger table
// grows), before and after ANALYZE: it reads the namespace's counts, not
// its tasks. Before the counts of migration 4, it read the namespace's part
// of the index.
func TestStatsReadsBoundedPages(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	add := func(from, to int) {
		t.Helper()
		var tasks []NewTask
		for i := from; i < to; i++ {
			tasks = append(tasks, NewTask{Key: "k" + strconv.Itoa(i), After: time.Hour})
		}
		_, err := s.add(ctx, tasks...)
		require.NoError(t, err)
	}
	add(0, 100)
	small := statsBuffers(t, s)
	add(100, 20_100)
	large := statsBuffers(t, s)
	// And on statistics that know the namespace: a plan that guesses the
	// share due now from them must not scan the table.
	_, err := sharedPool.Exec(ctx, `ANALYZE pgwheel_task`)
	require.NoError(t, err)
	analysed := statsBuffers(t, s)
	t.Logf("Stats' buffers: %d with 100 tasks, %d with 20,100, %d once analysed", small, large, analysed)
	require.LessOrEqual(t, large, small+16)
	require.LessOrEqual(t, analysed, small+16)
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 20_100, st[0].Scheduled)
}

// TestCountsExactUnderConcurrency: after writers running at once (adds,
// claims, settles of every outcome, with and without retention, cancels,
// each writer its own transactions, the triggers' folds among them), Stats
// counts what the table holds, place by place and state by state.
func TestCountsExactUnderConcurrency(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	const writers, rounds = 4, 40
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			errs <- func() error {
				for i := range rounds {
					var tasks []NewTask
					for j := range 8 {
						tasks = append(tasks, NewTask{Key: fmt.Sprintf("w%d-%d-%d", w, i, j)})
					}
					tasks = append(tasks, NewTask{Key: fmt.Sprintf("w%d-%d-later", w, i), After: time.Hour})
					if _, err := s.add(ctx, tasks...); err != nil {
						return err
					}
					p := hourLease
					p.Limit = 6
					c, err := s.claim(ctx, p)
					if err != nil {
						return err
					}
					var ss []settlement
					outcomes := []durable.OutcomeKind{durable.OutcomeDone, durable.OutcomeRetry, durable.OutcomeDead,
						durable.OutcomeRelease, durable.OutcomeDone}
					for k, ct := range c.Tasks {
						if k == len(outcomes) {
							break // one stays in flight
						}
						ss = append(ss, settlement{Key: ct.Key, Token: ct.Token, Outcome: outcomes[k], Delay: time.Hour})
					}
					retention := time.Duration(0)
					if i%2 == 0 {
						retention = time.Hour
					}
					if _, err := s.settle(ctx, settleParams{HistoryLen: 2, DeadCap: 1000,
						Retention: retention, MaxRetained: 1000}, ss); err != nil {
						return err
					}
					if _, _, err := s.cancel(ctx, fmt.Sprintf("w%d-%d-7", w, i), retention, 1000); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	for range writers {
		require.NoError(t, <-errs)
	}
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	var want durable.ShardStats
	rows, err := sharedPool.Query(ctx, `SELECT t.place, t.at <= now(),
		t.place = 'due' AND (t.attempts > 0 OR t.last_error <> ''), coalesce(r.state = 'cancelled', false), count(*)
		FROM pgwheel_task t LEFT JOIN pgwheel_result r USING (namespace, key)
		WHERE t.namespace = $1 GROUP BY 1, 2, 3, 4`, s.namespace)
	require.NoError(t, err)
	for rows.Next() {
		var place string
		var now, retrying, cancelled bool
		var n int64
		require.NoError(t, rows.Scan(&place, &now, &retrying, &cancelled, &n))
		switch {
		case place == "due" && now:
			want.Due += n
		case place == "due":
			want.Scheduled += n
		case place == "lease":
			want.InFlight += n
		case place == "dead":
			want.Dead += n
		case place == "kept":
			want.Retained += n
		}
		switch {
		case retrying:
			want.States.Retrying += n
		case place == "due":
			want.States.Scheduled += n
		case place == "kept" && cancelled:
			want.States.Cancelled += n
		case place == "kept":
			want.States.Done += n
		}
	}
	require.NoError(t, rows.Err())
	want.States.InFlight, want.States.Dead = want.InFlight, want.Dead
	got := st[0]
	got.OldestDue = 0
	require.Equal(t, want, got)
	require.Positive(t, want.States.Retrying+want.States.Cancelled+want.States.Done+want.Dead, "the writers made every state")
	var folded int
	require.NoError(t, sharedPool.QueryRow(ctx, `SELECT count(*) FROM pgwheel_count WHERE namespace = $1`,
		s.namespace).Scan(&folded))
	require.Positive(t, folded, "no fold ran (one in 32 statements of some 700)")
}
