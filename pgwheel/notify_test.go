package pgwheel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/require"
)

// listenerBackends counts the server's connections whose last statement was
// the LISTEN of Notify (a Listener waits with it as its last statement).
func listenerBackends(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, sharedPool.QueryRow(testCtx(t), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN `+notifyChannel+`'`).Scan(&n))
	return n
}

// TestNotifyWakesAnIdleWorker: a worker whose poll interval is an hour
// claims a task that another process (another Store on its own pool) adds
// for now, by the wake-up that add sends at commit: without Notify it would
// sleep for the hour. After its listening connection is killed, Notify
// reports the loss and listens again by itself, and the next add wakes the
// worker as promptly.
func TestNotifyWakesAnIdleWorker(t *testing.T) {
	s := newStore(t)
	notifyErrs := make(chan error, 16)
	q := newQueue(t, s, durable.Options{PollInterval: time.Hour, OnError: func(err error) {
		t.Log("OnError:", err)
		select {
		case notifyErrs <- err:
		default:
		}
	}})
	rec := &recorder{each: make(chan durable.Task, 8)}
	runQueue(t, q, rec.handle)
	other := newQueue(t, otherProcess(t, s.Namespace()), durable.Options{}) // no Run: its Adds wake nobody here
	ctx := testCtx(t)

	addAndAwait := func(key string) {
		t.Helper()
		eventually(t, "the worker idle", q.Idle)
		_, err := other.Add(ctx, key, nil, time.Now())
		require.NoError(t, err)
		tk := await(t, rec.each, key+" delivered (an idle worker polls only hourly)")
		require.Equal(t, key, tk.Key)
	}
	addAndAwait("first")
	// The first delivery came from the wake-up or from the claim Notify
	// makes once it listens: either way it listens now.
	addAndAwait("second")

	// Cut the listening connection: Notify must see it and listen again.
	before := listenerBackends(t)
	require.Positive(t, before, "no connection LISTENs while Run runs")
	var killed int
	require.NoError(t, sharedPool.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid)
		FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN `+notifyChannel+`') k`).Scan(&killed))
	require.Positive(t, killed)
	for {
		err := await(t, notifyErrs, "Notify to report its lost connection")
		if !errors.Is(err, context.Canceled) && strings.Contains(err.Error(), "pgwheel: wait") {
			break
		}
	}
	eventually(t, "Notify to listen again", func() bool { return listenerBackends(t) > 0 })
	addAndAwait("after the cut")
}
