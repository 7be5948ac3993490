package pgwheel

import (
	"sync"
	"testing"

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
