package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every operation and a full run on Redis Cluster: each script touches the
// keys of one shard, which share a hash tag and so one slot, and the shards
// spread over the masters.
func TestCluster(t *testing.T) {
	c := cluster(t)
	q := newQueue(t, c, Options{Lease: time.Second, MaxAttempts: 2, Backoff: func(int) time.Duration { return 0 }})
	ctx := context.Background()

	masters := map[string]bool{}
	for _, keys := range q.keys {
		slot, err := c.ClusterKeySlot(ctx, keys[0]).Result()
		require.NoError(t, err)
		for _, k := range keys[1:] {
			assert.Equal(t, slot, c.ClusterKeySlot(ctx, k).Val(), "the keys of a shard share a slot")
		}
		node, err := c.MasterForKey(ctx, keys[0])
		require.NoError(t, err)
		masters[node.Options().Addr] = true
	}
	assert.GreaterOrEqual(t, len(masters), 2, "a namespace spreads over the masters")

	added, err := q.Add(ctx, "dup", []byte("a"), time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.True(t, added)
	added, err = q.Add(ctx, "dup", []byte("b"), time.Now())
	require.NoError(t, err)
	assert.False(t, added)
	ok, err := q.Cancel(ctx, "dup")
	require.NoError(t, err)
	assert.True(t, ok)
	require.NoError(t, q.Replace(ctx, "later", nil, time.Now().Add(time.Hour)))
	_, err = q.AddAfter(ctx, "after", nil, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, ShardStats{Scheduled: 2}, totals(t, q))

	const n = 2000
	for i := range n {
		_, err := q.Add(ctx, fmt.Sprint("k", i), nil, time.Now().Add(-time.Second))
		require.NoError(t, err)
	}
	_, err = q.Add(ctx, "bad", nil, time.Now())
	require.NoError(t, err)
	var rec recorder
	rec.reply = func(ctx context.Context, tk Task) error {
		if tk.Key == "bad" {
			return Permanent(errors.New("refused"))
		}
		return nil
	}
	run(t, q, rec.handle)
	eventually(t, 30*time.Second, "the run", func() bool { return totals(t, q) == ShardStats{Scheduled: 2, Dead: 1} })
	assert.Equal(t, n+1, rec.count())

	dead, err := q.Dead(ctx, 10)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, "refused", dead[0].LastError)
	ok, err = q.Requeue(ctx, "bad")
	require.NoError(t, err)
	assert.True(t, ok)
	eventually(t, patience, "the requeued task", func() bool { return totals(t, q) == ShardStats{Scheduled: 2, Dead: 1} && rec.count() == n+2 })
	ok, err = q.Cancel(ctx, "bad")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = q.Cancel(ctx, "later")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = q.Cancel(ctx, "after")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Zero(t, leftovers(t, q))
}
