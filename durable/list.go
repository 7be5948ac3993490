package durable

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxListLimit caps the tasks of one List page; a larger limit is lowered to
// it.
const MaxListLimit = 1000

// List pages through the tasks in state across all partitions, in the order of
// their time in that state, earliest first: due time (scheduled,
// retrying), lease end (in flight), death (dead), end of retention (done,
// cancelled); tasks with equal times in key order (bytewise). Pass "" as
// cursor for the first page and the returned next for each following one,
// until next is "". limit must be at least 1; above MaxListLimit it is
// lowered to it. A page may hold fewer than limit tasks, even none, while
// next is not "": for scheduled, retrying, done and cancelled each partition
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
// Cost on Redis: two round trips, one pipeline each: the first runs a script on
// every shard that reads about limit members after the cursor (up to
// max(limit, 256) when the state shares its set), the second reads the page's
// tasks as Get does. Measured on 16 shards, a page of 100 scheduled tasks
// takes ~4 ms of Redis CPU, one of 10 ~1 ms (rediswheel's TestInspectionCost).
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
	var after *ListPos
	if cursor != "" {
		pos, err := decodeCursor(state, cursor)
		if err != nil {
			return nil, "", err
		}
		after = &pos
	}
	tasks, nextPos, err := q.store.List(ctx, state, after, limit)
	if err != nil {
		return nil, "", err
	}
	if nextPos != nil {
		next = encodeCursor(state, *nextPos)
	}
	return tasks, next, nil
}

// parseScore parses a cursor's time, written as a decimal integer (a Redis
// score before stores existed, so a float is read too).
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

// cursorVersion starts every cursor's text, so that a later format can
// tell old cursors apart.
const cursorVersion = "1"

// encodeCursor makes the cursor after pos: base64 (URL alphabet, no padding)
// of "1|<state>|<score>|<key>". Callers must treat it as opaque.
func encodeCursor(state State, pos ListPos) string {
	text := cursorVersion + "|" + string(state) + "|" + strconv.FormatInt(pos.At, 10) + "|" + pos.Key
	return base64.RawURLEncoding.EncodeToString([]byte(text))
}

func decodeCursor(state State, cursor string) (ListPos, error) {
	bad := func(why string) (ListPos, error) {
		return ListPos{}, fmt.Errorf("%w: %s", ErrCursor, why)
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
	return ListPos{At: int64(score), Key: parts[3]}, nil
}
