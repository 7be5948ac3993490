// Package redistest finds the Redis servers timerd's tests run against and
// gives each test a namespace of its own. The servers are the ones
// rediswheel's tests use (scripts/redis.sh writes them to .redis/env):
//
//	REDISWHEEL_ADDR          host:port of a standalone server
//	REDISWHEEL_CLUSTER_ADDRS comma-separated host:port of a cluster's masters
//
// A test whose server is missing is skipped, unless TIMERD_REQUIRE=1 (or
// REDISWHEEL_REQUIRE=1), when it fails. It is imported by tests only.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// IgnoreTryDial is the goleak option every package that dials Redis needs:
// after a failed dial go-redis keeps a goroutine probing the address, even
// past Close (rediswheel's TestMain says the same).
var IgnoreTryDial = goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial")

// Servers returns a client of each configured server kind ("standalone",
// "cluster"), closed when t ends.
func Servers(t testing.TB) map[string]redis.UniversalClient {
	t.Helper()
	out := map[string]redis.UniversalClient{}
	if addr := os.Getenv("REDISWHEEL_ADDR"); addr != "" {
		c := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { c.Close() })
		out["standalone"] = c
	}
	if addrs := os.Getenv("REDISWHEEL_CLUSTER_ADDRS"); addrs != "" {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ",")})
		t.Cleanup(func() { c.Close() })
		out["cluster"] = c
	}
	if len(out) < 2 && (os.Getenv("TIMERD_REQUIRE") == "1" || os.Getenv("REDISWHEEL_REQUIRE") == "1") {
		t.Fatalf("REDISWHEEL_ADDR and REDISWHEEL_CLUSTER_ADDRS must both be set when TIMERD_REQUIRE=1")
	}
	if len(out) == 0 {
		t.Skip("REDISWHEEL_ADDR and REDISWHEEL_CLUSTER_ADDRS are unset: no Redis server for this test")
	}
	return out
}

// Configured reports whether Servers has a server to give, or must fail
// for want of one (TIMERD_REQUIRE=1): a test that also runs without Redis
// asks it before Each, which would skip the whole test.
func Configured() bool {
	for _, name := range []string{"REDISWHEEL_ADDR", "REDISWHEEL_CLUSTER_ADDRS"} {
		if os.Getenv(name) != "" {
			return true
		}
	}
	return os.Getenv("TIMERD_REQUIRE") == "1" || os.Getenv("REDISWHEEL_REQUIRE") == "1"
}

// Each runs f as a parallel subtest on each configured server.
func Each(t *testing.T, f func(t *testing.T, c redis.UniversalClient)) {
	for name, c := range Servers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, c)
		})
	}
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// Namespace is a fresh namespace named after t, whose keys are deleted when
// t ends; no test flushes a server.
func Namespace(t testing.TB, c redis.UniversalClient) string {
	var b [4]byte
	rand.Read(b[:])
	name := unsafeChars.ReplaceAllString(t.Name(), "_")
	if len(name) > 60 {
		name = name[:60]
	}
	ns := "tdtest." + name + "." + hex.EncodeToString(b[:])
	t.Cleanup(func() { deleteNamespace(t, c, ns) })
	return ns
}

// deleteNamespace deletes every key of ns: all of them carry a hash tag
// that starts with "{ns.".
func deleteNamespace(t testing.TB, c redis.UniversalClient, ns string) {
	ctx := context.Background()
	del := func(ctx context.Context, n *redis.Client) error {
		iter := n.Scan(ctx, 0, "{"+ns+".*", 1000).Iterator()
		for iter.Next(ctx) {
			n.Del(ctx, iter.Val())
		}
		return iter.Err()
	}
	var err error
	switch c := c.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, del)
	case *redis.Client:
		err = del(ctx, c)
	}
	if err != nil {
		t.Errorf("deleting namespace %s: %v", ns, err)
	}
}
