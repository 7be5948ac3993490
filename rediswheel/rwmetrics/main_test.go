package rwmetrics

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"regexp"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// The tests need a Redis server at REDISWHEEL_ADDR, as rediswheel's own do
// (see its main_test.go): without it they are skipped, unless
// REDISWHEEL_REQUIRE=1.
func TestMain(m *testing.M) {
	// go-redis keeps probing a refused address once a second, even past
	// Close, until its next wake-up: the client's goroutine, not ours.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}

func standalone(t testing.TB) *redis.Client {
	t.Helper()
	addr := os.Getenv("REDISWHEEL_ADDR")
	if addr == "" {
		if os.Getenv("REDISWHEEL_REQUIRE") == "1" {
			t.Fatal("REDISWHEEL_ADDR is unset and REDISWHEEL_REQUIRE=1")
		}
		t.Skip("REDISWHEEL_ADDR is unset: no Redis server for this test")
	}
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { c.Close() })
	return c
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// uniqueNamespace is a fresh namespace named after t, whose keys are deleted
// when t ends. It finds them by their hash tag, "{namespace.shard}" (see
// rediswheel's doc.go).
func uniqueNamespace(t testing.TB, c *redis.Client) string {
	var b [4]byte
	rand.Read(b[:])
	ns := "rwmetrics." + unsafeChars.ReplaceAllString(t.Name(), "_") + "." + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		// SCAN, not KEYS: the server is shared and may hold many keys.
		it := c.Scan(ctx, 0, "{"+ns+".*", 1000).Iterator()
		for it.Next(ctx) {
			c.Del(ctx, it.Val())
		}
	})
	return ns
}

// newQueue returns a Queue on namespace ns, observed by m.
func newQueue(t testing.TB, c *redis.Client, ns string, m *Metrics, opts rediswheel.Options) *rediswheel.Queue {
	t.Helper()
	opts.Namespace, opts.Observer = ns, m.Observer()
	q, err := rediswheel.New(c, opts)
	require.NoError(t, err)
	return q
}
