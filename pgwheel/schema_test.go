package pgwheel

import (
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/require"
)

// TestUnmigratedDatabaseSaysMigrate: on a database Migrate never ran on,
// every operation fails with ErrSchemaTooOld, whose text says what to run,
// not with the server's "function pgwheel_clock() does not exist"; Claim's
// error also stops Run (durable.ErrUnrecoverable).
func TestUnmigratedDatabaseSaysMigrate(t *testing.T) {
	needDB(t)
	ctx := testCtx(t)
	schema := "pgwheel_bare_" + randomHex(6)
	_, err := sharedPool.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() { sharedPool.Exec(testCtx(t), "DROP SCHEMA "+schema+" CASCADE") }) //nolint:errcheck
	pool, err := poolIn(ctx, schema, 4, "")
	require.NoError(t, err)
	defer pool.Close()
	s, err := New(pool, "bare")
	require.NoError(t, err)
	q, err := durable.New(s, durable.Options{})
	require.NoError(t, err)

	says := func(op string, err error) {
		t.Helper()
		require.ErrorIs(t, err, ErrSchemaTooOld, op)
		require.ErrorContains(t, err, "pgwheel.Migrate", op)
		require.ErrorContains(t, err, "timerd migrate", op)
	}
	_, err = q.AddAfter(ctx, "k", nil, time.Minute)
	says("Add", err)
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	_, err = s.AddTx(ctx, tx, NewTask{Key: "k"})
	says("AddTx", err)
	require.NoError(t, tx.Rollback(ctx))
	_, err = q.Cancel(ctx, "k")
	says("Cancel", err)
	_, err = q.Get(ctx, "k")
	says("Get", err)
	_, err = q.Stats(ctx)
	says("Stats", err)
	_, _, err = q.List(ctx, durable.StateScheduled, "", 10)
	says("List", err)
	_, err = s.Claim(ctx, 0, 1, time.Minute, durable.Limits{MaxAttempts: 1})
	says("Claim", err)
	require.ErrorIs(t, err, durable.ErrUnrecoverable)
}
