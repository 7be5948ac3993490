// Package pgtest finds the PostgreSQL server of timerd's tests and gives
// each test a schema of its own on it.
//
// The server is PGWHEEL_DSN's (scripts/postgres.sh writes it to
// .postgres/env). A test without it is skipped, unless PGWHEEL_REQUIRE=1
// (make test sets it), when it fails.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DSN is the server's URL, or skips (fails, with PGWHEEL_REQUIRE=1) t.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("PGWHEEL_DSN")
	if dsn == "" {
		if os.Getenv("PGWHEEL_REQUIRE") == "1" {
			t.Fatal("PGWHEEL_DSN is unset and PGWHEEL_REQUIRE=1: run scripts/postgres.sh up and . .postgres/env")
		}
		t.Skip("PGWHEEL_DSN is unset: no PostgreSQL for this test (scripts/postgres.sh up && . .postgres/env)")
	}
	return dsn
}

// Schema creates a fresh schema, dropped when t ends, and returns a URL
// whose connections use it (search_path), so that the test's tables are its
// own.
func Schema(t testing.TB) string {
	t.Helper()
	dsn := DSN(t)
	var b [4]byte
	rand.Read(b[:])
	schema := "timerd_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	return withSearchPath(dsn, schema)
}

// Pool is a pool on a fresh Schema, closed when t ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), Schema(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// withSearchPath adds search_path=schema to a URL's query.
func withSearchPath(dsn, schema string) string {
	sep := "?"
	for i := 0; i < len(dsn); i++ {
		if dsn[i] == '?' {
			sep = "&"
		}
	}
	return dsn + sep + "search_path=" + schema
}
