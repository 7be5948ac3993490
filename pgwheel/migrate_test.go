package pgwheel

import (
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestMigrationFilesAreNumberedFromOne(t *testing.T) {
	ms := allMigrations()
	require.NotEmpty(t, ms)
	require.Equal(t, len(ms), SchemaVersion)
	for i, m := range ms {
		require.Equal(t, i+1, m.version, m.name)
	}
}

// TestMigrate: a fresh database is refused by CheckSchema until Migrate,
// which creates every table; a re-run (also two at once) changes nothing;
// a database newer than the code is refused and left alone.
func TestMigrate(t *testing.T) {
	needDB(t)
	ctx := testCtx(t)
	schema := "pgwheel_mig_" + randomHex(6)
	_, err := sharedPool.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() { sharedPool.Exec(testCtx(t), "DROP SCHEMA "+schema+" CASCADE") }) //nolint:errcheck
	pool, err := poolIn(ctx, schema, 4, "")
	require.NoError(t, err)
	defer pool.Close()

	v, err := DatabaseSchemaVersion(ctx, pool)
	require.NoError(t, err)
	require.Equal(t, 0, v)
	require.ErrorIs(t, CheckSchema(ctx, pool), ErrSchemaTooOld)

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = Migrate(ctx, pool) }()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.NoError(t, CheckSchema(ctx, pool))

	tables := func() []string {
		rows, err := pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1`, schema)
		require.NoError(t, err)
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return names
	}
	want := []string{"pgwheel_count", "pgwheel_count_delta", "pgwheel_delivery", "pgwheel_periodic", "pgwheel_queue", "pgwheel_result", "pgwheel_schema", "pgwheel_task"}
	require.Equal(t, want, tables())
	var rows int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pgwheel_schema`).Scan(&rows))
	require.Equal(t, SchemaVersion, rows)

	require.NoError(t, Migrate(ctx, pool), "re-run")
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pgwheel_schema`).Scan(&rows))
	require.Equal(t, SchemaVersion, rows, "a re-run applied something")

	// A newer pgwheel migrated this database: this code must not touch it.
	_, err = pool.Exec(ctx, `INSERT INTO pgwheel_schema (version) VALUES ($1)`, SchemaVersion+1)
	require.NoError(t, err)
	require.ErrorIs(t, Migrate(ctx, pool), ErrSchemaTooNew)
	require.ErrorIs(t, CheckSchema(ctx, pool), ErrSchemaTooNew)
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pgwheel_schema`).Scan(&rows))
	require.Equal(t, SchemaVersion+1, rows)
	require.Equal(t, want, tables())
}

// TestMigrateFromVersion4: a database at version 4 (one place index) with
// tasks in every place migrates to the partial place indexes of version 5,
// and its tasks are where they were: claimable, listed, settled.
func TestMigrateFromVersion4(t *testing.T) {
	needDB(t)
	ctx := testCtx(t)
	schema := "pgwheel_mig4_" + randomHex(6)
	_, err := sharedPool.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() { sharedPool.Exec(testCtx(t), "DROP SCHEMA "+schema+" CASCADE") }) //nolint:errcheck
	pool, err := poolIn(ctx, schema, 4, "")
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, migrateTo(ctx, pool, 4))
	s, err := New(pool, "v4")
	require.NoError(t, err)

	// Written by version 4's statements, which the current ones are where
	// they look tasks up by key.
	_, err = s.add(ctx, NewTask{Key: "a"}, NewTask{Key: "b"}, NewTask{Key: "c"},
		NewTask{Key: "later", At: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	p := hourLease
	p.Limit = 2
	c, err := s.claim(ctx, p)
	require.NoError(t, err)
	require.Len(t, c.Tasks, 2)
	left := map[string]bool{"a": true, "b": true, "c": true}
	delete(left, c.Tasks[0].Key)
	delete(left, c.Tasks[1].Key)
	var due string
	for k := range left {
		due = k
	}
	_, err = s.settle(ctx, settleParams{HistoryLen: 10, DeadCap: 100}, []settlement{
		{Key: c.Tasks[0].Key, Token: c.Tasks[0].Token, Outcome: durable.OutcomeDead, Error: "boom"}})
	require.NoError(t, err)
	require.NoError(t, Migrate(ctx, pool))
	require.NoError(t, CheckSchema(ctx, pool))

	rows, err := pool.Query(ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'pgwheel_task' ORDER BY 1`, schema)
	require.NoError(t, err)
	indexes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"pgwheel_task_dead", "pgwheel_task_due", "pgwheel_task_kept", "pgwheel_task_lease", "pgwheel_task_pkey"}, indexes)

	for state, want := range map[durable.State][]string{
		durable.StateScheduled: {due, "later"}, durable.StateInFlight: {c.Tasks[1].Key}, durable.StateDead: {c.Tasks[0].Key},
	} {
		infos, _, err := s.List(ctx, state, nil, 10)
		require.NoError(t, err)
		var keys []string
		for _, in := range infos {
			keys = append(keys, in.Key)
		}
		require.ElementsMatch(t, want, keys, state)
	}
	c2, err := s.claim(ctx, p)
	require.NoError(t, err)
	require.Len(t, c2.Tasks, 1)
	require.Equal(t, due, c2.Tasks[0].Key)
	st, err := s.settle(ctx, settleParams{HistoryLen: 10, DeadCap: 100}, []settlement{
		{Key: c.Tasks[1].Key, Token: c.Tasks[1].Token, Outcome: durable.OutcomeDone},
		{Key: due, Token: c2.Tasks[0].Token, Outcome: durable.OutcomeDone}})
	require.NoError(t, err)
	require.Equal(t, []durable.SettleCode{durable.SettleDone, durable.SettleDone}, st.Codes)
}
