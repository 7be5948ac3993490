package rediswheel

import (
	"context"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/redis/go-redis/v9"
)

// addMode says what add.lua does with a key that exists; lua/add.lua spells
// the same names and rejects any other.
type addMode string

const (
	addNX      addMode = "nx"      // store only a new key (Add)
	addReplace addMode = "replace" // overwrite any key not in flight (Replace)
)

func modeOf(r *durable.AddRequest) addMode {
	if r.Replace {
		return addReplace
	}
	return addNX
}

// timeBase says what a task's time argument to add.lua counts from; the
// script rejects any other.
type timeBase string

const (
	baseAbs timeBase = "abs" // Unix ms
	baseRel timeBase = "rel" // ms after Redis's clock when the script runs
)

func baseOf(r *durable.AddRequest) timeBase {
	if r.Relative {
		return baseRel
	}
	return baseAbs
}

// maxAddBatch caps the tasks of one add script call: each costs about a
// microsecond of Redis time, so a call stays well under a millisecond.
const maxAddBatch = 256

// addStride is the arguments per task of an add call: key, time, payload,
// policy (lua/add.lua).
const addStride = 4

// An addCall is one add script call: tasks of one mode and base, from one
// shard or, on a single server, from several (see sendAdds).
type addCall struct {
	shards []int                 // the shards whose keys it passes, in KEYS order
	counts []int                 // its tasks per shard, in the same order
	reqs   []*durable.AddRequest // its tasks, shard by shard
	cmd    *redis.Cmd
}

// put appends rs, all of shard, to c.
func (c *addCall) put(shard int, rs []*durable.AddRequest) {
	c.shards = append(c.shards, shard)
	c.counts = append(c.counts, len(rs))
	c.reqs = append(c.reqs, rs...)
}

// Add stores reqs with as few script calls as it may, all in one pipeline,
// and sets each request's Status and Err (durable.Store's Add). Requests
// that share a failed call share its error value.
//
// On a cluster a script call must stay in one slot, so there is one call per
// shard, mode and base (and per maxAddBatch tasks). A *redis.Client talks to
// one server, where a script may touch any keys: there one call carries every
// shard's tasks of one mode and base. That is the point of the group commit:
// n concurrent Adds spread over 16 shards cost one script call, not about
// min(n, 16), and a script call costs Redis far more than one more task in
// it (measured in docs/bench/redis.md). A server that refuses keys of several
// slots (a *redis.Client on a cluster node, a proxy) answers CROSSSLOT before
// running anything: the tasks are then sent shard by shard, and this Queue
// never merges shards again.
func (s *Store) Add(ctx context.Context, reqs []*durable.AddRequest) (earliest int64) {
	if err := s.resolve(ctx); err != nil {
		unavailable(&err)
		for _, r := range reqs {
			r.Status, r.Err = 0, err
		}
		return -1
	}
	merge := s.oneServer && !s.split.Load()
	calls := s.addCalls(reqs, merge)
	s.runAdds(ctx, calls)
	if merge {
		var again []*durable.AddRequest
		sent := calls[:0:0]
		for _, c := range calls {
			if redis.HasErrorPrefix(c.cmd.Err(), "CROSSSLOT") {
				again = append(again, c.reqs...)
			} else {
				sent = append(sent, c)
			}
		}
		if len(again) > 0 {
			s.split.Store(true)
			retry := s.addCalls(again, false)
			s.runAdds(ctx, retry)
			calls = append(sent, retry...)
		}
	}
	first := int64(-1)
	for _, c := range calls {
		res, err := c.cmd.Int64Slice()
		if err == nil && len(res) != 1+len(c.reqs) {
			err = fmt.Errorf("unexpected reply %v", res)
		}
		if err != nil {
			switch {
			case len(c.reqs) == 1:
				err = fmt.Errorf("rediswheel: add %q: %w", c.reqs[0].Key, err)
			case len(c.shards) == 1:
				err = fmt.Errorf("rediswheel: add %d tasks to shard %d: %w", len(c.reqs), c.shards[0], err)
			default:
				err = fmt.Errorf("rediswheel: add %d tasks to %d shards: %w", len(c.reqs), len(c.shards), err)
			}
			unavailable(&err)
			for _, r := range c.reqs {
				r.Err = err
			}
			continue
		}
		for j, r := range c.reqs {
			r.Status = durable.AddStatus(res[1+j])
		}
		if res[0] >= 0 && (first < 0 || res[0] < first) {
			first = res[0]
		}
	}
	return first
}

// addCalls splits reqs into script calls of one mode and base and at most
// maxAddBatch tasks: one shard each, or, with merge, any number of shards.
func (s *Store) addCalls(reqs []*durable.AddRequest, merge bool) []*addCall {
	type bucket struct {
		shard int
		mode  addMode
		base  timeBase
	}
	var order []bucket
	byBucket := map[bucket][]*durable.AddRequest{}
	for _, r := range reqs {
		b := bucket{s.shard(r.Key), modeOf(r), baseOf(r)}
		if _, ok := byBucket[b]; !ok {
			order = append(order, b)
		}
		byBucket[b] = append(byBucket[b], r)
	}
	var calls []*addCall
	open := map[bucket]*addCall{}
	for _, b := range order {
		g := b
		if merge {
			g.shard = -1 // one call for all shards
		}
		for rs := byBucket[b]; len(rs) > 0; {
			c := open[g]
			if c == nil || len(c.reqs) == maxAddBatch {
				c = &addCall{}
				open[g] = c
				calls = append(calls, c)
			}
			n := min(len(rs), maxAddBatch-len(c.reqs))
			c.put(b.shard, rs[:n])
			rs = rs[n:]
		}
	}
	return calls
}

// runAdds runs calls, one script call each, in one pipeline (a lone call
// goes out on its own), and leaves each reply in its cmd.
func (s *Store) runAdds(ctx context.Context, calls []*addCall) {
	keys := func(c *addCall) []string {
		if len(c.shards) == 1 {
			return s.keys[c.shards[0]]
		}
		k := make([]string, 0, len(c.shards)*len(s.keys[0]))
		for _, sh := range c.shards {
			k = append(k, s.keys[sh]...)
		}
		return k
	}
	args := func(c *addCall) []any {
		a := make([]any, 0, 2+len(c.shards)+addStride*len(c.reqs))
		a = append(a, string(modeOf(c.reqs[0])), string(baseOf(c.reqs[0])))
		rs := c.reqs
		for _, n := range c.counts {
			a = append(a, n)
			for _, r := range rs[:n] {
				a = append(a, r.Key, r.At, r.Payload, encodePolicy(r.Policy))
			}
			rs = rs[n:]
		}
		return a
	}
	if len(calls) == 1 {
		c := calls[0]
		c.cmd = addScript.Run(ctx, s.client, keys(c), args(c)...)
		return
	}
	exec := func(cs []*addCall) {
		// Exec's own error is the first failed command's; each is checked
		// by the caller.
		_, _ = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range cs {
				c.cmd = addScript.EvalSha(ctx, p, keys(c), args(c)...)
			}
			return nil
		})
	}
	exec(calls)
	// A server that has not seen the script yet (new, restarted, failed
	// over) ran none of those calls: load it and send them again.
	var retry []*addCall
	for _, c := range calls {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			retry = append(retry, c)
		}
	}
	if len(retry) > 0 {
		if err := addScript.Load(ctx, s.client).Err(); err != nil {
			for _, c := range retry {
				c.cmd = redis.NewCmd(ctx)
				c.cmd.SetErr(err)
			}
			return
		}
		exec(retry)
	}
}
