package rediswheel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Get reads the task under key in one script call (durable.Store's Get);
// nil if it is in no state.
func (s *Store) Get(ctx context.Context, key string) (_ *durable.TaskInfo, err error) {
	defer unavailable(&err)
	if err := s.resolve(ctx); err != nil {
		return nil, err
	}
	v, err := getScript.Run(ctx, s.client, s.keys[s.shard(key)], key).Slice()
	var infos []*durable.TaskInfo
	if err == nil {
		infos, err = decodeInfos(v)
	}
	if err == nil && len(infos) != 1 {
		err = fmt.Errorf("unexpected reply %v", v)
	}
	if err != nil {
		return nil, fmt.Errorf("rediswheel: get %q: %w", key, err)
	}
	return infos[0], nil
}

// getStride is the number of values lua/get.lua returns per key.
const getStride = 11

// decodeInfos decodes a reply of lua/get.lua: one TaskInfo per key asked
// for, nil for a key in no state.
func decodeInfos(v []any) ([]*durable.TaskInfo, error) {
	if len(v)%getStride != 0 {
		return nil, fmt.Errorf("unexpected reply %v", v)
	}
	var out []*durable.TaskInfo
	for i := 0; i < len(v); i += getStride {
		info, err := decodeInfo(v[i : i+getStride])
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// decodeInfo decodes one key's values of a get reply (see lua/get.lua).
func decodeInfo(v []any) (*durable.TaskInfo, error) {
	var s [getStride - 1]string
	for i := range s {
		s[i], _ = v[i].(string)
	}
	if s[1] == "" {
		return nil, nil
	}
	bodyLen, ok := v[getStride-1].(int64)
	if !ok {
		return nil, fmt.Errorf("unexpected payload length %v", v[getStride-1])
	}
	key, where, score := s[0], s[1], s[2]
	a, e, m, c, h, f, r := s[3], s[4], s[5], s[6], s[7], s[8], s[9]
	bad := func(what, text string) (*durable.TaskInfo, error) {
		return nil, fmt.Errorf("task %q: malformed %s %q", key, what, text)
	}
	at, err := strconv.ParseFloat(score, 64)
	if err != nil {
		return bad("score", score)
	}
	info := &durable.TaskInfo{Key: key, LastError: e, PayloadSize: int(bodyLen)}
	if a != "" {
		if info.Attempts, err = strconv.Atoi(a); err != nil {
			return bad("attempts", a)
		}
	}
	if r != "" {
		if info.Postponements, err = strconv.Atoi(r); err != nil {
			return bad("postponements", r)
		}
	}
	switch where {
	case "due":
		info.State, info.Due = durable.StateScheduled, msTime(int64(at))
		if info.Attempts > 0 || e != "" {
			info.State = durable.StateRetrying
		}
	case "lease":
		info.State, info.Due = durable.StateInFlight, msTime(int64(at))
	case "dead":
		info.State, info.Finished = durable.StateDead, msTime(int64(at))
	case "kept":
		// f| is "<state>|<finish ms>", written by settle and cancel. A
		// retained task without it (which they never leave) reads as done.
		info.State = durable.StateDone
		if f != "" {
			st, ms, ok := strings.Cut(f, "|")
			finish, err := strconv.ParseInt(ms, 10, 64)
			if !ok || err != nil || (durable.State(st) != durable.StateDone && durable.State(st) != durable.StateCancelled) {
				return bad("finished record", f)
			}
			info.State, info.Finished = durable.State(st), msTime(finish)
		}
	default:
		return nil, fmt.Errorf("task %q: unknown place %q", key, where)
	}
	if m != "" && decodeRecord(info, m) != nil {
		return bad("task record", m)
	}
	if c != "" {
		// c| is "<attempt>|<start ms>|<worker id>", written by claim.
		parts := strings.SplitN(c, "|", 3)
		var start int64
		if len(parts) == 3 {
			start, err = strconv.ParseInt(parts[1], 10, 64)
		}
		if len(parts) != 3 || err != nil {
			return bad("current delivery", c)
		}
		info.Started = msTime(start)
	}
	if h != "" {
		if info.History, err = decodeHistory(h); err != nil {
			return bad("history", h)
		}
	}
	return info, nil
}

// decodeRecord fills info from a task record, the ctl field m| (parsed by
// parseRecord, record.go, which knows its format).
func decodeRecord(info *durable.TaskInfo, m string) error {
	r, err := parseRecord(m)
	if err != nil {
		return err
	}
	info.Added, info.OriginalDue = msTime(r.added), msTime(r.originalDue)
	// The record's size holds even if a retained task's payload was dropped.
	info.PayloadSize = int(r.payloadSize)
	info.Timeout = r.policy.Timeout
	info.MaxAttempts = r.policy.MaxAttempts
	info.BackoffBase, info.BackoffLimit = r.policy.BackoffBase, r.policy.BackoffLimit
	info.Type = r.policy.Type
	return nil
}

// decodeHistory decodes the ctl field h|, a JSON array of
// [attempt, worker, start ms, end ms, outcome, error] and, for a delivery
// with a result, [..., error, result] (result.go), written by remember() in
// lua/common.lua. Lua's cjson writes an empty array as {}.
func decodeHistory(h string) ([]durable.Delivery, error) {
	if h == "{}" {
		return nil, nil
	}
	var raw [][]any
	d := json.NewDecoder(bytes.NewReader([]byte(h)))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, err
	}
	out := make([]durable.Delivery, 0, len(raw))
	for _, r := range raw {
		if len(r) != 6 && len(r) != 7 {
			return nil, fmt.Errorf("entry of %d fields", len(r))
		}
		var n [3]int64
		for i, j := range []int{0, 2, 3} {
			num, ok := r[j].(json.Number)
			if !ok {
				return nil, fmt.Errorf("field %d: %v", j, r[j])
			}
			// cjson may write a whole number as 1.7e+12.
			f, err := num.Float64()
			if err != nil {
				return nil, err
			}
			n[i] = int64(f)
		}
		worker, ok1 := r[1].(string)
		outcome, ok2 := r[4].(string)
		text, ok3 := r[5].(string)
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("entry %v", r)
		}
		d := durable.Delivery{
			Attempt: int(n[0]), Worker: worker, Start: msTime(n[1]), End: msTime(n[2]),
			Outcome: outcome, Error: text,
		}
		if len(r) == 7 {
			enc, ok := r[6].(string)
			if !ok {
				return nil, fmt.Errorf("entry %v", r)
			}
			var err error
			if d.Result, err = decodeResult(enc); err != nil {
				return nil, err
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// msTime is the time of a Redis millisecond, the zero time for 0 (unset).
func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
