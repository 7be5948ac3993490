package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// world is one test's namespace on one Redis, and the test's own client
// and Queue on it.
type world struct {
	target redisTarget
	ns     string
	client redis.UniversalClient
	q      *rediswheel.Queue
}

// newWorld makes a fresh namespace on target, deleted when t ends.
func newWorld(t *testing.T, target redisTarget) *world {
	var b [4]byte
	rand.Read(b[:])
	w := &world{target: target, ns: "timerd-e2e." + hex.EncodeToString(b[:])}
	if target.cluster {
		w.client = redis.NewClusterClient(&redis.ClusterOptions{Addrs: target.addrs})
	} else {
		w.client = redis.NewClient(&redis.Options{Addr: target.addrs[0]})
	}
	var err error
	if w.q, err = rediswheel.New(w.client, rediswheel.Options{Namespace: w.ns, Shards: shards}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.deleteKeys()
		w.client.Close()
	})
	return w
}

// deleteKeys deletes every key of the namespace, on every master.
func (w *world) deleteKeys() {
	ctx := context.Background()
	del := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, "*"+w.ns+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		return iter.Err()
	}
	switch c := w.client.(type) {
	case *redis.ClusterClient:
		c.ForEachMaster(ctx, del)
	case *redis.Client:
		del(ctx, c)
	}
}

// args are the flags every timerd of the world gets, then extra.
func (w *world) args(extra ...string) []string {
	a := []string{"-listen", "127.0.0.1:0", "-redis-url", w.target.url, "-namespace", w.ns,
		"-shards", "4", "-rate", "0", "-allow-callback", "127.0.0.1/32", "-log-level", "info"}
	if w.target.cluster {
		a = append(a, "-redis-cluster")
	}
	return append(a, extra...)
}

func (w *world) tasks(t *testing.T, p *proc) *tasks {
	return &tasks{t: t, base: "http://" + p.addr}
}

func (w *world) stats(t *testing.T) rediswheel.ShardStats {
	st, err := w.q.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Total
}
