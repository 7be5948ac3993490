package schedules

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/go-timingwheel/timingwheel/timerd/internal/pgtest"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
)

// testDefinitions is what every Definitions must do: Swap and Delete return
// what they replaced, Get and All read what is there, a namespace sees only
// its own.
func testDefinitions(t *testing.T, defs, other Definitions) {
	ctx := context.Background()
	raw, err := defs.Get(ctx, "a")
	require.NoError(t, err)
	assert.Nil(t, raw, "nothing stored yet")
	all, err := defs.All(ctx)
	require.NoError(t, err)
	assert.Empty(t, all)

	old, err := defs.Swap(ctx, "a", []byte("one"))
	require.NoError(t, err)
	assert.Nil(t, old, "a new name replaces nothing")
	old, err = defs.Swap(ctx, "a", []byte("two"))
	require.NoError(t, err)
	assert.Equal(t, []byte("one"), old)
	_, err = defs.Swap(ctx, "b", []byte("bee"))
	require.NoError(t, err)
	_, err = other.Swap(ctx, "a", []byte("elsewhere"))
	require.NoError(t, err)

	raw, err = defs.Get(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, []byte("two"), raw)
	all, err = defs.All(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string][]byte{"a": []byte("two"), "b": []byte("bee")}, all, "the other namespace's a is not ours")

	old, err = defs.Delete(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, []byte("two"), old)
	old, err = defs.Delete(ctx, "a")
	require.NoError(t, err)
	assert.Nil(t, old, "deleted already")
	raw, err = other.Get(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, []byte("elsewhere"), raw, "a delete keeps to its namespace")
}

func TestRedisDefinitions(t *testing.T) {
	redistest.Each(t, func(t *testing.T, c redis.UniversalClient) {
		testDefinitions(t, RedisDefinitions(c, redistest.Namespace(t, c)), RedisDefinitions(c, redistest.Namespace(t, c)))
	})
}

func TestPostgresDefinitions(t *testing.T) {
	pool := pgtest.Pool(t)
	require.Error(t, CheckPostgres(context.Background(), pool), "no table before migrate")
	require.NoError(t, MigratePostgres(context.Background(), pool))
	require.NoError(t, MigratePostgres(context.Background(), pool), "migrate twice")
	require.NoError(t, CheckPostgres(context.Background(), pool))
	testDefinitions(t, PostgresDefinitions(pool, "ns1"), PostgresDefinitions(pool, "ns2"))
}

func TestSQLiteDefinitions(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "t.db"))
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	defs, err := SQLiteDefinitions(ctx, db, "ns1")
	require.NoError(t, err)
	other, err := SQLiteDefinitions(ctx, db, "ns2")
	require.NoError(t, err, "a second open finds the table")
	testDefinitions(t, defs, other)
}
