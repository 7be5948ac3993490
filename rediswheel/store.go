package rediswheel

import (
	"fmt"
	"sync/atomic"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/redis/go-redis/v9"
)

// Store is the Redis store of package durable: its operations are the Lua
// scripts of lua/, one per operation, run on the shards of one namespace.
// Each shard is a durable partition, hash-tagged to one cluster slot. Make
// one with NewStore, and a Queue on it with durable.New (or both at once
// with New).
type Store struct {
	client redis.UniversalClient
	ns     string
	keys   [][]string // keys[shard], in the namespace's layout once resolved (layout.go)
	layout layout
	// oneServer: client is a *redis.Client, so every shard is on one server
	// and one add call may span shards (see Add).
	oneServer bool
	// split is set once the server refused an add call that spans shards
	// (CROSSSLOT): from then on each call keeps to one shard. See Add.
	split atomic.Bool
}

var _ durable.Store = (*Store)(nil)

// NewStore returns the store of namespace ns, in shards shards (0 means
// DefaultShards), through client, which may be a *redis.Client, a
// *redis.ClusterClient or any other UniversalClient. It makes no call to
// Redis: the first operation reads the namespace's layout (layout.go). The errors it returns wrap ErrNamespace or ErrOptions.
//
// Every process that shares a namespace must use the same shards: a task's
// shard is hash(key) mod shards, so a process with another count looks for
// keys in the wrong shards. More shards spread a namespace over more cluster
// masters; each idle Run polls every shard about once a PollInterval.
func NewStore(client redis.UniversalClient, ns string, shards int) (*Store, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrOptions)
	}
	if err := checkNamespace(ns); err != nil {
		return nil, err
	}
	if shards < 0 || shards > MaxShards {
		return nil, fmt.Errorf("%w: Shards %d (want 0..%d)", ErrOptions, shards, MaxShards)
	}
	if shards == 0 {
		shards = DefaultShards
	}
	s := &Store{client: client, ns: ns}
	_, s.oneServer = client.(*redis.Client)
	for i := range shards {
		s.keys = append(s.keys, spreadKeys(ns, i, shards))
		s.layout.old = append(s.layout.old, shardKeys(ns, i))
	}
	return s, nil
}

// Partitions is the number of shards.
func (s *Store) Partitions() int { return len(s.keys) }

// shard maps a key to its shard: FNV-1a of the key, mod the shards. The
// mapping is part of the data layout and must never change.
func (s *Store) shard(key string) int {
	// FNV-1a inline: hash/fnv would allocate for every key.
	const offset32, prime32 = 2166136261, 16777619
	h := uint32(offset32)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= prime32
	}
	return int(h % uint32(len(s.keys)))
}

// Partition is durable.Partitioner's Partition: the shard of key.
func (s *Store) Partition(key string) int { return s.shard(key) }

var _ durable.Partitioner = (*Store)(nil)
