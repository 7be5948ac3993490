package rediswheel

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// setField writes the ctl field <letter>|key of key's shard directly: the
// fields other slices write (m| by add, c| by claim, h| by settle, f| by
// retention) are set by hand here, so that decoding is tested whether or
// not those writers exist yet.
func setField(t testing.TB, q *testQueue, letter, key, value string) {
	t.Helper()
	require.NoError(t, q.client.HSet(context.Background(), q.keys[q.shard(key)][4], letter+"|"+key, value).Err())
}

// keepTask stores key as a retained finished task, as settle and cancel do
// when Options.Retention is set: in kept until keepUntil, with its payload
// and its finished record f|.
func keepTask(t testing.TB, q *testQueue, key string, state State, finished, keepUntil time.Time) {
	t.Helper()
	ctx := context.Background()
	keys := q.keys[q.shard(key)]
	require.NoError(t, q.client.ZAdd(ctx, keys[5], redis.Z{Score: float64(keepUntil.UnixMilli()), Member: key}).Err())
	require.NoError(t, q.client.HSet(ctx, keys[3], key, "payload").Err())
	setField(t, q, "f", key, fmt.Sprintf("%s|%d", state, finished.UnixMilli()))
}

// servers are the deployments a test runs on in turn.
var servers = []struct {
	name   string
	client func(testing.TB) redis.UniversalClient
}{
	{"standalone", func(t testing.TB) redis.UniversalClient { return standalone(t) }},
	{"cluster", func(t testing.TB) redis.UniversalClient { return cluster(t) }},
}

// get is q.Get that must succeed.
func get(t testing.TB, q *testQueue, key string) TaskInfo {
	t.Helper()
	info, err := q.Get(context.Background(), key)
	require.NoError(t, err, "Get %q", key)
	return info
}

// ms truncates to the millisecond, as Redis keeps times.
func ms(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()) }

// Get follows one task through every state. Fields that other parts write
// (the task record, the current delivery, the history) are checked where
// present, so the test holds with and without them.
func TestGetFollowsATask(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			q := newQueue(t, srv.client(t), Options{})
			ctx := context.Background()

			_, err := q.Get(ctx, "k")
			require.ErrorIs(t, err, ErrNotFound)
			_, err = q.Get(ctx, "")
			require.ErrorIs(t, err, ErrKey)

			at := time.Now().Add(time.Hour)
			before := redisTime(t, q.client)
			_, err = q.Add(ctx, "k", []byte("12345"), at)
			require.NoError(t, err)
			info := get(t, q, "k")
			assert.Equal(t, "k", info.Key)
			assert.Equal(t, StateScheduled, info.State)
			assert.Equal(t, ms(at).Add(time.Millisecond), info.Due, "rounded up to the ms")
			assert.Equal(t, 5, info.PayloadSize)
			assert.Zero(t, info.Attempts)
			assert.Empty(t, info.LastError)
			assert.True(t, info.OriginalDue.IsZero() || info.OriginalDue.Equal(info.Due), "original due %v", info.OriginalDue)
			assert.True(t, info.Added.IsZero() || !info.Added.Before(ms(before)), "added %v", info.Added)
			assert.True(t, info.Started.IsZero() && info.Finished.IsZero())

			// In flight: Due is the lease's end.
			_, err = q.Add(ctx, "r", []byte("p"), time.Now().Add(-time.Minute))
			require.NoError(t, err)
			shard := q.shard("r")
			cl, err := q.claim(ctx, shard, 10, time.Minute)
			require.NoError(t, err)
			require.Len(t, cl.tasks, 1)
			info = get(t, q, "r")
			assert.Equal(t, StateInFlight, info.State)
			assert.Equal(t, 1, info.Attempts)
			// The lease counts from the claim's Redis time rounded up (lua/common.lua's now_ms):
			// cl.now is rounded down.
			assert.Contains(t, []time.Time{time.UnixMilli(cl.now).Add(time.Minute), time.UnixMilli(cl.now + 1).Add(time.Minute)}, info.Due)
			assert.True(t, info.Started.IsZero() || info.Started.Equal(time.UnixMilli(cl.now)), "started %v", info.Started)

			// Retrying: back in due, with an attempt and an error.
			res, err := q.settle(ctx, shard, []outcome{{d: cl.tasks[0], kind: outcomeRetry, delay: time.Hour.Milliseconds(), err: "boom"}})
			require.NoError(t, err)
			require.Equal(t, []settleCode{settleRetry}, res.codes)
			info = get(t, q, "r")
			assert.Equal(t, StateRetrying, info.State)
			assert.Equal(t, 1, info.Attempts)
			assert.Equal(t, "boom", info.LastError)
			assert.WithinDuration(t, time.UnixMilli(cl.now).Add(time.Hour), info.Due, 10*time.Second)
			for _, d := range info.History { // written once settle records history
				assert.Equal(t, 1, d.Attempt)
				assert.Equal(t, "boom", d.Error)
			}

			// Dead.
			_, err = q.Add(ctx, "d", []byte("p"), time.Now().Add(-time.Minute))
			require.NoError(t, err)
			cl, err = q.claim(ctx, q.shard("d"), 10, time.Minute)
			require.NoError(t, err)
			require.Len(t, cl.tasks, 1)
			_, err = q.settle(ctx, q.shard("d"), []outcome{{d: cl.tasks[0], kind: outcomeDead, err: "bad"}})
			require.NoError(t, err)
			info = get(t, q, "d")
			assert.Equal(t, StateDead, info.State)
			assert.Equal(t, "bad", info.LastError)
			assert.Equal(t, 1, info.Attempts)
			assert.False(t, info.Finished.Before(time.UnixMilli(cl.now)), "died %v", info.Finished)
			assert.True(t, info.Due.IsZero())

			// Retained.
			fin := time.UnixMilli(1_700_000_000_123)
			keepTask(t, q, "done", StateDone, fin, time.Now().Add(time.Hour))
			keepTask(t, q, "gone", StateCancelled, fin, time.Now().Add(time.Hour))
			info = get(t, q, "done")
			assert.Equal(t, StateDone, info.State)
			assert.Equal(t, fin, info.Finished)
			assert.True(t, info.Due.IsZero())
			assert.Equal(t, StateCancelled, get(t, q, "gone").State)

			// Cancelled without retention: gone.
			_, err = q.Cancel(ctx, "k")
			require.NoError(t, err)
			_, err = q.Get(ctx, "k")
			require.ErrorIs(t, err, ErrNotFound)
		})
	}
}

// The task record m|, current delivery c|, history h| and finished record f|
// decode exactly as doc.go lays them out.
func TestGetDecodesTheRecords(t *testing.T) {
	q := newQueue(t, standalone(t), Options{})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", []byte("p"), time.Now().Add(time.Hour))
	require.NoError(t, err)
	setField(t, q, "m", "k", "1700000000001|1700000000002|4096|1500|3|100|2000|mail|send")
	setField(t, q, "c", "k", "2|1700000000010|host:12:ab|cd")
	setField(t, q, "h", "k", `[[1,"host:1:aa",1700000000003,1.700000000004e+12,"retry","boom"],[2,"w|2",1700000000005,1700000000006,"lease expired",""]]`)
	info := get(t, q, "k")
	assert.Equal(t, time.UnixMilli(1700000000001), info.Added)
	assert.Equal(t, time.UnixMilli(1700000000002), info.OriginalDue)
	assert.Equal(t, 4096, info.PayloadSize, "the record's size, not the stored payload's")
	assert.Equal(t, 1500*time.Millisecond, info.Timeout)
	assert.Equal(t, 3, info.MaxAttempts)
	assert.Equal(t, "mail|send", info.Type, "the type is everything after the 7th '|'")
	assert.Equal(t, time.UnixMilli(1700000000010), info.Started)
	assert.Equal(t, []Delivery{
		{Attempt: 1, Worker: "host:1:aa", Start: time.UnixMilli(1700000000003), End: time.UnixMilli(1700000000004), Outcome: "retry", Error: "boom"},
		{Attempt: 2, Worker: "w|2", Start: time.UnixMilli(1700000000005), End: time.UnixMilli(1700000000006), Outcome: "lease expired"},
	}, info.History)

	setField(t, q, "m", "k", "0|0|0|0|0|0|0|")
	info = get(t, q, "k")
	assert.True(t, info.Added.IsZero() && info.OriginalDue.IsZero(), "0 means not set")
	assert.Zero(t, info.Timeout)
	assert.Empty(t, info.Type)
	setField(t, q, "h", "k", "{}") // how Lua's cjson writes an empty array
	assert.Empty(t, get(t, q, "k").History)

	// What no writer produces is an error, never a guess.
	for _, tc := range []struct{ letter, value string }{
		{"m", "1|2|3"},
		{"m", "1|2|x|0|0|0|0|t"},
		{"c", "1|notatime|w"},
		{"h", `[[1,"w"]]`},
		{"h", `not json`},
		{"a", "many"},
	} {
		setField(t, q, tc.letter, "k", tc.value)
		_, err := q.Get(ctx, "k")
		assert.Error(t, err, "%s| = %q", tc.letter, tc.value)
		assert.NotErrorIs(t, err, ErrNotFound)
		require.NoError(t, q.client.HDel(ctx, q.keys[q.shard("k")][4], tc.letter+"|k").Err())
	}
	keepTask(t, q, "f", StateDone, time.Now(), time.Now().Add(time.Hour))
	setField(t, q, "f", "f", "exploded|1")
	_, err = q.Get(ctx, "f")
	assert.ErrorContains(t, err, "finished record")
}

// Scheduled and retrying share the due set; a task is retrying once it has
// had an attempt or carries a last error, and scheduled again after Replace.
func TestGetTellsRetryingFromScheduled(t *testing.T) {
	q := newQueue(t, standalone(t), Options{Shards: 1})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", nil, time.Now().Add(-time.Second))
	require.NoError(t, err)
	cl, err := q.claim(ctx, 0, 1, time.Minute)
	require.NoError(t, err)
	_, err = q.settle(ctx, 0, []outcome{{d: cl.tasks[0], kind: outcomeRelease}})
	require.NoError(t, err)
	assert.Equal(t, StateScheduled, get(t, q, "k").State, "a released first delivery gives its attempt back")

	cl, err = q.claim(ctx, 0, 1, MinLease)
	require.NoError(t, err)
	require.Len(t, cl.tasks, 1)
	// The lease ends at the claim's time rounded up plus MinLease, and a
	// reap reads Redis's clock rounded down: 2 ms past the claim's whole
	// millisecond plus MinLease is past the lease by either rounding.
	eventually(t, patience, "the lease to run out", func() bool {
		return redisTime(t, q.client).After(time.UnixMilli(cl.now).Add(MinLease + 2*time.Millisecond))
	})
	_, err = q.claim(ctx, 0, 0, time.Minute) // reaps, leases nothing
	require.NoError(t, err)
	info := get(t, q, "k")
	assert.Equal(t, StateRetrying, info.State)
	assert.Equal(t, "lease expired", info.LastError)

	require.NoError(t, q.Replace(ctx, "k", nil, time.Now().Add(time.Hour)))
	assert.Equal(t, StateScheduled, get(t, q, "k").State, "Replace starts over")
}

// The get script rejects a call without keys.
func TestGetScriptRejectsNoKey(t *testing.T) {
	q := newQueue(t, standalone(t), Options{Shards: 1})
	err := getScript.Run(context.Background(), q.client, q.keys[0]).Err()
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "get needs a key"), err.Error())
}
