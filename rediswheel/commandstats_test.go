package rediswheel

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// redisCommands runs call and returns how many commands the server of c
// executed meanwhile, by INFO commandstats: the commands a script runs
// (redis.call) count one each, the script call itself (EVALSHA, EVAL),
// INFO and go-redis's handshake on a new connection do not. Unlike CPU or wall time, the count does not depend on how
// loaded the machine is; another client of the server can only add to it,
// so a caller that wants call's own count takes the least of a few windows.
func redisCommands(t testing.TB, c *redis.Client, call func()) int64 {
	t.Helper()
	count := func() int64 {
		info, err := c.Info(context.Background(), "commandstats").Result()
		require.NoError(t, err)
		var n int64
		for _, line := range strings.Split(info, "\n") {
			name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || !strings.HasPrefix(name, "cmdstat_") {
				continue
			}
			switch cmd, _, _ := strings.Cut(strings.TrimPrefix(name, "cmdstat_"), "|"); cmd {
			case "info", "evalsha", "eval", "evalsha_ro", "eval_ro", "script":
				continue
			case "hello", "client", "ping", "auth", "select":
				// go-redis's handshake on a new connection (HELLO, CLIENT
				// SETINFO twice), which a pool may dial in any window on a
				// loaded machine: the client's work, not the call's.
				continue
			}
			calls, _, _ := strings.Cut(strings.TrimPrefix(stats, "calls="), ",")
			v, err := strconv.ParseInt(calls, 10, 64)
			require.NoError(t, err, "INFO commandstats line %q", line)
			n += v
		}
		return n
	}
	before := count()
	call()
	return count() - before
}
