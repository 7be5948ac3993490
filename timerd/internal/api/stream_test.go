package api

import (
	"context"
	"github.com/go-timingwheel/timingwheel/durable"
	"net/http"
	"strings"
	"testing"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamBody is a create request for a stream task under key.
func streamBody(key, delay, stream string, fields map[string]string) string {
	return jsonBody(map[string]any{"key": key, "delay": delay, "stream": map[string]any{"name": stream, "fields": fields}})
}

// A stream task is stored as rediswheel's StreamTask under StreamTaskType,
// the traceparent among its fields; the answers about it show its kind and
// stream (not its fields), lists its kind.
func TestStreamTask(t *testing.T) {
	redistest.Each(t, func(t *testing.T, c redis.UniversalClient) {
		f := newFixture(t, testStore{redis: c}, durable.Options{})
		ctx := context.Background()
		fields := map[string]string{"order": "1001", "event": "lapsed"}
		r := f.doWith(http.Header{"Traceparent": {traceparent}}, "POST", "/v1/tasks", streamBody("order:1001/expire", "1h", "orders", fields))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		assert.Equal(t, true, r.body["created"])
		assert.Equal(t, "stream", r.body["kind"])
		assert.Equal(t, map[string]any{"name": "orders"}, r.body["stream"])
		assert.Equal(t, traceparent, r.body["traceparent"])

		info, err := f.q.Get(ctx, "order:1001/expire")
		require.NoError(t, err)
		assert.Equal(t, rediswheel.StreamTaskType, info.Type, "StreamHandler's type, for the workers' Mux")
		p, err := f.q.Store().(*rediswheel.Store).Payload(ctx, "order:1001/expire")
		require.NoError(t, err)
		st, err := rediswheel.DecodeStreamTask(p)
		require.NoError(t, err, "EncodeStreamTask's payload")
		assert.Equal(t, rediswheel.StreamTask{Stream: "orders",
			Fields: map[string]string{"order": "1001", "event": "lapsed", "traceparent": traceparent}}, st)

		for _, r := range []reply{
			f.do("GET", "/v1/tasks/order:1001%2Fexpire", ""),
			// The key again, with a callback: the stream task, unchanged.
			f.do("POST", "/v1/tasks", createBody("order:1001/expire", "1s", "https://example.com/")),
		} {
			require.Less(t, r.status, 300, "%s", r.raw)
			assert.Equal(t, "stream", r.body["kind"])
			assert.Equal(t, map[string]any{"name": "orders"}, r.body["stream"])
			assert.Equal(t, traceparent, r.body["traceparent"])
			assert.NotContains(t, string(r.raw), "lapsed", "the fields are not shown")
		}

		r = f.do("POST", "/v1/tasks", createBody("cb", "1h", "https://example.com/"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		assert.Equal(t, "callback", r.body["kind"])
		assert.NotContains(t, r.body, "stream")
		r = f.do("GET", "/v1/tasks/cb", "")
		assert.Equal(t, "callback", r.body["kind"])
		assert.NotContains(t, r.body, "stream")

		r = f.do("GET", "/v1/tasks?state=scheduled", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		kinds := map[string]any{}
		for _, task := range r.body["tasks"].([]any) {
			task := task.(map[string]any)
			kinds[task["key"].(string)] = task["kind"]
			assert.NotContains(t, task, "stream", "lists do not read payloads")
		}
		assert.Equal(t, map[string]any{"order:1001/expire": "stream", "cb": "callback"}, kinds)
	})
}

// Exactly one of callback and stream; a bad stream is refused with the
// field at fault, by rediswheel's rules, and nothing is stored.
func TestStreamTaskBadInput(t *testing.T) {
	redistest.Each(t, func(t *testing.T, c redis.UniversalClient) {
		f := newFixture(t, testStore{redis: c}, durable.Options{})
		with := func(stream string) string { return `{"key":"k","delay":"1s","stream":` + stream + `}` }
		for _, tc := range []struct {
			name, body, field string
			header            http.Header
		}{
			{"both", `{"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GET"},"stream":{"name":"s","fields":{"a":"b"}}}`, "stream", nil},
			{"neither", `{"key":"k","delay":"1s"}`, "callback", nil},
			{"not an object", with(`"orders"`), "stream", nil},
			{"unknown field", with(`{"name":"s","fields":{"a":"b"},"maxlen":5}`), "stream.maxlen", nil},
			{"no name", with(`{"fields":{"a":"b"}}`), "stream.name", nil},
			{"long name", with(`{"name":"` + strings.Repeat("s", rediswheel.MaxStreamName+1) + `","fields":{"a":"b"}}`), "stream.name", nil},
			{"no fields", with(`{"name":"s"}`), "stream.fields", nil},
			{"empty fields", with(`{"name":"s","fields":{}}`), "stream.fields", nil},
			{"field set by the handler", with(`{"name":"s","fields":{"a":"b","task_key":"x"}}`), "stream.fields.task_key", nil},
			{"attempt set by the handler", with(`{"name":"s","fields":{"task_attempt":"1"}}`), "stream.fields.task_attempt", nil},
			{"number value", with(`{"name":"s","fields":{"a":1}}`), "stream.fields", nil}, // encoding/json names the map
			{"traceparent twice", with(`{"name":"s","fields":{"traceparent":"x"}}`), "stream.fields.traceparent",
				http.Header{"Traceparent": {traceparent}}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := f.doWith(tc.header, "POST", "/v1/tasks", tc.body)
				assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.raw)
				assert.Equal(t, "invalid_argument", r.errCode(), "%s", r.raw)
				assert.Equal(t, tc.field, r.errField(), "%s", r.raw)
			})
		}
		f.nothingStored()
	})
}

// A server without a Redis for streams refuses stream tasks at create,
// naming stream and the flag that gives one, and stores nothing; callbacks
// are unaffected.
func TestStreamTaskWithoutRedis(t *testing.T) {
	redistest.Each(t, func(t *testing.T, c redis.UniversalClient) {
		f := newFixtureWith(t, testStore{redis: c}, durable.Options{}, func(cfg *Config) { cfg.Streams = false })
		r := f.do("POST", "/v1/tasks", streamBody("k", "1s", "orders", map[string]string{"a": "b"}))
		assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.raw)
		assert.Equal(t, "invalid_argument", r.errCode())
		assert.Equal(t, "stream", r.errField())
		assert.Contains(t, r.errPart("message"), "-stream-redis-url")
		f.nothingStored()
		r = f.do("POST", "/v1/tasks", createBody("k", "1h", "https://example.com/"))
		assert.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
	})
}
