package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// The tests run the timerd binary, built once by TestMain, against the
// Redis servers of scripts/redis.sh's .redis/env:
//
//	REDISWHEEL_ADDR          host:port of a standalone server
//	REDISWHEEL_CLUSTER_ADDRS comma-separated host:port of a cluster's masters
//
// A test whose server is missing is skipped, unless TIMERD_REQUIRE=1 (or
// REDISWHEEL_REQUIRE=1), when it fails. Each test works in a namespace of
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

// redisTarget is how the processes and the test reach one Redis.
type redisTarget struct {
	url     string // -redis-url
	cluster bool   // -redis-cluster
	addrs   []string
}

func standalone(t *testing.T) redisTarget {
	addr := envOrSkip(t, "REDISWHEEL_ADDR")
	return redisTarget{url: "redis://" + addr + "/0", addrs: []string{addr}}
}

func cluster(t *testing.T) redisTarget {
	addrs := strings.Split(envOrSkip(t, "REDISWHEEL_CLUSTER_ADDRS"), ",")
	u := "redis://" + addrs[0]
	for i, a := range addrs[1:] {
		if i == 0 {
			u += "?addr=" + a
		} else {
			u += "&addr=" + a
		}
	}
	return redisTarget{url: u, cluster: true, addrs: addrs}
}
