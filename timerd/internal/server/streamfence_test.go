package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/go-timingwheel/timingwheel/timerd/internal/ssrf"
)

// Stream names are fenced on every store: a stream task may name only a
// stream of -stream-allow, never a key of the store's own ({<namespace>.…},
// which on Redis an XADD would turn into a stream under the store's feet)
// nor another application's key. The refused create is 400 naming
// stream.name, and the key is not created.
func TestStreamNamesFenced(t *testing.T) {
	eachStore(t, func(t *testing.T, cfg config.Config) {
		if cfg.Store != config.StoreRedis {
			cfg.Streams.RedisURL = "redis://" + redisAddr(t) + "/0"
		}
		cfg.Streams.Allow = []string{"timerd-test-fence:" + cfg.Namespace + ":*"}
		ctx := context.Background()
		rdb := redis.NewClient(&redis.Options{Addr: redisAddr(t)})
		defer rdb.Close()
		base, stop := runServer(t, cfg)
		defer stop()

		storeKey := "{" + cfg.Namespace + ".1}:due"
		for _, name := range []string{storeKey, "{" + cfg.Namespace + ".timerd}:schedules", "other-app:" + cfg.Namespace} {
			code, out := apiCall(t, base, cfg.Token, "POST", "/v1/tasks", map[string]any{"key": "k", "delay": "0s",
				"stream": map[string]any{"name": name, "fields": map[string]string{"a": "b"}}})
			require.Equal(t, http.StatusBadRequest, code, "%s: %v", name, out)
			e := out["error"].(map[string]any)
			assert.Equal(t, "stream.name", e["field"], name)
			n, err := rdb.Exists(ctx, name).Result()
			require.NoError(t, err)
			if name != storeKey || cfg.Store != config.StoreRedis {
				assert.Zero(t, n, "%s not created", name)
			}
			typ, err := rdb.Type(ctx, name).Result()
			require.NoError(t, err)
			assert.NotEqual(t, "stream", typ, name)
		}
		ok := "timerd-test-fence:" + cfg.Namespace + ":orders"
		defer rdb.Del(ctx, ok)
		code, out := apiCall(t, base, cfg.Token, "POST", "/v1/tasks", map[string]any{"key": "k", "delay": "1h",
			"stream": map[string]any{"name": ok, "fields": map[string]string{"a": "b"}}})
		require.Equal(t, http.StatusCreated, code, "%v", out)
	})
}

// The workers check the name again at delivery: a stream task stored
// before the allowlist changed, or by a process with another, is
// dead-lettered (Permanent) without an XADD.
func TestStreamFenceAtDelivery(t *testing.T) {
	ctx := context.Background()
	guard, err := ssrf.New(nil)
	require.NoError(t, err)
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr(t)})
	defer rdb.Close()
	streams := config.Streams{Allow: []string{"timerd-test-fence-ok:*"}}
	ns := fmt.Sprintf("timerd-test-fence.%d", time.Now().UnixNano())
	h := fenceStreams(workerHandler(guard, 0, rdb, 0), func(name string) error { return streams.CheckName(name, ns) })
	for _, name := range []string{"{" + ns + ".3}:due", "timerd-test-fence-other"} {
		payload, err := rediswheel.EncodeStreamTask(rediswheel.StreamTask{Stream: name, Fields: map[string]string{"a": "b"}})
		require.NoError(t, err)
		err = h(ctx, rediswheel.Task{Key: "k", Type: rediswheel.StreamTaskType, Payload: payload, Attempt: 1})
		require.Error(t, err, name)
		assert.True(t, rediswheel.IsPermanent(err), "%s: %v", name, err)
		n, err := rdb.Exists(ctx, name).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "%s not created", name)
	}
	ok := fmt.Sprintf("timerd-test-fence-ok:%p", h)
	defer rdb.Del(ctx, ok)
	payload, err := rediswheel.EncodeStreamTask(rediswheel.StreamTask{Stream: ok, Fields: map[string]string{"a": "b"}})
	require.NoError(t, err)
	require.NoError(t, h(ctx, rediswheel.Task{Key: "k", Type: rediswheel.StreamTaskType, Payload: payload, Attempt: 1}))
}
