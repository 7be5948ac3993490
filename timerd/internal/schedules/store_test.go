package schedules

import (
	"context"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStore(t *testing.T) {
	redistest.Each(t, func(t *testing.T, c redis.UniversalClient) {
		ns := redistest.Namespace(t, c)
		s := New(RedisDefinitions(c, ns), newQueue(t, c, ns), nil)
		ctx := context.Background()
		cb := rediswheel.HTTPTask{URL: "https://example.com/h", Method: "POST", Body: []byte("x")}

		_, err := s.Get(ctx, "b")
		assert.ErrorIs(t, err, ErrNotFound)
		list, err := s.List(ctx)
		require.NoError(t, err)
		assert.Empty(t, list)

		created, err := s.Put(ctx, Definition{Name: "b", Every: time.Hour, Callback: cb})
		require.NoError(t, err)
		assert.True(t, created)
		created, err = s.Put(ctx, Definition{Name: "a", Cron: "0 3 * * *", Callback: cb, MaxAttempts: 2})
		require.NoError(t, err)
		assert.True(t, created)

		b1, err := s.Get(ctx, "b")
		require.NoError(t, err)
		assert.Equal(t, time.Hour, b1.Every)
		assert.Equal(t, cb, b1.Callback)
		assert.Len(t, b1.Version, 12)

		created, err = s.Put(ctx, Definition{Name: "b", Every: time.Hour, Callback: cb, Version: "ignored"})
		require.NoError(t, err)
		assert.False(t, created, "put again")
		b2, _ := s.Get(ctx, "b")
		assert.Equal(t, b1.Version, b2.Version, "same content, same version")

		created, err = s.Put(ctx, Definition{Name: "b", Every: 2 * time.Hour, Callback: cb})
		require.NoError(t, err)
		assert.False(t, created, "replaced")
		b3, _ := s.Get(ctx, "b")
		assert.Equal(t, 2*time.Hour, b3.Every)
		assert.NotEqual(t, b1.Version, b3.Version)

		_, err = s.Put(ctx, Definition{Name: "c", Callback: cb})
		assert.ErrorIs(t, err, ErrTiming)
		_, err = s.Get(ctx, "c")
		assert.ErrorIs(t, err, ErrNotFound, "a bad definition stores nothing")

		list, err = s.List(ctx)
		require.NoError(t, err)
		require.Len(t, list, 2)
		assert.Equal(t, "a", list[0].Name, "by name")
		assert.Equal(t, "0 3 * * *", list[0].Cron)
		assert.Equal(t, 2, list[0].MaxAttempts)
		assert.Equal(t, "b", list[1].Name)

		ok, err := s.Delete(ctx, "b")
		require.NoError(t, err)
		assert.True(t, ok)
		ok, err = s.Delete(ctx, "b")
		require.NoError(t, err)
		assert.False(t, ok)
		_, err = s.Get(ctx, "b")
		assert.ErrorIs(t, err, ErrNotFound)
		list, _ = s.List(ctx)
		assert.Len(t, list, 1)
	})
}

func TestStoreSkipsUnreadable(t *testing.T) {
	redistest.Each(t, func(t *testing.T, c redis.UniversalClient) {
		ns := redistest.Namespace(t, c)
		defs := RedisDefinitions(c, ns)
		s := New(defs, newQueue(t, c, ns), nil)
		ctx := context.Background()
		_, err := defs.Swap(ctx, "future", []byte(`{"v":9}`))
		require.NoError(t, err)
		_, err = s.Put(ctx, Definition{Name: "ok", Every: time.Hour, Callback: rediswheel.HTTPTask{URL: "http://h/", Method: "GET"}})
		require.NoError(t, err)
		list, err := s.List(ctx)
		require.NoError(t, err)
		require.Len(t, list, 1, "a definition of a newer version is skipped, not guessed at")
		assert.Equal(t, "ok", list[0].Name)
		_, err = s.Get(ctx, "future")
		assert.ErrorContains(t, err, "version 9")
	})
}

func BenchmarkPoll(b *testing.B) {
	c := redis.NewClient(&redis.Options{Addr: envAddr(b)})
	defer c.Close()
	q, err := rediswheel.New(c, rediswheel.Options{Namespace: "tdbench.poll", Shards: 4})
	require.NoError(b, err)
	s := New(RedisDefinitions(c, "tdbench.poll"), q, nil)
	ctx := context.Background()
	defer c.Del(ctx, "{tdbench.poll.timerd}:schedules")
	for i := range 100 {
		_, err := s.Put(ctx, Definition{Name: "s" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Every: time.Hour,
			Callback: rediswheel.HTTPTask{URL: "https://example.com/hook", Method: "POST", Body: []byte(`{"report":"nightly"}`)}})
		require.NoError(b, err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := s.read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
