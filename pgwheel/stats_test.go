package pgwheel

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// statsBuffers runs Stats' statement under EXPLAIN ANALYZE and returns the
// shared buffers it touched (hit or read): the pages it read, whatever the
// machine's speed.
func statsBuffers(t *testing.T, s *Store) int64 {
	t.Helper()
	var plan []byte
	require.NoError(t, sharedPool.QueryRow(testCtx(t), `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+statsSQL,
		s.namespace).Scan(&plan))
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
// grows): it reads the namespace's counts, not its tasks. Before the
// counts of migration 4, it read the namespace's part of the index.
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
	t.Logf("Stats' buffers: %d with 100 tasks, %d with 20,100", small, large)
	require.LessOrEqual(t, large, small+16)
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 20_100, st[0].Scheduled)
}
