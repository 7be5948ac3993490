package rediswheel

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// claimOne adds key due now to q (one shard) and claims it for a minute.
func claimOne(t *testing.T, q *testQueue, key string) *delivery {
	t.Helper()
	ctx := context.Background()
	_, err := q.Add(ctx, key, []byte("p"), time.Now().Add(-time.Second))
	require.NoError(t, err)
	got, err := q.claim(ctx, 0, 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, got.tasks, 1)
	return got.tasks[0]
}

// A settle outcome the script does not know is an error, never a retry: a
// typo on the Go side must not silently retry (or finish) a task.
func TestSettleRejectsUnknownOutcome(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1})
	ctx := context.Background()
	d := claimOne(t, q, "k")
	for _, kind := range []outcomeKind{"retyr", "", "ok", "DONE"} {
		_, err := q.settle(ctx, 0, []outcome{{d: d, kind: kind, err: "x"}})
		require.Error(t, err, "outcome %q", kind)
		assert.Contains(t, err.Error(), "rediswheel: unknown outcome "+string(kind))
	}
	// A bad outcome anywhere in a batch rejects the whole batch before any write.
	d2 := claimOne(t, q, "k2")
	_, err := q.settle(ctx, 0, []outcome{{d: d2, kind: outcomeDone}, {d: d, kind: "retyr"}})
	require.Error(t, err)
	assert.Equal(t, ShardStats{InFlight: 2}, totals(t, q), "nothing was settled")

	res, err := q.settle(ctx, 0, []outcome{{d: d, kind: outcomeDone}, {d: d2, kind: outcomeDone}})
	require.NoError(t, err)
	assert.Equal(t, []settleCode{settleDone, settleDone}, res.codes, "the tokens are still current")
}

// Every script refuses arguments it does not understand, before it writes.
func TestScriptsRejectBadArguments(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1})
	ctx := context.Background()
	d := claimOne(t, q, "k")
	keys := q.keys[0]
	cases := []struct {
		name   string
		script *redis.Script
		args   []any
	}{
		{"settle: short task", settleScript, []any{10, 10, 0, 100, "k", d.token, "done", 0, ""}},
		{"settle: short header", settleScript, []any{10, 3, "k", d.token, "done", 0, "", ""}},
		{"settle: bad delay", settleScript, []any{10, 10, 0, 100, "k", d.token, "retry", "1e3", "e", ""}},
		{"settle: negative delay", settleScript, []any{10, 10, 0, 100, "k", d.token, "retry", -5, "e", ""}},
		{"settle: bad cap", settleScript, []any{"x", 10, 0, 100, "k", d.token, "done", 0, "", ""}},
		{"settle: bad retention", settleScript, []any{10, 10, "1.5", 100, "k", d.token, "done", 0, "", ""}},
		{"extend: odd pairs", extendScript, []any{1000, "k"}},
		{"extend: bad lease", extendScript, []any{"1.5", "k", d.token}},
		{"extend: zero lease", extendScript, []any{0, "k", d.token}},
		{"cancel: extra", cancelScript, []any{"k", 0, 100, "more"}},
		{"cancel: none", cancelScript, []any{}},
		{"cancel: key only", cancelScript, []any{"k"}},
		{"cancel: bad retention", cancelScript, []any{"k", "1.5", 100}},
		{"requeue: extra", requeueScript, []any{"k", "more"}},
		{"dead: float limit", deadScript, []any{"4.6e18"}},
		{"dead: negative limit", deadScript, []any{-1}},
		{"dead: extra", deadScript, []any{1, 2}},
	}
	for _, tc := range cases {
		err := tc.script.Run(ctx, c, keys, tc.args...).Err()
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), "rediswheel: ", tc.name)
	}
	assert.Equal(t, ShardStats{InFlight: 1}, totals(t, q), "nothing was written")
	res, err := q.settle(ctx, 0, []outcome{{d: d, kind: outcomeDone}})
	require.NoError(t, err)
	assert.Equal(t, []settleCode{settleDone}, res.codes)
}

// later (RetryAfter) makes a task due again after the delay without using
// up an attempt, and counts a postponement (r|), however many came before:
// the Queue decides when they are too many. A retry starts the count over,
// and so do Replace and Requeue.
func TestSettleLaterCountsPostponements(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1, MaxAttempts: 1})
	ctx := context.Background()
	d := claimOne(t, q, "k")

	// A delay is honoured: the task waits, not due.
	res, err := q.settle(ctx, 0, []outcome{{d: d, kind: outcomeLater, delay: time.Hour.Milliseconds(), err: "busy"}})
	require.NoError(t, err)
	require.Equal(t, []settleCode{settlePostponed}, res.codes)
	assert.Equal(t, ShardStats{Scheduled: 1}, totals(t, q))
	err = q.Replace(ctx, "k", []byte("p"), time.Now().Add(-time.Second)) // a new task: postponements start over
	require.NoError(t, err)

	settle := func(kind outcomeKind, want settleCode, attempt, postponements int) {
		t.Helper()
		got, err := q.claim(ctx, 0, 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, got.tasks, 1)
		require.Equal(t, attempt, got.tasks[0].task.Attempt)
		require.Equal(t, postponements, got.tasks[0].postponements)
		res, err := q.settle(ctx, 0, []outcome{{d: got.tasks[0], kind: kind, err: "busy"}})
		require.NoError(t, err)
		require.Equal(t, []settleCode{want}, res.codes)
	}
	for i := range MaxPostponements + 2 {
		settle(outcomeLater, settlePostponed, 1, i)
	}
	settle(outcomeRetry, settleRetry, 1, MaxPostponements+2) // at its last attempt: the Queue would have said dead
	settle(outcomeLater, settlePostponed, 2, 0)
	settle(outcomeDead, settleDead, 2, 1)
	dead, err := q.Dead(ctx, 10)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, "busy", dead[0].LastError)
	assert.Equal(t, 2, dead[0].Attempts)

	ok, err := q.Requeue(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	settle(outcomeLater, settlePostponed, 1, 0)
}

// settle reports how many dead tasks it trimmed from the dead set, for the
// metrics: never silent.
func TestSettleCountsTrimmedDead(t *testing.T) {
	c := standalone(t)
	const capped = 5
	q := newQueue(t, c, Options{Shards: 1, MaxDead: capped})
	ctx := context.Background()
	for i := range 20 {
		_, err := q.Add(ctx, fmt.Sprint("k", i), []byte("p"), time.Now().Add(-time.Second))
		require.NoError(t, err)
	}
	got, err := q.claim(ctx, 0, 20, time.Minute)
	require.NoError(t, err)
	require.Len(t, got.tasks, 20)
	var os []outcome
	for _, d := range got.tasks[:18] {
		os = append(os, outcome{d: d, kind: outcomeDead, err: "no"})
	}
	res, err := q.settle(ctx, 0, os)
	require.NoError(t, err)
	assert.Equal(t, 13, res.trimmed, "18 buried in one call, 5 kept")
	res, err = q.settle(ctx, 0, []outcome{{d: got.tasks[18], kind: outcomeDead}, {d: got.tasks[19], kind: outcomeDone}})
	require.NoError(t, err)
	assert.Equal(t, 1, res.trimmed)
	assert.Equal(t, ShardStats{Dead: capped}, totals(t, q))
}
