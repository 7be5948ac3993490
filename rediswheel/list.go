package rediswheel

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-timingwheel/timingwheel/durable"
)

// listScan is how many members of the due or kept set each shard examines
// per page when listing a state that shares its set (scheduled and
// retrying, done and cancelled), so that a page of a rare state among many
// of the other costs a bounded script: ~0.4 ms of Redis CPU per shard (6 ms
// for a page over 16 shards, TestInspectionCost), well under the ~1 ms a
// full claim takes.
const listScan = 256

// List is durable.Store's List, in two round trips, one pipeline each: the
// first runs lua/list.lua on every shard, which reads about limit members
// after the position (up to max(limit, listScan) when the state shares its
// set), the second reads the page's tasks with lua/get.lua, as Get does.
// Measured on 16 shards, a page of 100 scheduled tasks takes ~4 ms of Redis
// CPU, one of 10 ~1 ms (TestInspectionCost).
func (s *Store) List(ctx context.Context, state durable.State, after *durable.ListPos, limit int) (tasks []durable.TaskInfo, next *durable.ListPos, err error) {
	defer unavailable(&err)
	if err := s.resolve(ctx); err != nil {
		return nil, nil, err
	}
	afterScore, afterKey := "", ""
	if after != nil {
		afterScore, afterKey = strconv.FormatInt(after.At, 10), after.Key
	}

	// First the positions: each shard's next matches after the cursor.
	calls := make([]*shardCall, len(s.keys))
	for i := range calls {
		calls[i] = &shardCall{shard: i, args: []any{string(state), afterScore, afterKey, limit, max(limit, listScan)}}
	}
	s.evalShards(ctx, listScript, calls)
	var found []listPos
	var bound *listPos // nothing beyond it is known to be complete
	for _, c := range calls {
		pos, stop, err := decodeListReply(c)
		if err != nil {
			return nil, nil, fmt.Errorf("rediswheel: list %s shard %d: %w", state, c.shard, err)
		}
		found = append(found, pos...)
		if stop != nil && (bound == nil || stop.compare(*bound) < 0) {
			bound = stop
		}
	}
	// The merge: every match up to the nearest shard's stop is known, and
	// each shard's matches come in order, so the first limit of the union
	// up to bound are the first limit overall.
	slices.SortFunc(found, listPos.compare)
	n := 0
	for n < len(found) && n < limit && (bound == nil || found[n].compare(*bound) <= 0) {
		n++
	}
	found = found[:n]
	switch {
	case n == limit:
		next = found[n-1].pos()
	case bound != nil:
		next = bound.pos()
	}
	if n == 0 {
		return nil, next, nil
	}

	// Then the tasks at those positions, one get call per shard.
	byShard := map[int]*shardCall{}
	var gets []*shardCall
	for _, p := range found {
		c := byShard[p.shard]
		if c == nil {
			c = &shardCall{shard: p.shard}
			byShard[p.shard] = c
			gets = append(gets, c)
		}
		c.args = append(c.args, p.key)
	}
	s.evalShards(ctx, getScript, gets)
	infos := map[string]*durable.TaskInfo{}
	for _, c := range gets {
		v, err := c.cmd.Slice()
		var got []*durable.TaskInfo
		if err == nil {
			got, err = decodeInfos(v)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("rediswheel: list %s shard %d: %w", state, c.shard, err)
		}
		for _, info := range got {
			if info != nil && info.State == state {
				infos[info.Key] = info
			}
		}
	}
	tasks = make([]durable.TaskInfo, 0, n)
	for _, p := range found {
		if info := infos[p.key]; info != nil {
			tasks = append(tasks, *info)
		}
	}
	return tasks, next, nil
}

// listPos is a task's position in a List: its score in the state's sorted
// set (a time in ms), then its key.
type listPos struct {
	score float64
	key   string
	shard int
}

// pos is p as a durable position; scores are whole ms.
func (p listPos) pos() *durable.ListPos {
	return &durable.ListPos{At: int64(p.score), Key: p.key}
}

func (a listPos) compare(b listPos) int {
	if c := cmp.Compare(a.score, b.score); c != 0 {
		return c
	}
	return strings.Compare(a.key, b.key)
}

// decodeListReply decodes one shard's reply of lua/list.lua: its matches,
// and the position past which it has not looked (nil if it looked to the
// end).
func decodeListReply(c *shardCall) (found []listPos, stop *listPos, err error) {
	v, err := c.cmd.StringSlice()
	if err == nil && (len(v) < 3 || len(v)%2 != 1) {
		err = fmt.Errorf("unexpected reply %v", v)
	}
	if err != nil {
		return nil, nil, err
	}
	for i := 3; i < len(v); i += 2 {
		s, err := parseScore(v[i+1])
		if err != nil {
			return nil, nil, err
		}
		found = append(found, listPos{score: s, key: v[i], shard: c.shard})
	}
	switch v[0] {
	case "end":
		return found, nil, nil
	case "full":
		if len(found) == 0 {
			return nil, nil, fmt.Errorf("unexpected reply %v", v)
		}
		return found, &found[len(found)-1], nil
	case "budget":
		s, err := parseScore(v[1])
		if err != nil {
			return nil, nil, err
		}
		return found, &listPos{score: s, key: v[2], shard: c.shard}, nil
	}
	return nil, nil, fmt.Errorf("unexpected reply %v", v)
}

// parseScore parses a sorted-set score: always a finite number here.
func parseScore(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		err = errors.New("not finite")
	}
	if err != nil {
		return 0, fmt.Errorf("score %q: %w", s, err)
	}
	return f, nil
}
