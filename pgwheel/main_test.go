package pgwheel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The tests run against the PostgreSQL named by PGWHEEL_DSN (scripts/postgres.sh
// writes it to .postgres/env) and skip without it, unless PGWHEEL_REQUIRE=1
// makes a missing server a failure (make test sets it). Each run works in
// a schema of its own, migrated here and dropped at the end, so runs do not
// see each other's tables.

// patience bounds every wait: generous for a loaded 2-core machine, and a
// failure with a message rather than a hang.
const patience = 30 * time.Second

var (
	dsn        = os.Getenv("PGWHEEL_DSN")
	testSchema string
	sharedPool *pgxpool.Pool
)

func TestMain(m *testing.M) {
	if dsn == "" && os.Getenv("PGWHEEL_REQUIRE") == "1" {
		fmt.Fprintln(os.Stderr, "PGWHEEL_REQUIRE=1 but PGWHEEL_DSN is not set: run scripts/postgres.sh up and . .postgres/env")
		os.Exit(1)
	}
	code := func() int {
		if schema := os.Getenv(victimSchemaEnv); schema != "" {
			// A child process of TestWorkerKilledMidBatch: it works in its
			// parent's schema, and is killed, so it leaves nothing to drop.
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			testSchema = schema
			var err error
			if sharedPool, err = poolIn(ctx, schema, 8, victimApp); err != nil {
				fmt.Fprintln(os.Stderr, "pgwheel victim:", err)
				return 1
			}
			return m.Run()
		}
		if dsn != "" {
			cleanup, err := setupSchema()
			if err != nil {
				fmt.Fprintln(os.Stderr, "pgwheel tests:", err)
				return 1
			}
			defer cleanup()
		}
		return m.Run()
	}()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// setupSchema creates this run's schema and migrates it.
func setupSchema() (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	testSchema = "pgwheel_test_" + randomHex(6)
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+testSchema); err != nil {
		return nil, err
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			c.Exec(ctx, "DROP SCHEMA "+testSchema+" CASCADE") //nolint:errcheck // best effort
			c.Close(ctx)
		}
	}
	if sharedPool, err = poolIn(ctx, testSchema, 8, ""); err != nil {
		drop()
		return nil, err
	}
	if err := Migrate(ctx, sharedPool); err != nil {
		sharedPool.Close()
		drop()
		return nil, err
	}
	return func() { sharedPool.Close(); drop() }, nil
}

// poolIn opens a pool whose connections resolve pgwheel's tables in schema,
// named app in pg_stat_activity when app is not "".
func poolIn(ctx context.Context, schema string, size int32, app string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	if app != "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = app
	}
	cfg.MaxConns = size
	return pgxpool.NewWithConfig(ctx, cfg)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// needDB skips the test without a server (PGWHEEL_REQUIRE=1 failed TestMain already).
func needDB(t testing.TB) {
	t.Helper()
	if dsn == "" {
		t.Skip("PGWHEEL_DSN not set (scripts/postgres.sh up; . .postgres/env)")
	}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 4*patience)
	t.Cleanup(cancel)
	return ctx
}

// newStore returns a Store on a fresh namespace of the run's schema.
func newStore(t testing.TB) *Store {
	t.Helper()
	needDB(t)
	s, err := New(sharedPool, t.Name()+"/"+randomHex(4))
	require.NoError(t, err)
	return s
}

// dbClock reads the database clock at full resolution (µs).
func dbClock(t testing.TB) time.Time {
	t.Helper()
	var now time.Time
	require.NoError(t, sharedPool.QueryRow(testCtx(t), `SELECT clock_timestamp()`).Scan(&now))
	return now.UTC()
}

// waitDBClockPast waits until the database clock is after at.
func waitDBClockPast(t testing.TB, at time.Time) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !dbClock(t).After(at) {
		if time.Now().After(deadline) {
			t.Fatalf("the database clock did not pass %v within %v", at, patience)
		}
		time.Sleep(time.Millisecond)
	}
}
