package rediswheel

import (
	"context"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeStride(t *testing.T) {
	rows, err := decodeStride([]any{"a", int64(1), "b", int64(2)}, 2)
	require.NoError(t, err)
	assert.Equal(t, [][]any{{"a", int64(1)}, {"b", int64(2)}}, rows)
	rows, err = decodeStride(nil, 3)
	require.NoError(t, err)
	assert.Empty(t, rows)
	_, err = decodeStride([]any{"a", "b", "c"}, 2)
	assert.Error(t, err)
	assert.PanicsWithValue(t, "rediswheel: decodeStride with stride <= 0", func() { decodeStride(nil, 0) })

	r := row{v: []any{"k", int64(3), "17.0", "x"}}
	assert.Equal(t, "k", r.str(0))
	assert.Equal(t, int64(3), r.int(1))
	assert.Equal(t, int64(17), r.score(2))
	assert.NoError(t, r.err)
	r.int(0)
	r.score(3)
	assert.ErrorContains(t, r.err, "value 0", "the first bad value is reported")
}

func TestDecodeClaimRejectsMalformedReplies(t *testing.T) {
	task := []any{"k", "p", int64(1), "5", int64(9), "", int64(4)}
	for name, v := range map[string][]any{
		"short header":      {int64(1), int64(2)},
		"partial row":       append([]any{int64(1), int64(-1), int64(0), int64(0)}, task[:6]...),
		"bad header":        {"now", int64(-1), int64(0), int64(0)},
		"bad attempt":       {int64(1), int64(-1), int64(0), int64(0), "k", "p", "1", "5", int64(9), "", int64(0)},
		"bad record":        {int64(1), int64(-1), int64(0), int64(0), "k", "p", int64(1), "5", int64(9), "1|2", int64(0)},
		"bad due score":     {int64(1), int64(-1), int64(0), int64(0), "k", "p", int64(1), "soon", int64(9), "", int64(0)},
		"bad postponements": {int64(1), int64(-1), int64(0), int64(0), "k", "p", int64(1), "5", int64(9), "", "4"},
	} {
		_, err := decodeClaim(v)
		assert.Error(t, err, name)
	}
	c, err := decodeClaim(append([]any{int64(1), int64(-1), int64(2), int64(1)}, task...))
	require.NoError(t, err)
	assert.Equal(t, durable.Claimed{Now: 1, Next: -1, DeadTrimmed: 2, Paused: true, Tasks: []durable.ClaimedTask{
		{Key: "k", Payload: []byte("p"), Attempt: 1, Due: 5, OriginalDue: 5, Token: "9", Postponements: 4},
	}}, c)
}

// Each script refuses arguments it does not understand rather than guessing:
// a typo in a mode must never store or lease anything.
func TestScriptsRejectUnknownArguments(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1})
	ctx := context.Background()
	keys := q.keys[0]
	at := time.Now().Add(-time.Second).UnixMilli()
	for _, tc := range []struct {
		name, want string
		args       []any
		keys       []string // keys[0] if nil
	}{
		{"add mode", "unknown mode", []any{"NX", string(baseAbs), 1, "k", at, "p", noPolicy}, nil},
		{"add base", "unknown time base", []any{string(addNX), "relative", 1, "k", at, "p", noPolicy}, nil},
		{"add stride", "bad task count", []any{string(addNX), string(baseAbs), 1, "k", at, "p"}, nil},
		{"add count", "bad task count", []any{string(addNX), string(baseAbs), "one", "k", at, "p", noPolicy}, nil},
		{"add trailing", "past the last task", []any{string(addNX), string(baseAbs), 1, "k", at, "p", noPolicy, "k2"}, nil},
		{"add groups", "bad task count", []any{string(addNX), string(baseAbs), 1, "k", at, "p", noPolicy}, append(append([]string(nil), keys...), keys...)},
		{"add keys", "not 6 per shard", []any{string(addNX), string(baseAbs), 1, "k", at, "p", noPolicy}, keys[:5]},
		{"add time", "is not a number", []any{string(addReplace), string(baseAbs), 1, "k", "soon", "p", noPolicy}, nil},
		// Numbers Lua reads but the Go side never sends: NaN and infinity
		// would fail in ZADD after the payload is stored (an orphan that
		// blocks its key), a fraction would end up in the task record.
		{"add time nan", "is not a number", []any{string(addNX), string(baseAbs), 1, "k", "nan", "p", noPolicy}, nil},
		{"add time inf", "is not a number", []any{string(addNX), string(baseAbs), 1, "k", "1e999", "p", noPolicy}, nil},
		{"add time fraction", "is not a number", []any{string(addNX), string(baseRel), 1, "k", "1.5", "p", noPolicy}, nil},
		{"add time negative", "is not a number", []any{string(addNX), string(baseAbs), 1, "k", "-1", "p", noPolicy}, nil},
		// A record claim cannot parse would fail every claim of its shard.
		{"add policy", "bad policy", []any{string(addNX), string(baseAbs), 1, "k", at, "p", "soon"}, nil},
		{"add policy fields", "bad policy", []any{string(addNX), string(baseAbs), 1, "k", at, "p", "0|0|0|"}, nil},
	} {
		k := tc.keys
		if k == nil {
			k = keys
		}
		err := addScript.Run(ctx, c, k, tc.args...).Err()
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	good := []any{1, 1000, 25, reapBatch, 100, 10, "w", maxUnconfirmed, 0}
	for i := range good {
		if i == 6 {
			continue // the worker id is any text
		}
		args := append([]any(nil), good...)
		args[i] = "x"
		assert.ErrorContains(t, claimScript.Run(ctx, c, keys, args...).Err(), "bad argument", "claim argument %d", i+1)
	}
	assert.ErrorContains(t, claimScript.Run(ctx, c, keys, append(good, "extra")...).Err(), "want 9 arguments")
	assert.ErrorContains(t, claimScript.Run(ctx, c, keys, good[:8]...).Err(), "want 9 arguments")
	// list reads only, but a limit or budget it misreads answers wrongly: a
	// NaN budget passed its check and ended every listing at once.
	for _, args := range [][]any{
		{"scheduled", "", "", "1.5", 256},
		{"scheduled", "", "", 10, "nan"},
		{"scheduled", "", "", 0, 256},
		{"scheduled", "nan", "k", 10, 256},
	} {
		assert.ErrorContains(t, listScript.Run(ctx, c, keys, args...).Err(), "rediswheel: list", "list %v", args)
	}
	assert.Zero(t, leftovers(t, q), "nothing stored by a refused call")
}
