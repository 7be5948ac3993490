package rediswheel

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every Add that Redis acknowledged survives a restart of an AOF server.
// REDISWHEEL_AOF_RESTART restarts it in place (it may kill it with SIGKILL:
// with appendfsync always an acknowledged write is on disk).
func TestAOFRestartKeepsAcknowledgedAdds(t *testing.T) {
	addr := envOrSkip(t, "REDISWHEEL_AOF_ADDR")
	restart := envOrSkip(t, "REDISWHEEL_AOF_RESTART")
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: 10})
	t.Cleanup(func() { c.Close() })
	q := newQueue(t, c, Options{Lease: time.Second})
	ctx := context.Background()
	const n = 1000
	for i := range n {
		added, err := q.Add(ctx, fmt.Sprint("k", i), []byte(fmt.Sprint("p", i)), time.Now().Add(-time.Second))
		require.NoError(t, err)
		require.True(t, added)
	}

	cmd := exec.Command("sh", "-c", restart)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Run(), "REDISWHEEL_AOF_RESTART failed")
	eventually(t, patience, "the server to answer", func() bool { return c.Ping(ctx).Err() == nil })
	assert.Equal(t, ShardStats{Due: n}, totals(t, q), "acknowledged Adds lost in the restart")

	var rec recorder
	run(t, q, rec.handle)
	eventually(t, patience, "every task", func() bool { return leftovers(t, q) == 0 })
	seen := map[string]string{}
	for _, tk := range rec.tasks() {
		seen[tk.Key] = string(tk.Payload)
	}
	require.Len(t, seen, n)
	for i := range n {
		assert.Equal(t, fmt.Sprint("p", i), seen[fmt.Sprint("k", i)])
	}
}
