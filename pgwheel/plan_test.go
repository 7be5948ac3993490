package pgwheel

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/require"
)

// TestSettleLooksUpByKey: the settle statements that look up one task by its
// key and token go by the primary key in the generic plan that pgx's
// prepared statements get after their fifth run, with leases already
// settled in the namespace. By the place index they walked every index
// entry of the namespace's leases, dead ones included, per task (see
// placeOnly).
func TestSettleLooksUpByKey(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	var tasks []NewTask
	for i := range 200 {
		tasks = append(tasks, NewTask{Key: "k" + strconv.Itoa(i)})
	}
	_, err := s.add(ctx, tasks...)
	require.NoError(t, err)
	p := hourLease
	p.Limit = 100
	c, err := s.claim(ctx, p)
	require.NoError(t, err)
	var done []settlement
	for _, ct := range c.Tasks {
		done = append(done, settlement{Key: ct.Key, Token: ct.Token, Outcome: durable.OutcomeDone})
	}
	_, err = s.settle(ctx, settleParams{HistoryLen: 10, DeadCap: 100}, done)
	require.NoError(t, err)

	conn, err := sharedPool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	// Statistics of a namespace with tasks in it, as autovacuum takes them
	// under load: on a table never analysed the two indexes cost the same.
	_, err = conn.Exec(ctx, `ANALYZE pgwheel_task`)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`)
	require.NoError(t, err)
	defer conn.Exec(ctx, `RESET plan_cache_mode`) //nolint:errcheck // the connection goes back to the pool
	for name, sql := range map[string]string{"settleForgetSQL": settleForgetSQL, "settleLockSQL": settleLockSQL} {
		_, err = conn.Exec(ctx, `PREPARE plan_test AS `+sql)
		require.NoError(t, err, name)
		var plan []byte
		err = conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE plan_test('`+s.namespace+`', 'k150', 1)`).Scan(&plan)
		require.NoError(t, err, name)
		_, err = conn.Exec(ctx, `DEALLOCATE plan_test`)
		require.NoError(t, err, name)
		require.Equal(t, []string{"pgwheel_task_pkey"}, taskScans(t, plan), "%s: scans of pgwheel_task in %s", name, plan)
	}
}

// taskScans lists how an EXPLAIN (FORMAT JSON) plan reads pgwheel_task: the
// index of each index scan, "Seq Scan" for a sequential one.
func taskScans(t *testing.T, plan []byte) []string {
	t.Helper()
	var root []struct{ Plan planNode }
	require.NoError(t, json.Unmarshal(plan, &root))
	require.Len(t, root, 1)
	var out []string
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.Relation == "pgwheel_task" {
			switch {
			case n.Index != "":
				out = append(out, n.Index)
			case n.NodeType != "ModifyTable":
				out = append(out, n.NodeType)
			}
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(root[0].Plan)
	return out
}

// planNode is the part of an EXPLAIN (FORMAT JSON) node taskScans reads.
type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Plans    []planNode `json:"Plans"`
}

// TestByKeyOnAnEmptiedNamespace: a namespace that many tasks went through
// and that holds none now, analysed (as autoanalyze would after the burst):
// the lookups of one task by its key go by the primary key, custom and
// generic plans alike. On statistics that say the namespace is empty, every
// index starting with the namespace costs "one row", and the planner took
// the place index (namespace, place, at, key), the key a condition inside
// it, so each lookup walked the namespace's dead entries: settles 15–21×
// slower until a vacuum (docs/design/pg-churn.md). The place indexes are
// partial since schema version 5: a statement that does not name a place
// cannot use them.
func TestByKeyOnAnEmptiedNamespace(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	var tasks []NewTask
	for i := range 2000 {
		tasks = append(tasks, NewTask{Key: "k" + strconv.Itoa(i)})
	}
	_, err := s.add(ctx, tasks...)
	require.NoError(t, err)
	p := hourLease
	p.Limit = len(tasks)
	c, err := s.claim(ctx, p)
	require.NoError(t, err)
	require.Len(t, c.Tasks, len(tasks))
	var done []settlement
	for _, ct := range c.Tasks {
		done = append(done, settlement{Key: ct.Key, Token: ct.Token, Outcome: durable.OutcomeDone})
	}
	_, err = s.settle(ctx, settleParams{HistoryLen: 10, DeadCap: 100}, done)
	require.NoError(t, err)

	conn, err := sharedPool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, `ANALYZE pgwheel_task`)
	require.NoError(t, err)
	defer conn.Exec(ctx, `RESET plan_cache_mode`) //nolint:errcheck // the connection goes back to the pool
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		_, err = conn.Exec(ctx, `SET plan_cache_mode = `+mode)
		require.NoError(t, err)
		for name, sql := range map[string]string{"settleForgetSQL": settleForgetSQL, "settleLockSQL": settleLockSQL,
			"a SELECT by key": `SELECT * FROM pgwheel_task WHERE namespace = $1 AND key = $2 AND token = $3`} {
			_, err = conn.Exec(ctx, `PREPARE plan_test AS `+sql)
			require.NoError(t, err, name)
			var plan []byte
			err = conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE plan_test('`+s.namespace+`', 'k150', 1)`).Scan(&plan)
			require.NoError(t, err, name)
			_, err = conn.Exec(ctx, `DEALLOCATE plan_test`)
			require.NoError(t, err, name)
			require.Equal(t, []string{"pgwheel_task_pkey"}, indexesRead(t, plan), "%s, %s: indexes read in %s", name, mode, plan)
		}
	}
}

// indexesRead lists the indexes an EXPLAIN (FORMAT JSON) plan reads, each
// once, and "Seq Scan" for a sequential scan: an index scan and a bitmap
// scan of the primary key are one lookup alike.
func indexesRead(t *testing.T, plan []byte) []string {
	t.Helper()
	var root []struct{ Plan planNode }
	require.NoError(t, json.Unmarshal(plan, &root))
	require.Len(t, root, 1)
	var out []string
	var walk func(n planNode)
	walk = func(n planNode) {
		name := n.Index
		if n.NodeType == "Seq Scan" {
			name = n.NodeType
		}
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(root[0].Plan)
	return out
}
