package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Stream hand-off, on a standalone server and a cluster: every task's
// message reaches a consumer group (XREADGROUP, XACK) with its key, attempt
// and fields; a task delivered again after its XADD (a lost ack, here a
// wrapper that fails attempt 1 after the handler appended) appends a
// duplicate carrying the same key, attempt 2.
func TestStreamHandler(t *testing.T) {
	for name, c := range map[string]func(testing.TB) redis.UniversalClient{
		"standalone": func(t testing.TB) redis.UniversalClient { return standalone(t) },
		"cluster":    func(t testing.TB) redis.UniversalClient { return cluster(t) },
	} {
		t.Run(name, func(t *testing.T) { testStreamHandler(t, c(t)) })
	}
}

func testStreamHandler(t *testing.T, c redis.UniversalClient) {
	ctx := context.Background()
	q := newQueue(t, c, Options{Shards: 2, Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
	stream := uniqueNamespace(t) + ".events"
	t.Cleanup(func() { c.Del(context.Background(), stream) })
	require.NoError(t, c.XGroupCreateMkStream(ctx, stream, "g", "0").Err())

	h := StreamHandler(c)
	m := NewMux()
	m.HandleFunc(StreamTaskType, func(ctx context.Context, tk durable.Task) error {
		err := h(ctx, tk)
		if err == nil && tk.Key == "dup" && tk.Attempt == 1 {
			return errors.New("ack lost after the XADD") // delivered again: a duplicate
		}
		return err
	})
	run(t, q, m.Handler)

	const n = 20
	want := map[string]int{"dup": 2} // key -> messages expected
	for i := range n {
		want[fmt.Sprint("k", i)] = 1
	}
	for key := range want {
		payload, err := EncodeStreamTask(StreamTask{Stream: stream, Fields: map[string]string{"order": key, "event": "cancel"}})
		require.NoError(t, err)
		_, err = q.Add(ctx, key, payload, time.Now(), TaskType(StreamTaskType))
		require.NoError(t, err)
	}

	got := map[string][]map[string]any{}
	total := 0
	for _, w := range want {
		total += w
	}
	deadline := time.Now().Add(patience)
	for count := 0; count < total; {
		require.True(t, time.Now().Before(deadline), "after %v the group read %d of %d messages: %v", patience, count, total, got)
		res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{stream, ">"}, Count: 100, Block: 100 * time.Millisecond}).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		require.NoError(t, err)
		for _, msg := range res[0].Messages {
			key, _ := msg.Values[StreamFieldKey].(string)
			got[key] = append(got[key], msg.Values)
			count++
			require.NoError(t, c.XAck(ctx, stream, "g", msg.ID).Err())
		}
	}
	for key, w := range want {
		msgs := got[key]
		require.Len(t, msgs, w, "messages of %s", key)
		for i, v := range msgs {
			assert.Equal(t, map[string]any{StreamFieldKey: key, StreamFieldAttempt: fmt.Sprint(i + 1), "order": key, "event": "cancel"}, v)
		}
	}
	pending, err := c.XPending(ctx, stream, "g").Result()
	require.NoError(t, err)
	assert.Zero(t, pending.Count, "every message acknowledged")
	eventually(t, patience, "every task done", func() bool { return totals(t, q) == ShardStats{} })
}

// StreamMaxLen trims the stream (approximately: whole nodes of
// stream-node-max-entries, 100 by default); a payload that is not a stream
// task and a key of another type are dead at once; bad tasks are refused.
func TestStreamHandlerBounds(t *testing.T) {
	c := standalone(t)
	ctx := context.Background()
	stream := uniqueNamespace(t) + ".events"
	t.Cleanup(func() { c.Del(context.Background(), stream, stream+".str") })
	h := StreamHandler(c, StreamMaxLen(10))
	payload, err := EncodeStreamTask(StreamTask{Stream: stream, Fields: map[string]string{"f": "v"}})
	require.NoError(t, err)
	const n = 300
	for i := range n {
		require.NoError(t, h(ctx, durable.Task{Key: fmt.Sprint("k", i), Attempt: 1, Payload: payload}))
	}
	size, err := c.XLen(ctx, stream).Result()
	require.NoError(t, err)
	assert.LessOrEqual(t, size, int64(10+100), "trimmed to about 10 (one node of slack)")
	assert.GreaterOrEqual(t, size, int64(10), "never below MAXLEN")

	require.NoError(t, c.Set(ctx, stream+".str", "x", 0).Err())
	strPayload, err := EncodeStreamTask(StreamTask{Stream: stream + ".str", Fields: map[string]string{"f": "v"}})
	require.NoError(t, err)
	err = h(ctx, durable.Task{Key: "k", Attempt: 1, Payload: strPayload})
	assert.True(t, durable.IsPermanent(err), "WRONGTYPE is permanent: %v", err)
	err = h(ctx, durable.Task{Key: "k", Attempt: 1, Payload: []byte(`{"v":1}`)})
	assert.True(t, durable.IsPermanent(err) && errors.Is(err, ErrStreamTask), "a bad payload is permanent: %v", err)

	for _, bad := range []StreamTask{
		{Stream: "", Fields: map[string]string{"f": "v"}},
		{Stream: string(make([]byte, MaxStreamName+1)), Fields: map[string]string{"f": "v"}},
		{Stream: "s"},
		{Stream: "s", Fields: map[string]string{"": "v"}},
		{Stream: "s", Fields: map[string]string{StreamFieldKey: "v"}},
		{Stream: "s", Fields: map[string]string{StreamFieldAttempt: "v"}},
	} {
		_, err := EncodeStreamTask(bad)
		assert.ErrorIs(t, err, ErrStreamTask, "%+v", bad)
	}
}
