package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/pgwheel"
	"github.com/go-timingwheel/timingwheel/sqlitewheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/pgtest"
)

// The tests run the timerd binary, built once by TestMain, on a SQLite file
// of their own and against the servers of scripts/redis.sh's .redis/env and
// scripts/postgres.sh's .postgres/env:
//
//	REDISWHEEL_ADDR          host:port of a standalone server
//	REDISWHEEL_CLUSTER_ADDRS comma-separated host:port of a cluster's masters
//	PGWHEEL_DSN              a PostgreSQL database's URL
//
// A test whose server is missing is skipped, unless TIMERD_REQUIRE=1 (or
// REDISWHEEL_REQUIRE=1; PGWHEEL_REQUIRE=1 for PostgreSQL), when it fails. Each test works in a namespace of
// its own and deletes it afterwards. Every process a test starts is killed
// by pid when the test ends.
var timerdBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "timerd-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	timerdBin = filepath.Join(dir, "timerd")
	build := exec.Command("go", "build", "-o", timerdBin, "../cmd/timerd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: go build:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	// goleak.Find rather than VerifyTestMain, which exits before the
	// binary's directory could be removed. go-redis keeps one goroutine
	// probing a failed address for a while, even past Close (see
	// rediswheel's main_test.go).
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func envOrSkip(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("TIMERD_REQUIRE") == "1" || os.Getenv("REDISWHEEL_REQUIRE") == "1" {
			t.Fatalf("%s is unset and TIMERD_REQUIRE=1", name)
		}
		t.Skipf("%s is unset: no Redis server for this test (scripts/redis.sh up && . .redis/env)", name)
	}
	return v
}

// target is one store the processes of a test share, and how the test
// reaches it.
type target struct {
	name string
	// flags point timerd at the store.
	flags []string
	// open opens the test's own Store on it, for namespace ns; close
	// releases it and deletes the namespace's tasks.
	open func(t *testing.T, ns string) (st durable.Store, close func())
}

func standalone(t *testing.T) target {
	addr := envOrSkip(t, "REDISWHEEL_ADDR")
	return redisTarget("redis", "redis://"+addr+"/0", false, []string{addr})
}

func cluster(t *testing.T) target {
	addrs := strings.Split(envOrSkip(t, "REDISWHEEL_CLUSTER_ADDRS"), ",")
	u := "redis://" + addrs[0]
	for i, a := range addrs[1:] {
		if i == 0 {
			u += "?addr=" + a
		} else {
			u += "&addr=" + a
		}
	}
	return redisTarget("cluster", u, true, addrs)
}

// sqliteFile is a SQLite store in a file of the test's own: for one
// process at a time.
func sqliteFile(t *testing.T) target {
	path := filepath.Join(t.TempDir(), "timerd.db")
	return target{name: "sqlite", flags: []string{"-store", "sqlite:" + path},
		open: func(t *testing.T, ns string) (durable.Store, func()) {
			st, err := sqlitewheel.Open(context.Background(), path, sqlitewheel.Options{Namespace: ns})
			if err != nil {
				t.Fatal(err)
			}
			return st, func() { st.Close() }
		}}
}

// postgres is a fresh schema on the PostgreSQL server, migrated by the
// timerd binary's own `timerd migrate` (which a server never does itself).
func postgres(t *testing.T) target {
	if os.Getenv("PGWHEEL_DSN") == "" && os.Getenv("TIMERD_REQUIRE") == "1" {
		t.Fatal("PGWHEEL_DSN is unset and TIMERD_REQUIRE=1")
	}
	url := pgtest.Schema(t)
	flags := []string{"-store", url}
	if code, out := run(t, environ(), append([]string{"migrate"}, flags...)...); code != 0 {
		t.Fatalf("timerd migrate: exit %d: %s", code, out)
	}
	return target{name: "postgres", flags: flags, open: func(t *testing.T, ns string) (durable.Store, func()) {
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		st, err := pgwheel.New(pool, ns)
		if err != nil {
			pool.Close()
			t.Fatal(err)
		}
		return st, pool.Close
	}}
}
