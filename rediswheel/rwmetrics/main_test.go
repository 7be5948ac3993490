package rwmetrics

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

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
	redis.SetLogger(testRedisLogger{})
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}

// testRedisLogger is go-redis's logger in these tests. It drops the pool's
// "failed to dial" lines: tests dial closed ports and restart servers on
// purpose, which printed hundreds of them, and every failed dial also
// reaches the caller as an error, where a test that cares checks it. Any
// other line goes to stderr, marked as go-redis's.
type testRedisLogger struct{}

func (testRedisLogger) Printf(_ context.Context, format string, v ...any) {
	line := fmt.Sprintf(format, v...)
	if strings.Contains(line, "failed to dial") {
		return
	}
	fmt.Fprintln(os.Stderr, "go-redis log:", line)
}

func envOrSkip(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("REDISWHEEL_REQUIRE") == "1" {
			t.Fatalf("%s is unset and REDISWHEEL_REQUIRE=1", name)
		}
		t.Skipf("%s is unset: no Redis server for this test", name)
	}
	return v
}

// standalone returns a client of the REDISWHEEL_ADDR server, closed when t ends.
func standalone(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: envOrSkip(t, "REDISWHEEL_ADDR")})
	t.Cleanup(func() { c.Close() })
	return c
}

// cluster returns a client of the REDISWHEEL_CLUSTER_ADDRS cluster.
func cluster(t testing.TB) *redis.ClusterClient {
	addrs := strings.Split(envOrSkip(t, "REDISWHEEL_CLUSTER_ADDRS"), ",")
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { c.Close() })
	return c
}

// patience bounds every wait of a test on something that should happen soon:
// generous, so that a loaded machine never trips it, and finite, so that a
// broken feature fails the test with a message instead of hanging it.
const patience = 30 * time.Second

// await receives from ch, failing t if nothing comes within patience.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("timed out after %v waiting for %s", patience, what)
		panic("unreachable")
	}
}

// awaitDone calls wait (a WaitGroup's Wait, say) and fails t if it has not
// returned within patience.
func awaitDone(t testing.TB, what string, wait func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	await(t, done, what)
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// uniqueNamespace is a fresh namespace named after t, whose keys are deleted
// when t ends. It finds them by their hash tag, "{namespace.shard}" (see
// rediswheel's doc.go).
func uniqueNamespace(t testing.TB, c redis.UniversalClient) string {
	var b [4]byte
	rand.Read(b[:])
	ns := "rwmetrics." + unsafeChars.ReplaceAllString(t.Name(), "_") + "." + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		// SCAN, not KEYS: the servers are shared and may hold many keys.
		del := func(ctx context.Context, node *redis.Client) error {
			it := node.Scan(ctx, 0, "{"+ns+".*", 1000).Iterator()
			for it.Next(ctx) {
				node.Del(ctx, it.Val())
			}
			return it.Err()
		}
		ctx := context.Background()
		switch c := c.(type) {
		case *redis.ClusterClient:
			c.ForEachMaster(ctx, del)
		case *redis.Client:
			del(ctx, c)
		}
	})
	return ns
}

// newQueue returns a Queue on namespace ns, observed by m.
func newQueue(t testing.TB, c redis.UniversalClient, ns string, m *Metrics, opts rediswheel.Options) *rediswheel.Queue {
	t.Helper()
	opts.Namespace, opts.Observer = ns, m.Observer()
	q, err := rediswheel.New(c, opts)
	require.NoError(t, err)
	return q
}
