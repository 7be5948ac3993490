package rediswheel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// record reads key's task record from Redis.
func record(t *testing.T, q *testQueue, key string) taskRecord {
	t.Helper()
	s, err := q.client.HGet(context.Background(), q.keys[q.shard(key)][4], "m|"+key).Result()
	require.NoError(t, err, "m|%s", key)
	r, err := parseRecord(s)
	require.NoError(t, err)
	return r
}

func TestAddStoresTaskRecord(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{})
	ctx := context.Background()
	before := redisTime(t, c).UnixMilli()
	at := time.UnixMilli(before + time.Hour.Milliseconds())

	added, err := q.Add(ctx, "plain", []byte("12345"), at)
	require.NoError(t, err)
	require.True(t, added)
	r := record(t, q, "plain")
	assert.GreaterOrEqual(t, r.added, before)
	assert.Equal(t, at.UnixMilli(), r.originalDue)
	assert.Equal(t, int64(5), r.payloadSize)
	assert.Equal(t, durable.Policy{}, r.policy, "no options: the Queue's")

	opts := []TaskOption{TaskType("mail|v2"), TaskTimeout(1500 * time.Microsecond), TaskMaxAttempts(3), TaskBackoff(time.Second, time.Minute)}
	added, err = q.AddAfter(ctx, "typed", nil, time.Hour, opts...)
	require.NoError(t, err)
	require.True(t, added)
	r = record(t, q, "typed")
	// added is the Redis time rounded down, the due time counts from it rounded up (lua/add.lua).
	assert.Contains(t, []int64{r.added + time.Hour.Milliseconds(), r.added + time.Hour.Milliseconds() + 1}, r.originalDue,
		"rel: due counted from the same Redis now")
	assert.Equal(t, durable.Policy{Type: "mail|v2", Timeout: 2 * time.Millisecond, MaxAttempts: 3, BackoffBase: time.Second, BackoffLimit: time.Minute}, r.policy)

	// A refused Add keeps the first record.
	added, err = q.Add(ctx, "typed", []byte("other"), at, TaskType("other"))
	require.NoError(t, err)
	require.False(t, added)
	assert.Equal(t, "mail|v2", record(t, q, "typed").policy.Type)

	// AddBatch stores each item's own options.
	_, err = q.AddBatch(ctx, []Item{{Key: "b1", At: at, Options: []TaskOption{TaskType("x")}}, {Key: "b2", At: at}})
	require.NoError(t, err)
	assert.Equal(t, "x", record(t, q, "b1").policy.Type)
	assert.Equal(t, durable.Policy{}, record(t, q, "b2").policy)
}

func TestReplaceRewritesRecordAndClearsHistory(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{})
	ctx := context.Background()
	at := time.Now().Add(time.Hour)
	_, err := q.Add(ctx, "k", []byte("old"), at, TaskType("old"), TaskMaxAttempts(2))
	require.NoError(t, err)
	ctlKey := q.keys[q.shard("k")][4]
	require.NoError(t, c.HSet(ctx, ctlKey, "c|k", "1|5|w", "h|k", "[]", "u|k", 1, "a|k", 1).Err())

	later := at.Add(time.Hour)
	require.NoError(t, q.Replace(ctx, "k", []byte("newer"), later, TaskType("new")))
	r := record(t, q, "k")
	assert.Equal(t, unixMilliCeil(later), r.originalDue)
	assert.Equal(t, int64(5), r.payloadSize)
	assert.Equal(t, durable.Policy{Type: "new"}, r.policy, "Replace's options replace the old ones entirely")
	n, err := c.HExists(ctx, ctlKey, "c|k").Result()
	require.NoError(t, err)
	assert.False(t, n)
	for _, f := range []string{"c|k", "h|k", "u|k", "a|k"} {
		ok, err := c.HExists(ctx, ctlKey, f).Result()
		require.NoError(t, err)
		assert.False(t, ok, "%s survived Replace", f)
	}
}

func TestBadTaskOptionsStoreNothing(t *testing.T) {
	q := newQueue(t, standalone(t), Options{})
	ctx := context.Background()
	at := time.Now()
	for _, tc := range []struct {
		name string
		opt  TaskOption
	}{
		{"long type", TaskType(strings.Repeat("t", MaxTypeLen+1))},
		{"control in type", TaskType("a\nb")},
		{"non-ASCII type", TaskType("café")},
		{"DEL in type", TaskType("a\x7f")},
		{"zero timeout", TaskTimeout(0)},
		{"negative timeout", TaskTimeout(-time.Second)},
		{"zero attempts", TaskMaxAttempts(0)},
		{"attempts past 2^53", TaskMaxAttempts(int(two53) + 1)},
		{"zero backoff base", TaskBackoff(0, time.Second)},
		{"timeout past ms range", TaskTimeout(maxPolicyDuration + 1)},
		{"backoff past ms range", TaskBackoff(time.Second, maxPolicyDuration+1)},
		{"limit below base", TaskBackoff(time.Second, time.Millisecond)},
		{"nil option", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := q.Add(ctx, "k", nil, at, tc.opt)
			assert.ErrorIs(t, err, ErrTaskOption)
			_, err = q.AddAfter(ctx, "k", nil, 0, TaskType("fine"), tc.opt)
			assert.ErrorIs(t, err, ErrTaskOption, "a bad option after a good one")
			assert.ErrorIs(t, q.Replace(ctx, "k", nil, at, tc.opt), ErrTaskOption)
			_, err = q.AddBatch(ctx, []Item{{Key: "ok", At: at}, {Key: "k", At: at, Options: []TaskOption{tc.opt}}})
			assert.ErrorIs(t, err, ErrTaskOption)
			assert.Zero(t, leftovers(t, q), "nothing stored, not even the good item")
		})
	}
	// The edges that are allowed.
	_, err := q.Add(ctx, "edges", nil, at, TaskType(strings.Repeat("~", MaxTypeLen)), TaskType(""),
		TaskTimeout(time.Nanosecond), TaskMaxAttempts(int(two53)), TaskBackoff(time.Nanosecond, time.Nanosecond),
		TaskTimeout(maxPolicyDuration))
	require.NoError(t, err)
	r := record(t, q, "edges")
	assert.Equal(t, durable.Policy{Timeout: maxPolicyDuration, MaxAttempts: int(two53),
		BackoffBase: time.Millisecond, BackoffLimit: time.Millisecond}, r.policy, "rounded up to whole ms, never down to 0")
}

func TestParseRecord(t *testing.T) {
	r, err := parseRecord("")
	require.NoError(t, err)
	assert.Equal(t, taskRecord{}, r, "no record: all zero")
	r, err = parseRecord("1|2|3|4|5|6|7|a|b|")
	require.NoError(t, err)
	assert.Equal(t, taskRecord{added: 1, originalDue: 2, payloadSize: 3, policy: durable.Policy{
		Timeout: 4 * time.Millisecond, MaxAttempts: 5, BackoffBase: 6 * time.Millisecond, BackoffLimit: 7 * time.Millisecond, Type: "a|b|"}}, r)
	for _, bad := range []string{"1|2|3", "1|2|3|4|5|6|x|t", "1|2|3|4|5|6|-7|t", "1|2|3|4|5|6|1e3|t", "1|2|3|9223372036855|5|6|7|t"} {
		_, err := parseRecord(bad)
		assert.Error(t, err, bad)
	}
}

func TestAddBeforeYearMinus292MillionIsDueAtOnce(t *testing.T) {
	q := newQueue(t, standalone(t), Options{})
	ctx := context.Background()
	// time.Unix(-1<<54, 0) is about 571 million years ago: its UnixMilli
	// wraps to a large positive number.
	ancient := time.Unix(-1<<54, 0)
	require.Positive(t, ancient.UnixMilli(), "the wrap this test guards against")
	added, err := q.Add(ctx, "ancient", nil, ancient)
	require.NoError(t, err)
	require.True(t, added)
	require.NoError(t, q.Replace(ctx, "replaced", nil, ancient))
	for _, k := range []string{"ancient", "replaced"} {
		score, err := q.client.ZScore(ctx, q.keys[q.shard(k)][0], k).Result()
		require.NoError(t, err)
		assert.Equal(t, float64(1), score, "%s: due at once, at 1 ms", k)
	}
	rec := &recorder{}
	run(t, q, rec.handle)
	eventually(t, patience, "both tasks delivered", func() bool { return rec.count() == 2 })
}

// two53 is 2^53, the most attempts a policy may ask for (Lua numbers are
// doubles); a variable, converted at run time, so that the tests also build
// where int is 32 bits (GOARCH=386 go vet), where they mean nothing.
var two53 = int64(1) << 53
