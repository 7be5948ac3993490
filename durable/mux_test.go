package durable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

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
		assert.EqualError(t, err, fmt.Sprintf("durable: no handler for task type %q", typ))
	}
	assert.Equal(t, 2, emails.count(), "types match exactly")
	assert.Equal(t, 1, untyped.count(), `"" is not a catch-all`)

	err = NewMux().Handler(ctx, Task{Key: "k"})
	assert.ErrorIs(t, err, ErrNoHandler)
	assert.True(t, IsPermanent(err))
	assert.EqualError(t, err, `durable: no handler for task type ""`)
}

func TestMuxPanics(t *testing.T) {
	h := func(context.Context, Task) error { return nil }
	m := NewMux()
	m.Handle("a", h)
	assert.PanicsWithValue(t, `durable: Mux.Handle: type "a" registered twice`, func() { m.Handle("a", h) })
	assert.PanicsWithValue(t, `durable: Mux.Handle: type "a" registered twice`, func() { m.HandleFunc("a", h) })
	assert.PanicsWithValue(t, `durable: Mux.Handle: nil handler for type "b"`, func() { m.Handle("b", nil) })
	assert.PanicsWithValue(t, `durable: Mux.HandleFunc: nil func for type "b"`, func() { m.HandleFunc("b", nil) })
	for _, typ := range []string{"new\nline", "tab\t", "del\x7f", "é", strings.Repeat("t", MaxTypeLen+1)} {
		assert.PanicsWithValue(t, fmt.Sprintf("durable: Mux.Handle: type %q is not printable ASCII of at most %d bytes", typ, MaxTypeLen),
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
