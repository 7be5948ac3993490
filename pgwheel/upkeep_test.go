package pgwheel

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestRunVacuumsAfterABurst: when a Run has pushed a burst through its
// namespace and drained it, the claims' scan of the due range reads about
// as many pages as before the burst, without waiting for autovacuum: the
// upkeep vacuumed the burst's dead entries. Without it the scan read one
// page per hundred tasks of the burst until a vacuum: 36 pages for this
// burst, against 1 before and 4–7 after the upkeep's.
func TestRunVacuumsAfterABurst(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	defer func(n int64) { vacuumAfter = n }(vacuumAfter)
	const burst = 3000
	vacuumAfter = burst / 2
	// Autovacuum off for the table, so that only the upkeep vacuums it.
	_, err := sharedPool.Exec(ctx, `ALTER TABLE pgwheel_task SET (autovacuum_enabled = false)`)
	require.NoError(t, err)
	defer sharedPool.Exec(context.WithoutCancel(ctx), `ALTER TABLE pgwheel_task RESET (autovacuum_enabled)`) //nolint:errcheck // the schema goes at the end
	_, err = s.add(ctx, NewTask{Key: "later", At: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	before := dueScanPages(ctx, t, s)
	vacuums := manualVacuums(ctx, t)

	var tasks []NewTask
	for i := range burst {
		tasks = append(tasks, NewTask{Key: "burst-" + strconv.Itoa(i)})
	}
	for lo := 0; lo < burst; lo += 500 {
		_, err := s.add(ctx, tasks[lo:lo+500]...)
		require.NoError(t, err)
	}
	q, err := durable.New(s, durable.Options{})
	require.NoError(t, err)
	var ran atomic.Int64
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- q.Run(runCtx, func(context.Context, durable.Task) error { ran.Add(1); return nil })
	}()
	defer func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Error(err)
		}
	}()
	deadline := time.Now().Add(patience)
	start := time.Now()
	for {
		pages := dueScanPages(ctx, t, s)
		if testing.Verbose() {
			t.Logf("%v: %d ran, %d pages", time.Since(start).Round(time.Millisecond), ran.Load(), pages)
		}
		vacuumed := manualVacuums(ctx, t) > vacuums
		if ran.Load() == burst && vacuumed && pages <= before+burst/300 {
			t.Logf("due scan: %d pages before the burst of %d, %d after it", before, burst, pages)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d tasks ran; vacuumed: %v; the due scan reads %d pages %v after the start, %d before the burst",
				ran.Load(), burst, vacuumed, pages, patience, before)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// manualVacuums is how many times pgwheel_task of the run's schema was
// vacuumed other than by autovacuum.
func manualVacuums(ctx context.Context, t *testing.T) int64 {
	t.Helper()
	var n int64
	require.NoError(t, sharedPool.QueryRow(ctx, `SELECT vacuum_count FROM pg_stat_user_tables
		WHERE relid = 'pgwheel_task'::regclass`).Scan(&n))
	return n
}

// dueScanPages is the pages (shared buffers) the claim's scan of s's due
// range reads: claim.go's lease, without its locks, on its index (with
// autovacuum off the statistics are whatever the tests before left, and
// a scan of the table would measure the table).
func dueScanPages(ctx context.Context, t *testing.T, s *Store) int64 {
	t.Helper()
	var plan []byte
	err := pgx.BeginFunc(ctx, sharedPool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off`); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
			SELECT key FROM pgwheel_task WHERE namespace = $1 AND place = 'due' AND at <= now()
			ORDER BY at, key LIMIT 32`, s.namespace).Scan(&plan)
	})
	require.NoError(t, err)
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
