package pgwheel

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/stretchr/testify/require"
)

// TestCommittedAddsSurviveACrash: every add acknowledged before the server
// is stopped with pg_ctl stop -m immediate (no shutdown checkpoint: the
// WAL replays at start) is there after the restart, and the pool's
// operations work again by themselves once the server is back. Needs
// PGWHEEL_RESTART (scripts/postgres.sh writes it); skipped without it
// unless PGWHEEL_REQUIRE=1.
func TestCommittedAddsSurviveACrash(t *testing.T) {
	needDB(t)
	restart := os.Getenv("PGWHEEL_RESTART")
	if restart == "" {
		if os.Getenv("PGWHEEL_REQUIRE") == "1" {
			t.Fatal("PGWHEEL_REQUIRE=1 but PGWHEEL_RESTART is not set")
		}
		t.Skip("PGWHEEL_RESTART not set")
	}
	// The shared pool's connections die with the server: start the next
	// test with fresh ones.
	t.Cleanup(sharedPool.Reset)
	s := newStore(t)
	ctx := testCtx(t)
	const n = 300
	for i := 0; i < n; i += 30 {
		batch := make([]NewTask, 30)
		for j := range batch {
			batch[j] = NewTask{Key: fmt.Sprintf("k%03d", i+j), Payload: []byte("p")}
		}
		_, err := s.add(ctx, batch...)
		require.NoError(t, err)
	}
	tx, err := sharedPool.Begin(ctx)
	require.NoError(t, err)
	_, err = s.AddTx(ctx, tx, NewTask{Key: "uncommitted"})
	require.NoError(t, err)

	out, err := exec.CommandContext(ctx, "sh", "-c", restart).CombinedOutput()
	require.NoError(t, err, "restart: %s", out)
	tx.Rollback(context.Background()) //nolint:errcheck // its connection died with the server

	// The pool reconnects by itself; connections that died may fail a few
	// calls first.
	seen := map[string]bool{}
	deadline := time.Now().Add(patience)
	var lastErr error
	for len(seen) < n {
		if time.Now().After(deadline) {
			t.Fatalf("claimed %d of %d tasks within %v after the restart; last error: %v", len(seen), n, patience, lastErr)
		}
		c, err := s.claim(ctx, hourLease)
		if err != nil {
			lastErr = err
			time.Sleep(10 * time.Millisecond)
			continue
		}
		for _, ct := range c.Tasks {
			require.False(t, seen[ct.Key], "%s claimed twice", ct.Key)
			require.NotEqual(t, "uncommitted", ct.Key, "an uncommitted add survived")
			seen[ct.Key] = true
		}
	}
	_, err = s.get(ctx, "uncommitted")
	require.ErrorIs(t, err, durable.ErrNotFound)
}

// TestRunAcrossARestart: a durable.Queue's Run goes on by itself across
// pg_ctl stop -m immediate and a restart: every add committed before the
// crash fires (one due during the outage included), never early, and so
// does every add another process commits after it, promptly although the
// worker polls only hourly: its Notify listens again by itself.
func TestRunAcrossARestart(t *testing.T) {
	needDB(t)
	restart := os.Getenv("PGWHEEL_RESTART")
	if restart == "" {
		if os.Getenv("PGWHEEL_REQUIRE") == "1" {
			t.Fatal("PGWHEEL_REQUIRE=1 but PGWHEEL_RESTART is not set")
		}
		t.Skip("PGWHEEL_RESTART not set")
	}
	t.Cleanup(sharedPool.Reset) // its connections die with the server
	s := newStore(t)
	worker, err := New(testPool(t, 8), s.Namespace())
	require.NoError(t, err)
	q := newQueue(t, worker, durable.Options{PollInterval: time.Hour})
	rec := &recorder{}
	runQueue(t, q, rec.handle)
	other := newQueue(t, otherProcess(t, s.Namespace()), durable.Options{})
	ctx := testCtx(t)

	due := map[string]time.Time{}
	add := func(key string, at time.Time) bool {
		_, err := other.Add(ctx, key, nil, at)
		if err == nil {
			due[key] = at
		}
		return err == nil
	}
	now := time.Now()
	for i := range 20 {
		require.True(t, add(fmt.Sprint("before-", i), now.Add(time.Duration(i)*100*time.Millisecond)))
	}
	require.True(t, add("during", now.Add(2500*time.Millisecond))) // due while the server is down
	eventually(t, "the early tasks delivered", func() bool { return rec.count() >= 5 })

	out, err := exec.CommandContext(ctx, "sh", "-c", restart).CombinedOutput()
	require.NoError(t, err, "restart: %s", out)

	// Connections the pool had die on first use: retry until adds land.
	eventually(t, "an add after the restart", func() bool { return add("after-0", time.Now()) })
	eventually(t, "every task before the restart delivered", func() bool { return rec.count() == len(due) })
	for i := 1; i <= 3; i++ {
		eventually(t, "the worker idle", q.Idle)
		key := fmt.Sprint("after-", i)
		require.True(t, add(key, time.Now()))
		eventually(t, key+" delivered (the worker polls only hourly)", func() bool { return len(rec.deliveries(key)) > 0 })
	}
	for key, at := range due {
		ds := rec.deliveries(key)
		require.NotEmpty(t, ds, "%s never delivered", key)
		require.False(t, ds[0].at.Before(at), "%s delivered at %v, before its time %v", key, ds[0].at, at)
	}
}
