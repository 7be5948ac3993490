package schedules

import (
	"os"
	"testing"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The tests run against real Redis, standalone and cluster, found by
// package redistest; each works in a namespace of its own.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(redistest.HoldRedisLog(m), redistest.IgnoreTryDial)
}

// newQueue is a Queue on a fresh namespace.
func newQueue(t *testing.T, c redis.UniversalClient, ns string) *rediswheel.Queue {
	q, err := rediswheel.New(c, rediswheel.Options{Namespace: ns, Shards: 4})
	require.NoError(t, err)
	return q
}

// envAddr is REDISWHEEL_ADDR, or skips b.
func envAddr(b *testing.B) string {
	addr := os.Getenv("REDISWHEEL_ADDR")
	if addr == "" {
		b.Skip("REDISWHEEL_ADDR is unset")
	}
	return addr
}
