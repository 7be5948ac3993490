package pgwheel

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNextDueIgnoresStatistics: a claim's search for the next due time
// reads a few pages of a namespace of 20,000 scheduled tasks on statistics
// taken before the namespace existed (a bulk load into a new namespace,
// before autoanalyze comes), in the custom plan and in the generic one pgx's
// prepared statement gets after five runs. As min(at) it was planned as an
// aggregate over the namespace's whole due range (20,000 entries: a claim of
// 143 ms after a backlog of 500,000, bench/sqlbench's churn).
func TestNextDueIgnoresStatistics(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	_, err := sharedPool.Exec(ctx, `ANALYZE pgwheel_task`)
	require.NoError(t, err)
	var tasks []NewTask
	for i := range 20_000 {
		tasks = append(tasks, NewTask{Key: "k" + strconv.Itoa(i), After: time.Hour})
	}
	_, err = s.add(ctx, tasks...)
	require.NoError(t, err)

	custom := planBuffers(t, sharedPool, nextDueSQL, s.namespace, false)
	conn, err := sharedPool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`)
	require.NoError(t, err)
	defer conn.Exec(ctx, `RESET plan_cache_mode`) //nolint:errcheck
	generic := planBuffers(t, conn, nextDueSQL, s.namespace, false)
	t.Logf("next due: %d buffers (custom plan), %d (generic)", custom, generic)
	require.Less(t, custom, int64(32))
	require.Less(t, generic, int64(32))
}
