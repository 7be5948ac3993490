package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// world is one test's namespace on one store, and the test's own Queue on
// it.
type world struct {
	target target
	ns     string
	q      *durable.Queue
}

// newWorld makes a fresh namespace on target, deleted when t ends.
func newWorld(t *testing.T, target target) *world {
	var b [4]byte
	rand.Read(b[:])
	w := &world{target: target, ns: "timerd-e2e." + hex.EncodeToString(b[:])}
	st, closeStore := target.open(t, w.ns)
	t.Cleanup(closeStore)
	var err error
	if w.q, err = durable.New(st, durable.Options{}); err != nil {
		t.Fatal(err)
	}
	return w
}

// redisTarget is a Redis server or cluster; the test's Store has the
// shards every timerd of the world gets.
func redisTarget(name, url string, isCluster bool, addrs []string) target {
	flags := []string{"-redis-url", url}
	if isCluster {
		flags = append(flags, "-redis-cluster")
	}
	return target{name: name, flags: flags, open: func(t *testing.T, ns string) (durable.Store, func()) {
		var c redis.UniversalClient
		if isCluster {
			c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
		} else {
			c = redis.NewClient(&redis.Options{Addr: addrs[0]})
		}
		st, err := rediswheel.NewStore(c, ns, shards)
		if err != nil {
			c.Close()
			t.Fatal(err)
		}
		return st, func() {
			deleteKeys(c, ns)
			c.Close()
		}
	}}
}

// deleteKeys deletes every key of namespace ns, on every master.
func deleteKeys(client redis.UniversalClient, ns string) {
	ctx := context.Background()
	del := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, "*"+ns+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		return iter.Err()
	}
	switch c := client.(type) {
	case *redis.ClusterClient:
		c.ForEachMaster(ctx, del)
	case *redis.Client:
		del(ctx, c)
	}
}

// args are the flags every timerd of the world gets, then extra.
func (w *world) args(extra ...string) []string {
	a := append([]string{"-listen", "127.0.0.1:0", "-namespace", w.ns,
		"-shards", "4", "-rate", "0", "-allow-callback", "127.0.0.1/32", "-log-level", "info"}, w.target.flags...)
	return append(a, extra...)
}

func (w *world) tasks(t *testing.T, p *proc) *tasks {
	return &tasks{t: t, base: "http://" + p.addr}
}

func (w *world) stats(t *testing.T) durable.ShardStats {
	st, err := w.q.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Total
}
