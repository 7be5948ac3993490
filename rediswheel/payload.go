package rediswheel

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Payload returns the payload stored with the task under key while it is
// scheduled, retrying, in flight or dead; empty for a finished task still
// retained (its payload is freed when it finishes, lua/common.lua's
// retire); nil, nil if the key is in no state. It is the Redis store's own
// read, not part of durable.Store (whose Get leaves payloads out, so that
// listings stay cheap): one HGET of the shard's body hash, which holds a
// field exactly while the key is in some state (lua/keys.lua).
func (s *Store) Payload(ctx context.Context, key string) ([]byte, error) {
	if err := s.resolve(ctx); err != nil {
		return nil, err
	}
	b, err := s.client.HGet(ctx, s.keys[s.shard(key)][3], key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rediswheel: payload %q: %w", key, err)
	}
	return b, nil
}
