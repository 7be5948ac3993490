package rediswheel

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The victim of TestWorkerKilledMidBatch, run in a child process: it
// finishes the tasks with an even number and hangs in the others until it is
// killed, so it dies holding a full batch of leases.
const victimEnv = "REDISWHEEL_VICTIM_NAMESPACE"

const crashLease = time.Second

func TestCrashVictim(t *testing.T) {
	ns := os.Getenv(victimEnv)
	if ns == "" {
		t.Skip("helper process of TestWorkerKilledMidBatch")
	}
	c := redis.NewClient(&redis.Options{Addr: os.Getenv("REDISWHEEL_ADDR")})
	q, err := newTQ(c, Options{Namespace: ns, Lease: crashLease, Concurrency: 64})
	require.NoError(t, err)
	q.Run(context.Background(), func(ctx context.Context, tk Task) error {
		var i int
		fmt.Sscanf(tk.Key, "task-%d", &i)
		if i%2 == 1 {
			select {} // hang until SIGKILL
		}
		return c.HIncrBy(ctx, ns+":done", tk.Key, 1).Err()
	})
}

// A worker killed with SIGKILL in the middle of its batch loses nothing: its
// leases run out and another worker runs every task it held.
func TestWorkerKilledMidBatch(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Lease: crashLease})
	ns := q.opts.Namespace
	done := ns + ":done"
	t.Cleanup(func() { c.Del(context.Background(), done) })
	ctx := context.Background()
	const n = 2000
	for i := range n {
		_, err := q.Add(ctx, fmt.Sprint("task-", i), nil, time.Now())
		require.NoError(t, err)
	}

	victim := exec.Command(os.Args[0], "-test.run=^TestCrashVictim$", "-test.count=1")
	victim.Env = append(os.Environ(), victimEnv+"="+ns)
	var out strings.Builder
	victim.Stdout, victim.Stderr = &out, &out
	require.NoError(t, victim.Start())
	exited := false
	t.Cleanup(func() {
		if !exited {
			victim.Process.Kill()
			victim.Wait()
		}
	})
	eventually(t, 30*time.Second, "the victim to fill its handlers", func() bool {
		return totals(t, q).InFlight >= 64
	})
	require.NoError(t, victim.Process.Signal(syscall.SIGKILL))
	victim.Wait()
	exited = true
	killedAt := redisTime(t, c)
	held := totals(t, q).InFlight
	doneByVictim := c.HLen(ctx, done).Val()
	t.Logf("victim killed holding %d leases, after finishing %d tasks", held, doneByVictim)
	require.NotZero(t, held)
	deadlines := map[string]time.Time{} // the victim's leases
	confirmed := map[string]bool{}      // ... that a heartbeat of the victim confirmed
	for _, keys := range q.keys {
		zs, err := c.ZRangeWithScores(ctx, keys[1], 0, -1).Result()
		require.NoError(t, err)
		for _, z := range zs {
			k := z.Member.(string)
			deadlines[k] = time.UnixMilli(int64(z.Score))
			unconfirmed, err := c.HExists(ctx, keys[4], "u|"+k).Result()
			require.NoError(t, err)
			confirmed[k] = !unconfirmed
		}
	}

	var rec recorder
	rec.reply = func(ctx context.Context, tk Task) error {
		return c.HIncrBy(ctx, done, tk.Key, 1).Err()
	}
	run(t, q, rec.handle)
	eventually(t, 30*time.Second, "every task done", func() bool { return c.HLen(ctx, done).Val() == n })
	eventually(t, patience, "the namespace to empty", func() bool { return leftovers(t, q) == 0 })

	counts, err := c.HGetAll(ctx, done).Result()
	require.NoError(t, err)
	for i := range n {
		assert.NotEmpty(t, counts[fmt.Sprint("task-", i)], "task-%d never completed", i)
	}
	redelivered := 0
	for _, tk := range rec.tasks() {
		if deadline, ok := deadlines[tk.Key]; ok {
			// A delivery the victim never confirmed by a heartbeat may have
			// been a lost claim reply: it is not counted (maxUnconfirmed).
			if confirmed[tk.Key] {
				assert.Equal(t, 2, tk.Attempt, "%s: the victim's confirmed delivery counts", tk.Key)
			} else {
				assert.Equal(t, 1, tk.Attempt, "%s: the victim's unconfirmed delivery does not count", tk.Key)
			}
			assert.False(t, tk.Due.Before(deadline), "%s redelivered at %v, before its lease ran out at %v", tk.Key, tk.Due, deadline)
			redelivered++
		}
	}
	assert.GreaterOrEqual(t, int64(redelivered), held, "every lease the victim held comes back")
	t.Logf("all %d tasks done %v after the kill", n, redisTime(t, c).Sub(killedAt).Round(time.Millisecond))
}
