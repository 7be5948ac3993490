package schedules

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// redisDefinitions keeps the definitions in one HASH beside the Queue's
// keys, {<namespace>.timerd}:schedules (one slot, so a cluster serves it
// from one shard); MULTI makes each read-and-write atomic.
type redisDefinitions struct {
	client redis.UniversalClient
	key    string
}

// RedisDefinitions returns the Definitions of namespace on client. It
// panics on a nil client: a mistake in the program.
func RedisDefinitions(client redis.UniversalClient, namespace string) Definitions {
	if client == nil {
		panic("schedules.RedisDefinitions: nil client")
	}
	return &redisDefinitions{client: client, key: "{" + namespace + ".timerd}:schedules"}
}

func (r *redisDefinitions) Swap(ctx context.Context, name string, raw []byte) ([]byte, error) {
	var old *redis.StringCmd
	_, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		old = p.HGet(ctx, r.key, name)
		p.HSet(ctx, r.key, name, raw)
		return nil
	})
	return nilIfMissing(old, err)
}

func (r *redisDefinitions) Get(ctx context.Context, name string) ([]byte, error) {
	raw, err := r.client.HGet(ctx, r.key, name).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return raw, err
}

func (r *redisDefinitions) All(ctx context.Context) (map[string][]byte, error) {
	m, err := r.client.HGetAll(ctx, r.key).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(m))
	for name, raw := range m {
		out[name] = []byte(raw)
	}
	return out, nil
}

func (r *redisDefinitions) Delete(ctx context.Context, name string) ([]byte, error) {
	var old *redis.StringCmd
	_, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		old = p.HGet(ctx, r.key, name)
		p.HDel(ctx, r.key, name)
		return nil
	})
	return nilIfMissing(old, err)
}

// nilIfMissing is the value a pipelined HGET read, nil if the field was
// missing (the pipeline's error is then redis.Nil, from that HGET).
func nilIfMissing(old *redis.StringCmd, err error) ([]byte, error) {
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	raw, err := old.Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return raw, err
}
