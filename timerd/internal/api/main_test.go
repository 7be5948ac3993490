package api

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

// The tests run against the Redis servers rediswheel's tests use:
//
//	REDISWHEEL_ADDR          host:port of a standalone server
//	REDISWHEEL_CLUSTER_ADDRS comma-separated host:port of a cluster's masters
//
// A test whose variable is unset is skipped, unless TIMERD_REQUIRE=1 (or
// REDISWHEEL_REQUIRE=1), when it fails. Each test works in a namespace of its
// own and deletes its keys afterwards.
func TestMain(m *testing.M) {
	// go-redis keeps a goroutine probing an address after a failed dial (see
	// rediswheel's TestMain).
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}

// servers returns a client of each configured server kind, closed when t ends.
func servers(t *testing.T) map[string]redis.UniversalClient {
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

// eachServer runs f as a subtest on each configured server.
func eachServer(t *testing.T, f func(t *testing.T, c redis.UniversalClient)) {
	for name, c := range servers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, c)
		})
	}
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// namespace is a fresh namespace named after t, whose keys are deleted when t ends.
func namespace(t *testing.T, c redis.UniversalClient) string {
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

func deleteNamespace(t *testing.T, c redis.UniversalClient, ns string) {
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
