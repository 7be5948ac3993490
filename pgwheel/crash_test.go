package pgwheel

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The victim of TestWorkerKilledMidBatch, run in a child process on its
// parent's schema (victimSchemaEnv) and namespace (victimNamespaceEnv): it
// finishes the tasks with an even number, recording each in crash_done,
// and hangs in the others until it is killed, so it dies holding a full
// batch of leases.
const (
	victimSchemaEnv    = "PGWHEEL_VICTIM_SCHEMA"
	victimNamespaceEnv = "PGWHEEL_VICTIM_NAMESPACE"
)

// victimApp names the victim's connections, so that its parent can wait for
// the server to be done with them.
const victimApp = "pgwheel-victim"

const (
	crashLease       = time.Second
	crashConcurrency = 64
)

func TestCrashVictim(t *testing.T) {
	ns := os.Getenv(victimNamespaceEnv)
	if ns == "" {
		t.Skip("helper process of TestWorkerKilledMidBatch")
	}
	s, err := New(sharedPool, ns)
	require.NoError(t, err)
	q, err := durable.New(s, durable.Options{Lease: crashLease, Concurrency: crashConcurrency})
	require.NoError(t, err)
	q.Run(context.Background(), func(ctx context.Context, tk durable.Task) error { //nolint:errcheck // killed, never returns
		var i int
		fmt.Sscanf(tk.Key, "task-%d", &i) //nolint:errcheck // the parent names them
		if i%2 == 1 {
			select {} // hang until SIGKILL
		}
		return markDone(ctx, ns, tk.Key)
	})
}

// markDone counts one finished delivery of key in crash_done.
func markDone(ctx context.Context, ns, key string) error {
	_, err := sharedPool.Exec(ctx, `INSERT INTO crash_done (namespace, key, n) VALUES ($1, $2, 1)
		ON CONFLICT (namespace, key) DO UPDATE SET n = crash_done.n + 1`, ns, key)
	return err
}

// TestWorkerKilledMidBatch: a worker killed with SIGKILL in the middle of
// its batch loses nothing: its leases run out and another worker runs every
// task it held, never before the lease's end.
func TestWorkerKilledMidBatch(t *testing.T) {
	s := newStore(t)
	ns := s.Namespace()
	ctx := testCtx(t)
	_, err := sharedPool.Exec(ctx, `CREATE TABLE IF NOT EXISTS crash_done (
		namespace text, key text, n integer NOT NULL, PRIMARY KEY (namespace, key))`)
	require.NoError(t, err)
	q := newQueue(t, s, durable.Options{Lease: crashLease})
	const n = 500
	items := make([]durable.Item, n)
	for i := range items {
		items[i] = durable.Item{Key: fmt.Sprint("task-", i), At: time.Now()}
	}
	_, err = q.AddBatch(ctx, items)
	require.NoError(t, err)

	victim := exec.Command(os.Args[0], "-test.run=^TestCrashVictim$", "-test.count=1")
	victim.Env = append(os.Environ(), victimSchemaEnv+"="+testSchema, victimNamespaceEnv+"="+ns)
	var out strings.Builder
	victim.Stdout, victim.Stderr = &out, &out
	require.NoError(t, victim.Start())
	exited := false
	t.Cleanup(func() {
		if !exited {
			victim.Process.Kill() //nolint:errcheck // it may have died already
			victim.Wait()         //nolint:errcheck // killed
		}
	})
	inFlight := func() int64 {
		st, err := q.Stats(ctx)
		require.NoError(t, err)
		return st.Total.InFlight
	}
	finished := func() int { // tasks done at least once, by either worker
		var n int
		require.NoError(t, sharedPool.QueryRow(ctx, `SELECT count(*) FROM crash_done WHERE namespace = $1`, ns).Scan(&n))
		return n
	}
	// Full of hung handlers, having finished others: it dies mid-batch.
	eventually(t, "the victim to fill its handlers", func() bool {
		return inFlight() >= crashConcurrency && finished() >= crashConcurrency
	})
	require.NoError(t, victim.Process.Signal(syscall.SIGKILL))
	victim.Wait() //nolint:errcheck // killed
	exited = true
	t.Logf("victim output:\n%s", out.String())
	// A statement the victim sent before it died may still run: a settle's
	// COMMIT, a heartbeat. Read its leases once its connections are gone.
	eventually(t, "the server to drop the victim's connections", func() bool {
		var n int
		require.NoError(t, sharedPool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`,
			victimApp).Scan(&n))
		return n == 0
	})

	// The victim's leases as it left them: their ends, and whether a
	// heartbeat or settle confirmed them (unconfirmed = 0).
	deadlines := map[string]time.Time{}
	confirmed := map[string]bool{}
	rows, err := sharedPool.Query(ctx, `SELECT key, at, unconfirmed = 0 FROM pgwheel_task
		WHERE namespace = $1 AND place = 'lease'`, ns)
	require.NoError(t, err)
	for rows.Next() {
		var k string
		var at time.Time
		var c bool
		require.NoError(t, rows.Scan(&k, &at, &c))
		deadlines[k], confirmed[k] = at, c
	}
	require.NoError(t, rows.Err())
	t.Logf("victim killed holding %d leases, after finishing %d tasks", len(deadlines), finished())
	require.NotEmpty(t, deadlines)

	rec := &recorder{}
	runQueue(t, q, func(ctx context.Context, tk durable.Task) error {
		rec.handle(ctx, tk) //nolint:errcheck // records only
		return markDone(ctx, ns, tk.Key)
	})
	eventually(t, "every task done", func() bool { return finished() == n })
	eventually(t, "the namespace to empty", func() bool {
		st, err := q.Stats(ctx)
		require.NoError(t, err)
		return st.Total == durable.ShardStats{Shard: -1}
	})
	for key, deadline := range deadlines {
		ds := rec.deliveries(key)
		if !assert.NotEmpty(t, ds, "%s, leased by the victim, was never delivered again", key) {
			continue
		}
		d := ds[0]
		// A delivery the victim never confirmed may have been a lost claim
		// reply: it is not counted.
		want := 1
		if confirmed[key] {
			want = 2
		}
		assert.Equal(t, want, d.task.Attempt, "%s: attempt after the victim's delivery (confirmed: %v)", key, confirmed[key])
		assert.False(t, d.task.Due.Before(deadline), "%s redelivered as due %v, before its lease ran out at %v", key, d.task.Due, deadline)
		assert.False(t, d.at.Before(deadline), "%s redelivered at %v, before its lease ran out at %v", key, d.at, deadline)
	}
}
