package e2e

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
)

// SIGTERM stops a timerd cleanly (exit 0) and loses nothing: callbacks that
// finish within the grace are settled and the process exits when they have,
// not at the end of the grace; the others are cut short at the end of the
// grace, not waited for, and their tasks released to the store, due at once,
// with the attempt not counted. Grace and callbacks are far apart (60s
// against 300ms), and the exit is waited for up to 30s, so that either way
// a broken shutdown fails by what it does, however slow the machine.
// On Redis, PostgreSQL and the default SQLite store.
func TestSIGTERM(t *testing.T) {
	for _, store := range []func(*testing.T) target{standalone, postgres, sqliteFile} {
		t.Run("callbacks finish within the grace", func(t *testing.T) {
			sigterm(t, store(t), time.Minute, 300*time.Millisecond)
		})
		t.Run("callbacks outlast the grace", func(t *testing.T) {
			sigterm(t, store(t), 300*time.Millisecond, time.Minute)
		})
	}
}

// exitWithin bounds a stopping process's exit: under either case's minute.
const exitWithin = 30 * time.Second

func sigterm(t *testing.T, target target, grace, slow time.Duration) {
	t.Logf("store %s", target.name)
	const n, concurrency = 40, 8
	w := newWorld(t, target)
	p := start(t, "A", environ("TIMERD_TOKEN="+token),
		w.args("-concurrency", fmt.Sprint(concurrency), "-shutdown-grace", grace.String())...)
	rc := newReceiver(t, slow)
	ts := w.tasks(t, p)
	now := time.Now()
	for i := range n {
		ts.create(fmt.Sprintf("task/%02d", i), now, rc.url())
	}

	deadline := time.Now().Add(time.Minute)
	for len(rc.senders()) == 0 {
		require.True(t, time.Now().Before(deadline), "no callback in flight within a minute")
		time.Sleep(2 * time.Millisecond)
	}
	sent := time.Now()
	p.signal(syscall.SIGTERM)
	// Before the grace ends (finishing callbacks), or before the
	// callbacks would (cut short): either way well within a minute.
	require.Equal(t, 0, p.wait(exitWithin), p.log())
	t.Logf("exit %v after SIGTERM, grace %v, callbacks %v", time.Since(sent), grace, slow)
	// The receiver records a callback cut short once it sees its connection
	// close, which may be a moment after the process is gone: wait for it.
	deadline = time.Now().Add(exitWithin)
	for len(rc.senders()) > 0 {
		require.True(t, time.Now().Before(deadline), "the receiver still answers callbacks of a process gone %v", exitWithin)
		time.Sleep(2 * time.Millisecond)
	}

	done := rc.completed()
	var cut []string
	for _, d := range rc.deliveries() {
		if !d.completed {
			cut = append(cut, d.key)
		}
	}
	if slow < grace {
		require.Empty(t, cut, "callbacks cut short despite the grace")
		require.NotEmpty(t, done)
	} else {
		require.Empty(t, done)
		require.NotEmpty(t, cut)
		for _, key := range cut {
			info, err := w.q.Get(context.Background(), key)
			require.NoError(t, err)
			require.Equal(t, durable.StateScheduled, info.State, "%s: released, due again", key)
			require.Zero(t, info.Attempts, "%s: the released delivery is not counted", key)
		}
	}
	// Nothing lost: every task is either done (retained, -retention 24h) or
	// waiting in the store for the next process.
	st := w.stats(t)
	require.Zero(t, st.InFlight+st.Dead, "%+v", st)
	require.EqualValues(t, len(done), st.Retained, "%+v", st)
	require.EqualValues(t, n-len(done), st.Due+st.Scheduled, "%+v", st)
}
