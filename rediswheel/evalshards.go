package rediswheel

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// A shardCall is one script call on one shard, for evalShards.
type shardCall struct {
	shard int
	args  []any
	cmd   *redis.Cmd // its reply, set by evalShards
}

// evalShards runs script once per call, all calls in one pipeline (a lone
// call goes out on its own), and leaves each reply in its cmd. On a cluster
// the pipeline is split by node, one round trip per master, in parallel.
func (s *Store) evalShards(ctx context.Context, script *redis.Script, calls []*shardCall) {
	if len(calls) == 1 {
		c := calls[0]
		c.cmd = script.Run(ctx, s.client, s.keys[c.shard], c.args...)
		return
	}
	exec := func(cs []*shardCall) {
		// Exec's own error is the first failed command's; each is checked
		// by the caller.
		_, _ = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range cs {
				c.cmd = script.EvalSha(ctx, p, s.keys[c.shard], c.args...)
			}
			return nil
		})
	}
	exec(calls)
	// A server that has not seen the script yet (new, restarted, failed
	// over) ran none of those calls: load it and send them again.
	var retry []*shardCall
	for _, c := range calls {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			retry = append(retry, c)
		}
	}
	if len(retry) == 0 {
		return
	}
	if err := script.Load(ctx, s.client).Err(); err != nil {
		for _, c := range retry {
			c.cmd = redis.NewCmd(ctx)
			c.cmd.SetErr(err)
		}
		return
	}
	exec(retry)
}
