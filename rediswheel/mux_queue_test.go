package rediswheel

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMuxRun runs a Mux in Run on REDISWHEEL_ADDR: a task whose type has no handler goes to the
// dead set at once, whatever attempts remain, and comes back with Requeue once a handler is
// registered, while Run goes on.
func TestMuxRun(t *testing.T) {
	q := newQueue(t, standalone(t), Options{Shards: 2, Lease: 5 * time.Second, MaxAttempts: 10, Concurrency: 4})
	ctx := context.Background()
	m := NewMux()
	var other recorder
	m.HandleFunc("other", other.handle)
	stop := run(t, q, m.Handler)

	// Untyped tasks (added without TaskType) with no handler for "".
	const n = 5
	for i := range n {
		added, err := q.Add(ctx, fmt.Sprint("k", i), []byte(fmt.Sprint("p", i)), time.Now())
		require.NoError(t, err)
		require.True(t, added)
	}
	eventually(t, patience, "the untyped tasks dead", func() bool { return totals(t, q).Dead == n })
	dead, err := q.Dead(ctx, 2*n)
	require.NoError(t, err)
	require.Len(t, dead, n)
	for _, d := range dead {
		assert.Equal(t, 1, d.Attempts, "dead at the first delivery: no retry can help")
		assert.Equal(t, `durable: no handler for task type ""`, d.LastError)
	}

	var untyped recorder
	m.Handle("", untyped.handle) // while Run delivers
	for i := range n {
		ok, err := q.Requeue(ctx, fmt.Sprint("k", i))
		require.NoError(t, err)
		require.True(t, ok)
	}
	eventually(t, patience, "the requeued tasks done", func() bool { return untyped.count() == n && totals(t, q) == ShardStats{} })
	stop()

	got := map[string]string{}
	for _, task := range untyped.tasks() {
		got[task.Key] = string(task.Payload)
		assert.Empty(t, task.Type)
	}
	for i := range n {
		assert.Equal(t, fmt.Sprint("p", i), got[fmt.Sprint("k", i)])
	}
	assert.Zero(t, other.count(), "no task reached another type's handler")
}

// A Mux lets HTTP callbacks and Go handlers share one namespace and one Run.
func ExampleMux() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	q, err := newTQ(client, Options{Namespace: "orders"})
	if err != nil {
		panic(err)
	}
	m := NewMux()
	m.Handle(HTTPTaskType, HTTPHandler(nil))
	m.HandleFunc("cancel-order", func(ctx context.Context, t Task) error {
		fmt.Printf("cancelling order %s\n", t.Payload)
		return nil
	})
	// Tasks added before types existed have the type "": route them too, or they go to the
	// dead set with ErrNoHandler.
	m.HandleFunc("", func(ctx context.Context, t Task) error { return nil })

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := q.Run(ctx, m.Handler); err != nil {
		panic(err)
	}
}

// An HTTP callback and a Go task share one namespace and one Run: AddHTTP
// types its task HTTPTaskType, and the Mux sends each type to its handler.
func TestMuxRoutesHTTPAndGoTasks(t *testing.T) {
	var hits sync.Map // Idempotency-Key -> struct{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.Header.Get(HeaderIdempotencyKey), struct{}{})
	}))
	defer srv.Close()
	q := newQueue(t, standalone(t), Options{Shards: 2, Concurrency: 4})
	ctx := context.Background()
	m := NewMux()
	m.Handle(HTTPTaskType, HTTPHandler(srv.Client()))
	var emails recorder
	m.HandleFunc("email", emails.handle)
	stop := run(t, q, m.Handler)
	defer stop()

	added, err := q.AddHTTP(ctx, "hook", HTTPTask{URL: srv.URL, Method: "POST"}, time.Now())
	require.NoError(t, err)
	require.True(t, added)
	added, err = q.Add(ctx, "mail", []byte("hi"), time.Now(), TaskType("email"))
	require.NoError(t, err)
	require.True(t, added)

	eventually(t, patience, "both tasks done", func() bool {
		_, called := hits.Load("hook")
		return called && emails.count() == 1 && totals(t, q) == ShardStats{}
	})
	got := emails.tasks()[0]
	assert.Equal(t, "mail", got.Key)
	assert.Equal(t, "email", got.Type)
}
