package rediswheel

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

const (
	// MaxListLimit caps the tasks of one List page; a larger limit is
	// lowered to it.
	MaxListLimit = 1000
	// listScan is how many members of the due or kept set each shard
	// examines per page when listing a state that shares its set (scheduled
	// and retrying, done and cancelled), so that a page of a rare state
	// among many of the other costs a bounded script: ~0.4 ms of Redis CPU
	// per shard (6 ms for a page over 16 shards, TestInspectionCost), well
	// under the ~1 ms a full claim takes.
	listScan = 256
)

// List pages through the tasks in state across all shards, in the order of
// their time in that state, earliest first: due time (scheduled,
// retrying), lease end (in flight), death (dead), end of retention (done,
// cancelled); tasks with equal times in key order (bytewise). Pass "" as
// cursor for the first page and the returned next for each following one,
// until next is "". limit must be at least 1; above MaxListLimit it is
// lowered to it. A page may hold fewer than limit tasks, even none, while
// next is not "": for scheduled, retrying, done and cancelled each shard
// examines a bounded stretch of its set per page. The last page may be empty.
//
// Concurrent changes: the cursor is a position (time, key), not a snapshot.
// A task that stays in state with the same time from the first page to the
// last is returned exactly once. A task that enters, leaves or moves during
// the listing may be returned once, twice (moved later) or not at all (moved
// before the cursor): a retry, a Reschedule, a Replace. Leases of running
// handlers move later at each heartbeat, so a listing of in flight tasks may
// return a long-running one twice, but never misses one that stays in
// flight. A task is returned as read just after its position was chosen, so
// its Due may already differ from the time it was ordered by; one that left
// state in between is left out of the page.
//
// Cost: two round trips, one pipeline each: the first runs a script on
// every shard that reads about limit members after the cursor (up to
// max(limit, 256) when the state shares its set), the second reads the page's
// tasks as Get does. Measured on 16 shards, a page of 100 scheduled tasks
// takes ~4 ms of Redis CPU, one of 10 ~1 ms (TestInspectionCost).
//
// An unknown state returns an error wrapping ErrState, a limit below 1
// ErrLimit, and a cursor not made by List for this state ErrCursor.
func (q *Queue) List(ctx context.Context, state State, cursor string, limit int) (tasks []TaskInfo, next string, err error) {
	if !state.valid() {
		return nil, "", fmt.Errorf("%w: %q", ErrState, state)
	}
	if limit < 1 {
		return nil, "", fmt.Errorf("%w: %d", ErrLimit, limit)
	}
	limit = min(limit, MaxListLimit)
	afterScore, afterKey := "", ""
	if cursor != "" {
		after, err := decodeCursor(state, cursor)
		if err != nil {
			return nil, "", err
		}
		afterScore, afterKey = formatScore(after.score), after.key
	}

	// First the positions: each shard's next matches after the cursor.
	calls := make([]*shardCall, len(q.keys))
	for i := range calls {
		calls[i] = &shardCall{shard: i, args: []any{string(state), afterScore, afterKey, limit, max(limit, listScan)}}
	}
	q.evalShards(ctx, listScript, calls)
	var found []listPos
	var bound *listPos // nothing beyond it is known to be complete
	for _, c := range calls {
		pos, stop, err := decodeListReply(c)
		if err != nil {
			return nil, "", fmt.Errorf("rediswheel: list %s shard %d: %w", state, c.shard, err)
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
		next = encodeCursor(state, found[n-1])
	case bound != nil:
		next = encodeCursor(state, *bound)
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
	q.evalShards(ctx, getScript, gets)
	infos := map[string]*TaskInfo{}
	for _, c := range gets {
		v, err := c.cmd.Slice()
		var got []*TaskInfo
		if err == nil {
			got, err = decodeInfos(v)
		}
		if err != nil {
			return nil, "", fmt.Errorf("rediswheel: list %s shard %d: %w", state, c.shard, err)
		}
		for _, info := range got {
			if info != nil && info.State == state {
				infos[info.Key] = info
			}
		}
	}
	tasks = make([]TaskInfo, 0, n)
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

// formatScore writes a score back for Redis exactly, never in exponent
// notation (which ZCOUNT would take, but a human reading a cursor not).
func formatScore(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// cursorVersion starts every cursor's text, so that a later format can
// tell old cursors apart.
const cursorVersion = "1"

// encodeCursor makes the cursor after pos: base64 (URL alphabet, no padding)
// of "1|<state>|<score>|<key>". Callers must treat it as opaque.
func encodeCursor(state State, pos listPos) string {
	text := cursorVersion + "|" + string(state) + "|" + formatScore(pos.score) + "|" + pos.key
	return base64.RawURLEncoding.EncodeToString([]byte(text))
}

func decodeCursor(state State, cursor string) (listPos, error) {
	bad := func(why string) (listPos, error) {
		return listPos{}, fmt.Errorf("%w: %s", ErrCursor, why)
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return bad("not base64")
	}
	parts := strings.SplitN(string(b), "|", 4)
	if len(parts) != 4 || parts[0] != cursorVersion {
		return bad("not a List cursor")
	}
	if State(parts[1]) != state {
		return bad(fmt.Sprintf("made for state %q, not %q", parts[1], state))
	}
	score, err := parseScore(parts[2])
	if err != nil || checkKey(parts[3]) != nil {
		return bad("malformed position")
	}
	return listPos{score: score, key: parts[3]}, nil
}
