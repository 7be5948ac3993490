package durable_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMuxRun runs a Mux in Run: a task whose type has no handler goes to the
// dead set at once, whatever attempts remain, and comes back with Requeue once a handler is
// registered, while Run goes on.
func TestMuxRun(t *testing.T) {
	q := newQueue(t, 2, durable.Options{Lease: 5 * time.Second, MaxAttempts: 10, Concurrency: 4})
	ctx := context.Background()
	m := durable.NewMux()
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
	eventually(t, "the untyped tasks dead", func() bool { return totals(t, q).Dead == n })
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
	eventually(t, "the requeued tasks done", func() bool { return untyped.count() == n && totals(t, q) == durable.ShardStats{} })
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

// An HTTP callback and a Go task share one namespace and one Run: AddHTTP
// types its task HTTPTaskType, and the Mux sends each type to its handler.
func TestMuxRoutesHTTPAndGoTasks(t *testing.T) {
	var hits sync.Map // Idempotency-Key -> struct{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.Header.Get(durable.HeaderIdempotencyKey), struct{}{})
	}))
	defer srv.Close()
	q := newQueue(t, 2, durable.Options{Concurrency: 4})
	ctx := context.Background()
	m := durable.NewMux()
	m.Handle(durable.HTTPTaskType, durable.HTTPHandler(srv.Client()))
	var emails recorder
	m.HandleFunc("email", emails.handle)
	stop := run(t, q, m.Handler)
	defer stop()

	added, err := q.AddHTTP(ctx, "hook", durable.HTTPTask{URL: srv.URL, Method: "POST"}, time.Now())
	require.NoError(t, err)
	require.True(t, added)
	added, err = q.Add(ctx, "mail", []byte("hi"), time.Now(), durable.TaskType("email"))
	require.NoError(t, err)
	require.True(t, added)

	eventually(t, "both tasks done", func() bool {
		_, called := hits.Load("hook")
		return called && emails.count() == 1 && totals(t, q) == durable.ShardStats{}
	})
	got := emails.tasks()[0]
	assert.Equal(t, "mail", got.Key)
	assert.Equal(t, "email", got.Type)
}
