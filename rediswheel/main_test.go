package rediswheel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable/storetest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The tests run against real Redis servers named by environment variables:
//
//	REDISWHEEL_ADDR          host:port of a standalone server
//	REDISWHEEL_CLUSTER_ADDRS comma-separated host:port of a cluster's masters
//	REDISWHEEL_AOF_ADDR      host:port of a server with appendonly yes
//	REDISWHEEL_AOF_RESTART   shell command restarting that server in place
//
// A test whose variable is unset is skipped, unless REDISWHEEL_REQUIRE=1,
// when it fails. Each test works in a namespace of its own and deletes it
// afterwards; none flushes a server.
func TestMain(m *testing.M) {
	// After a failed dial go-redis keeps one goroutine probing the address
	// once a second, even past Close, until its next wake-up (see
	// TestRunWithoutRedis). It is the client's, not ours.
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

// cluster returns a cluster client of REDISWHEEL_CLUSTER_ADDRS.
func cluster(t testing.TB) *redis.ClusterClient {
	addrs := strings.Split(envOrSkip(t, "REDISWHEEL_CLUSTER_ADDRS"), ",")
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { c.Close() })
	return c
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// uniqueNamespace is a fresh namespace named after t.
func uniqueNamespace(t testing.TB) string {
	var b [4]byte
	rand.Read(b[:])
	name := unsafeChars.ReplaceAllString(t.Name(), "_")
	if len(name) > 60 {
		name = name[:60]
	}
	return "rwtest." + name + "." + hex.EncodeToString(b[:])
}

// newQueue returns a Queue on a fresh namespace (unless opts names one) whose
// keys are deleted when t ends.
func newQueue(t testing.TB, c redis.UniversalClient, opts Options) *testQueue {
	t.Helper()
	if opts.Namespace == "" {
		opts.Namespace = uniqueNamespace(t)
	}
	q, err := newTQ(c, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, keys := range q.keys {
			c.Del(context.Background(), keys...)
		}
		c.Del(context.Background(), layoutKey(opts.Namespace))
	})
	return q
}

// run runs q.Run(h) until t ends or the returned stop is called; stop waits
// for Run to return.
func run(t testing.TB, q *testQueue, h Handler) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx, h) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Error("Run did not return within 30s of its context ending")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// eventually is storetest's, the one wait helper of the stores' tests,
// with its bound given.
var eventually = storetest.EventuallyWithin

// patience bounds every wait of a test on something that should happen soon
// (a delivery, a callback, a goroutine): generous, so that a loaded machine
// never trips it, and finite, so that a broken feature fails the test with
// a message instead of hanging it.
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

// redisTime is the server's clock.
func redisTime(t testing.TB, c redis.UniversalClient) time.Time {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	require.NoError(t, err)
	return now
}

// leftovers counts every trace of tasks in q's namespace: members of the
// sorted sets, payloads, and control fields other than the token counter.
// Zero means nothing was left behind: no tombstones, no orphans.
func leftovers(t testing.TB, q *testQueue) int64 {
	t.Helper()
	ctx := context.Background()
	var n int64
	for _, keys := range q.keys {
		for _, k := range keys[:3] {
			n += q.client.ZCard(ctx, k).Val()
		}
		n += q.client.HLen(ctx, keys[3]).Val()
		fields, err := q.client.HKeys(ctx, keys[4]).Result()
		require.NoError(t, err)
		for _, f := range fields {
			if f != "#token" {
				n++
			}
		}
	}
	return n
}

// totals is Stats.Total with only the counts by place (Shard, OldestDue,
// Paused and States zero), for comparing with a literal. The counts per
// state are checked against Get by TestScriptsAgainstModel, and by
// storetest's StatsCountStates.
func totals(t testing.TB, q *testQueue) ShardStats {
	t.Helper()
	st, err := q.Stats(context.Background())
	require.NoError(t, err)
	s := st.Total
	s.Shard, s.OldestDue, s.Paused, s.States = 0, 0, false, StateCounts{}
	return s
}

// recorder is a Handler that records deliveries and answers with reply.
type recorder struct {
	mu    sync.Mutex
	seen  []Task
	reply func(ctx context.Context, t Task) error
}

func (r *recorder) handle(ctx context.Context, t Task) error {
	r.mu.Lock()
	r.seen = append(r.seen, t)
	r.mu.Unlock()
	if r.reply == nil {
		return nil
	}
	return r.reply(ctx, t)
}

func (r *recorder) tasks() []Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Task(nil), r.seen...)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}
