package rediswheel

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On a single server one add call carries every shard's tasks of one mode and
// base, grouped by shard; on a cluster each call keeps to one shard. Either
// way a call holds at most maxAddBatch tasks.
func TestAddCallsGroupByShard(t *testing.T) {
	c := redis.NewClient(&redis.Options{}) // never used: addCalls only groups
	t.Cleanup(func() { c.Close() })
	q, err := newTQ(c, Options{Namespace: "unit"})
	require.NoError(t, err)
	var reqs []*durable.AddRequest
	for i := range 300 {
		reqs = append(reqs, &durable.AddRequest{Replace: i%100 == 99, Key: fmt.Sprint("k", i)})
	}
	check := func(calls []*addCall, merge bool) {
		t.Helper()
		n := 0
		for _, c := range calls {
			assert.LessOrEqual(t, len(c.reqs), maxAddBatch)
			require.Len(t, c.counts, len(c.shards))
			if !merge {
				assert.Len(t, c.shards, 1, "one shard per call")
			}
			rs := c.reqs
			for g, s := range c.shards {
				for _, r := range rs[:c.counts[g]] {
					assert.Equal(t, s, q.shard(r.Key), "task %s sent with another shard's keys", r.Key)
					assert.Equal(t, c.reqs[0].Replace, r.Replace, "one mode per call")
				}
				rs = rs[c.counts[g]:]
			}
			assert.Empty(t, rs, "counts cover the call's tasks")
			n += len(c.reqs)
		}
		assert.Equal(t, len(reqs), n)
	}
	merged := q.st.addCalls(reqs, true)
	check(merged, true)
	// 297 nx tasks need two calls of at most 256, the 3 replaces one more.
	assert.Len(t, merged, 3)
	split := q.st.addCalls(reqs, false)
	check(split, false)
	assert.Greater(t, len(split), q.opts.Shards)
}

// Concurrent Adds and an AddBatch on a single server go out as calls that span
// shards: each task must still land in its own shard's keys, whole.
func TestAddAcrossShardsStoresEachInItsShard(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{})
	ctx := context.Background()
	at := time.Now().Add(time.Hour)
	var keys []string
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				k := fmt.Sprint("single-", g, "-", i)
				added, err := q.Add(ctx, k, []byte(k), at, TaskType("t"))
				assert.NoError(t, err)
				assert.True(t, added, k)
			}
		}()
		for i := range 20 {
			keys = append(keys, fmt.Sprint("single-", g, "-", i))
		}
	}
	var items []Item
	for i := range 100 {
		k := fmt.Sprint("batch-", i)
		keys = append(keys, k)
		items = append(items, Item{Key: k, Payload: []byte(k), At: at})
	}
	added, err := q.AddBatch(ctx, items)
	require.NoError(t, err)
	for i, ok := range added {
		assert.True(t, ok, items[i].Key)
	}
	awaitDone(t, "the adders", wg.Wait)
	assert.False(t, q.st.split.Load(), "a single server takes calls across shards")
	for _, k := range keys {
		sk := q.keys[q.shard(k)]
		assert.NoError(t, c.ZScore(ctx, sk[0], k).Err(), "%s in its shard's due", k)
		assert.Equal(t, k, c.HGet(ctx, sk[3], k).Val(), "%s payload in its shard's body", k)
		assert.NotEmpty(t, c.HGet(ctx, sk[4], "m|"+k).Val(), "%s record in its shard's ctl", k)
	}
	assert.Equal(t, ShardStats{Scheduled: int64(len(keys))}, totals(t, q))
	info, err := q.Get(ctx, "single-3-7")
	require.NoError(t, err)
	assert.Equal(t, "t", info.Type)
}

// A *redis.Client on one node of a cluster looks like a single server, but the
// node refuses a call whose keys span slots (CROSSSLOT, before running
// anything): the Queue falls back to one call per shard for good. Shards whose
// slots live on other nodes then fail with MOVED, which a plain client does not
// follow; the others are stored.
func TestAddSplitsOnCrossSlot(t *testing.T) {
	addr := strings.Split(envOrSkip(t, "REDISWHEEL_CLUSTER_ADDRS"), ",")[0]
	node := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { node.Close() })
	q := newQueue(t, cluster(t), Options{})
	onNode, err := newTQ(node, q.opts)
	require.NoError(t, err)
	require.True(t, onNode.st.oneServer)
	ctx := context.Background()
	// The layout record's slot may be another node's: take the layout the
	// cluster client read.
	require.NoError(t, q.st.resolve(ctx))
	onNode.st.keys = q.st.keys
	onNode.st.layout.done.Store(true)
	var items []Item
	for i := range 64 {
		items = append(items, Item{Key: fmt.Sprint("k", i), Payload: []byte("p"), At: time.Now().Add(time.Hour)})
	}
	added, err := onNode.AddBatch(ctx, items)
	assert.True(t, onNode.st.split.Load(), "CROSSSLOT turns merging off")
	require.Error(t, err, "a plain client cannot reach the other masters' shards")
	assert.NotContains(t, err.Error(), "CROSSSLOT")
	assert.Contains(t, err.Error(), "MOVED")
	stored := 0
	for i, ok := range added {
		if ok {
			stored++
			assert.Equal(t, "p", q.client.HGet(ctx, q.keys[q.shard(items[i].Key)][3], items[i].Key).Val())
		}
	}
	assert.Positive(t, stored, "this node's shards are stored")
	assert.Equal(t, ShardStats{Scheduled: int64(stored)}, totals(t, q))
}
