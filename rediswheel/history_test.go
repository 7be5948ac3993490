package rediswheel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// delivered makes sure d's current delivery record c| is there, as claim.lua
// writes it ("attempt|start ms|worker"), and returns it. Where claim already
// wrote it for this attempt it is left alone.
func delivered(t *testing.T, q *testQueue, d *delivery) string {
	t.Helper()
	ctx := context.Background()
	ctl := q.keys[d.shard][4]
	c, _ := q.client.HGet(ctx, ctl, "c|"+d.task.Key).Result()
	if !strings.HasPrefix(c, fmt.Sprint(d.task.Attempt, "|")) {
		c = fmt.Sprintf("%d|%d|test-worker", d.task.Attempt, time.Now().UnixMilli())
		require.NoError(t, q.client.HSet(ctx, ctl, "c|"+d.task.Key, c).Err())
	}
	return c
}

// history reads key's delivery history, h| in ctl.
func history(t *testing.T, q *testQueue, key string) [][]any {
	t.Helper()
	h, err := q.client.HGet(context.Background(), q.keys[q.shard(key)][4], "h|"+key).Result()
	require.NoError(t, err)
	var list [][]any
	require.NoError(t, json.Unmarshal([]byte(h), &list))
	return list
}

// Every settled delivery is remembered with its outcome, newest HistoryLen
// kept; a cancelled delivery reads as cancelled whatever its handler said.
func TestSettleRemembersDeliveries(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1, HistoryLen: 3, Retention: time.Hour})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", []byte("p"), time.Now().Add(-time.Second))
	require.NoError(t, err)

	steps := []struct {
		kind durable.OutcomeKind
		err  string
		want settleCode
	}{
		{outcomeRetry, "boom", settleRetry},
		{outcomeLater, "busy", settlePostponed},
		{outcomeRelease, "", settleReleased},
		{outcomeDone, "", settleDone},
	}
	var records []string
	for _, s := range steps {
		got, err := q.claim(ctx, 0, 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, got.tasks, 1)
		d := got.tasks[0]
		records = append(records, delivered(t, q, d))
		res, err := q.settle(ctx, 0, []outcome{{d: d, kind: s.kind, err: s.err}})
		require.NoError(t, err)
		require.Equal(t, []settleCode{s.want}, res.codes, "%s", s.kind)
	}
	h := history(t, q, "k")
	require.Len(t, h, 3, "HistoryLen keeps the newest 3")
	for i, s := range steps[1:] {
		rec := strings.SplitN(records[i+1], "|", 3) // attempt, start ms, worker
		e := h[i]
		require.Len(t, e, 6)
		assert.Equal(t, rec[0], fmt.Sprint(e[0]), "attempt")
		assert.Equal(t, float64(2), e[0], "a retry counts, later and release do not")
		assert.Equal(t, rec[2], e[1], "worker")
		assert.Equal(t, rec[1], fmt.Sprintf("%.0f", e[2]), "start")
		assert.GreaterOrEqual(t, e[3].(float64), e[2].(float64), "ends after it starts")
		assert.Equal(t, string(s.kind), e[4])
		assert.Equal(t, s.err, e[5])
	}

	// Cancelled in flight: recorded when it settles, as cancelled.
	_, err = q.Add(ctx, "x", []byte("p"), time.Now().Add(-time.Second))
	require.NoError(t, err)
	got, err := q.claim(ctx, 0, 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, got.tasks, 1)
	delivered(t, q, got.tasks[0])
	ok, err := q.Cancel(ctx, "x")
	require.NoError(t, err)
	require.True(t, ok)
	res, err := q.settle(ctx, 0, []outcome{{d: got.tasks[0], kind: outcomeRetry, err: "ctx cancelled"}})
	require.NoError(t, err)
	require.Equal(t, []settleCode{settleCancelled}, res.codes)
	h = history(t, q, "x")
	require.Len(t, h, 1)
	assert.Equal(t, "cancelled", h[0][4])
	assert.Equal(t, "ctx cancelled", h[0][5])
}

// A stale settle is not remembered: the history holds only deliveries that
// were applied.
func TestStaleSettleIsNotRemembered(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1})
	ctx := context.Background()
	d := claimOne(t, q, "k")
	delivered(t, q, d)
	stale := &delivery{shard: d.shard, token: "0", task: d.task}
	res, err := q.settle(ctx, 0, []outcome{{d: stale, kind: outcomeRetry, err: "late"}})
	require.NoError(t, err)
	require.Equal(t, []settleCode{settleRejected}, res.codes)
	assert.Zero(t, c.HExists(ctx, q.keys[0][4], "h|k").Val())
	res, err = q.settle(ctx, 0, []outcome{{d: d, kind: outcomeRetry, err: "e"}})
	require.NoError(t, err)
	require.Equal(t, []settleCode{settleRetry}, res.codes)
	assert.Len(t, history(t, q, "k"), 1)
}
