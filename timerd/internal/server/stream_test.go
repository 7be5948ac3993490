package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/go-timingwheel/timingwheel/timerd/internal/ssrf"
)

// Stream tasks reach a real consumer group, on every store: the Redis store
// appends to its own Redis, the SQL stores to -stream-redis-url's. Every
// task's message arrives, carrying its key and its fields, is read with
// XREADGROUP and acknowledged with XACK, and the task is done.
func TestStreamHandOff(t *testing.T) {
	eachStore(t, func(t *testing.T, cfg config.Config) {
		if cfg.Store != config.StoreRedis {
			cfg.Streams.RedisURL = "redis://" + redisAddr(t) + "/0"
		}
		testStreamHandOff(t, cfg)
	})
}

func testStreamHandOff(t *testing.T, cfg config.Config) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr(t)})
	defer rdb.Close()
	stream, group := "timerd-test-stream:"+cfg.Namespace, "billing"
	cfg.Streams.Allow = []string{"timerd-test-stream:*"}
	require.NoError(t, rdb.XGroupCreateMkStream(ctx, stream, group, "$").Err())
	defer rdb.Del(ctx, stream)

	cfg.Retention = time.Hour
	base, stop := runServer(t, cfg)
	defer stop()

	const n = 20
	want := map[string]string{} // task key → its order field
	for i := range n {
		key, order := fmt.Sprintf("invoice:%d", i), fmt.Sprint(1000+i)
		want[key] = order
		code, out := apiCall(t, base, cfg.Token, "POST", "/v1/tasks", map[string]any{"key": key, "delay": fmt.Sprintf("%dms", 10*i),
			"stream": map[string]any{"name": stream, "fields": map[string]string{"order": order}}})
		require.Equal(t, http.StatusCreated, code, "%v", out)
		require.Equal(t, "stream", out["kind"])
	}

	got := map[string]string{}
	deadline := time.Now().Add(redistest.WaitBound)
	for len(got) < n {
		require.False(t, time.Now().After(deadline), "after %v the consumer group read %d of %d tasks' messages: %v", redistest.WaitBound, len(got), n, got)
		res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "c1", Streams: []string{stream, ">"},
			Count: 10, Block: time.Second}).Result()
		if err == redis.Nil {
			continue
		}
		require.NoError(t, err)
		for _, msg := range res[0].Messages {
			key, _ := msg.Values[rediswheel.StreamFieldKey].(string)
			require.Contains(t, want, key, "a message of no task: %v", msg.Values)
			assert.Equal(t, want[key], msg.Values["order"], "the task's own fields, in %v", msg.Values)
			assert.NotEmpty(t, msg.Values[rediswheel.StreamFieldAttempt])
			got[key] = msg.Values["order"].(string)
			require.NoError(t, rdb.XAck(ctx, stream, group, msg.ID).Err())
		}
	}
	assert.Equal(t, want, got)
	pending, err := rdb.XPending(ctx, stream, group).Result()
	require.NoError(t, err)
	assert.Zero(t, pending.Count, "every message acknowledged")

	// A message is readable before its task's settle: wait for done.
	for key := range want {
		for {
			_, out := apiCall(t, base, cfg.Token, "GET", "/v1/tasks/"+key, nil)
			if out["state"] == "done" {
				assert.Equal(t, "stream", out["kind"])
				break
			}
			require.False(t, time.Now().After(deadline), "task %s not done after %v: %v", key, redistest.WaitBound, out)
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// A SQL store without -stream-redis-url has nowhere to send stream tasks:
// the server refuses them at create (400, field stream), and takes
// callbacks as before.
func TestStreamRefusedWithoutRedis(t *testing.T) {
	cfg := sqliteConfig(t)
	base, stop := runServer(t, cfg)
	defer stop()
	code, out := apiCall(t, base, cfg.Token, "POST", "/v1/tasks", map[string]any{"key": "k", "delay": "1h",
		"stream": map[string]any{"name": "s", "fields": map[string]string{"a": "b"}}})
	require.Equal(t, http.StatusBadRequest, code, "%v", out)
	e := out["error"].(map[string]any)
	assert.Equal(t, "invalid_argument", e["code"])
	assert.Equal(t, "stream", e["field"])
	assert.Contains(t, e["message"], "-stream-redis-url")
	code, out = apiCall(t, base, cfg.Token, "POST", "/v1/tasks", map[string]any{"key": "k", "delay": "1h",
		"callback": map[string]any{"url": "http://127.0.0.1:9/", "method": "POST"}})
	require.Equal(t, http.StatusCreated, code, "%v", out)
}

// runServer runs a Server of cfg on a port of its own; stop ends it and
// checks that Run returned nil.
func runServer(t *testing.T, cfg config.Config) (base string, stop func()) {
	s := newServer(t, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, ln) }()
	return "http://" + ln.Addr().String(), func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(redistest.WaitBound):
			t.Fatalf("Run did not return %v after its context ended", redistest.WaitBound)
		}
	}
}

// apiCall sends body (if not nil) as JSON with token, and decodes the answer.
func apiCall(t *testing.T, base, token, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd *strings.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = strings.NewReader(string(raw))
	} else {
		rd = strings.NewReader("")
	}
	req, err := http.NewRequest(method, base+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// The workers' Mux serves StreamTaskType only with a stream Redis, and
// passes -stream-max-len on: n messages to one stream end up trimmed.
func TestWorkerHandlerStreams(t *testing.T) {
	ctx := context.Background()
	guard, err := ssrf.New(nil)
	require.NoError(t, err)
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr(t)})
	defer rdb.Close()
	stream := fmt.Sprintf("timerd-test-trim:%d", time.Now().UnixNano())
	defer rdb.Del(ctx, stream)
	payload, err := rediswheel.EncodeStreamTask(rediswheel.StreamTask{Stream: stream, Fields: map[string]string{"a": "b"}})
	require.NoError(t, err)
	task := func(i int) rediswheel.Task {
		return rediswheel.Task{Key: fmt.Sprint("k", i), Type: rediswheel.StreamTaskType, Payload: payload, Attempt: 1}
	}

	err = workerHandler(guard, 0, nil, 0)(ctx, task(0))
	require.ErrorIs(t, err, rediswheel.ErrNoHandler, "no stream Redis: no handler")

	// MAXLEN ~ 5 trims whole nodes of stream-node-max-entries (100): 300
	// messages leave at most about one node, never 300.
	const n = 300
	h := workerHandler(guard, 0, rdb, 5)
	for i := range n {
		require.NoError(t, h(ctx, task(i)))
	}
	length, err := rdb.XLen(ctx, stream).Result()
	require.NoError(t, err)
	assert.Less(t, length, int64(n), "-stream-max-len trims")
	last, err := rdb.XRevRangeN(ctx, stream, "+", "-", 1).Result()
	require.NoError(t, err)
	require.Len(t, last, 1)
	assert.Equal(t, fmt.Sprint("k", n-1), last[0].Values[rediswheel.StreamFieldKey])
}
