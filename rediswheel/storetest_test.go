package rediswheel

import (
	"context"
	"testing"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/durable/storetest"
	"github.com/redis/go-redis/v9"
)

// The delivery contract's behavioural suite, on a single server and on the
// 3-master cluster, with 4 shards so that keys spread over partitions (and,
// on the cluster, over masters).
func TestStoreContract(t *testing.T) {
	for name, client := range map[string]func(testing.TB) redis.UniversalClient{
		"standalone": func(t testing.TB) redis.UniversalClient { return standalone(t) },
		"cluster":    func(t testing.TB) redis.UniversalClient { return cluster(t) },
	} {
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) durable.Store {
				c := client(t)
				st, err := NewStore(c, uniqueNamespace(t), 4)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					ctx := context.Background()
					for _, keys := range st.keys {
						c.Del(ctx, keys...)
					}
					c.Del(ctx, st.registryKey())
				})
				return st
			})
		})
	}
}
