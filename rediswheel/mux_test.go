package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMuxRoutes calls Mux.Handler with tasks of each type, as Run would.
func TestMuxRoutes(t *testing.T) {
	seen := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		seen <- r
	}))
	defer srv.Close()

	var emails, untyped recorder
	emails.reply = func(ctx context.Context, t Task) error {
		if string(t.Payload) == "bounce" {
			return Permanent(errors.New("bounced"))
		}
		return nil
	}
	m := NewMux()
	m.Handle(HTTPTaskType, HTTPHandler(srv.Client()))
	m.HandleFunc("email", emails.handle)
	m.Handle("", untyped.handle)
	ctx := context.Background()

	payload, err := encodeHTTPTask("hook-1", HTTPTask{URL: srv.URL + "/hook", Method: "POST"})
	require.NoError(t, err)
	require.NoError(t, m.Handler(ctx, Task{Key: "hook-1", Type: HTTPTaskType, Payload: payload, Attempt: 2}))
	r := await(t, seen, "the HTTP request")
	assert.Equal(t, "/hook", r.URL.Path)
	assert.Equal(t, "hook-1", r.Header.Get(HeaderIdempotencyKey))
	assert.Equal(t, "2", r.Header.Get(HeaderAttempt), "the task reaches the handler as it came")

	require.NoError(t, m.Handler(ctx, Task{Key: "mail-1", Type: "email", Payload: []byte("hi")}))
	err = m.Handler(ctx, Task{Key: "mail-2", Type: "email", Payload: []byte("bounce")})
	assert.True(t, IsPermanent(err), "the handler's error comes back unchanged: %v", err)
	assert.EqualError(t, err, "bounced")
	assert.NotErrorIs(t, err, ErrNoHandler)
	require.NoError(t, m.Handler(ctx, Task{Key: "plain", Payload: []byte("x")}))

	var keys []string
	for _, task := range emails.tasks() {
		keys = append(keys, task.Key)
	}
	assert.Equal(t, []string{"mail-1", "mail-2"}, keys)
	require.Len(t, untyped.tasks(), 1)
	assert.Equal(t, "plain", untyped.tasks()[0].Key)

	for _, typ := range []string{"sms", "Email", "email ", "http/2"} {
		err := m.Handler(ctx, Task{Key: "k", Type: typ})
		assert.True(t, IsPermanent(err), "type %q: %v", typ, err)
		assert.ErrorIs(t, err, ErrNoHandler)
		assert.EqualError(t, err, fmt.Sprintf("rediswheel: no handler for task type %q", typ))
	}
	assert.Equal(t, 2, emails.count(), "types match exactly")
	assert.Equal(t, 1, untyped.count(), `"" is not a catch-all`)

	err = NewMux().Handler(ctx, Task{Key: "k"})
	assert.ErrorIs(t, err, ErrNoHandler)
	assert.True(t, IsPermanent(err))
	assert.EqualError(t, err, `rediswheel: no handler for task type ""`)
}

func TestMuxPanics(t *testing.T) {
	h := func(context.Context, Task) error { return nil }
	m := NewMux()
	m.Handle("a", h)
	assert.PanicsWithValue(t, `rediswheel: Mux.Handle: type "a" registered twice`, func() { m.Handle("a", h) })
	assert.PanicsWithValue(t, `rediswheel: Mux.Handle: type "a" registered twice`, func() { m.HandleFunc("a", h) })
	assert.PanicsWithValue(t, `rediswheel: Mux.Handle: nil handler for type "b"`, func() { m.Handle("b", nil) })
	assert.PanicsWithValue(t, `rediswheel: Mux.HandleFunc: nil func for type "b"`, func() { m.HandleFunc("b", nil) })
	for _, typ := range []string{"new\nline", "tab\t", "del\x7f", "é", strings.Repeat("t", MaxTypeLen+1)} {
		assert.PanicsWithValue(t, fmt.Sprintf("rediswheel: Mux.Handle: type %q is not printable ASCII of at most %d bytes", typ, MaxTypeLen),
			func() { m.Handle(typ, h) }, "%q", typ)
	}
	// None of the refused registrations took effect.
	assert.ErrorIs(t, m.Handler(context.Background(), Task{Type: "b"}), ErrNoHandler)
	m.Handle(strings.Repeat("t", MaxTypeLen), h)
	m.Handle(" ~!|", h)
	m.Handle("", h)

	var zero Mux // ready to use, as http.ServeMux is
	zero.Handle("a", h)
	assert.NoError(t, zero.Handler(context.Background(), Task{Type: "a"}))
}

// TestMuxConcurrentHandle registers handlers while tasks are routed, as a program may while Run
// delivers; -race checks the locking.
func TestMuxConcurrentHandle(t *testing.T) {
	m := NewMux()
	var wg sync.WaitGroup
	const types = 50
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range types {
			m.HandleFunc(fmt.Sprint("t", i), func(context.Context, Task) error { return nil })
		}
	}()
	go func() {
		defer wg.Done()
		for i := range 10 * types {
			err := m.Handler(context.Background(), Task{Type: fmt.Sprint("t", i%types)})
			if err != nil {
				assert.ErrorIs(t, err, ErrNoHandler)
			}
		}
	}()
	awaitDone(t, "the adders", wg.Wait)
	for i := range types {
		assert.NoError(t, m.Handler(context.Background(), Task{Type: fmt.Sprint("t", i)}))
	}
}

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
		assert.Equal(t, `rediswheel: no handler for task type ""`, d.LastError)
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
	q, err := New(client, Options{Namespace: "orders"})
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
