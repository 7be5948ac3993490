package server

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A receiver that answers 202 Accepted and finishes its work later through
// the API, on every store: /complete makes the task done, /fail permanent
// dead, and a task left uncompleted past its completion_timeout is
// delivered again, the first token then refused with 409.
func TestAsyncCompletion(t *testing.T) {
	eachStore(t, testAsyncCompletion)
}

type accepted struct{ key, token, attempt string }

func testAsyncCompletion(t *testing.T, cfg config.Config) {
	calls := make(chan accepted, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls <- accepted{r.Header.Get(durable.HeaderIdempotencyKey), r.Header.Get(durable.HeaderCompletionToken), r.Header.Get(durable.HeaderAttempt)}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer hook.Close()
	cfg.AllowCallback = []string{hook.Listener.Addr().String()}
	cfg.Retention = time.Hour
	s := newServer(t, cfg)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, ln) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(redistest.WaitBound):
			t.Fatalf("Run did not return %v after its context ended", redistest.WaitBound)
		}
	}()

	call := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		req, err := http.NewRequest(method, base+path, strings.NewReader(string(raw)))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+cfg.Token)
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
	next := func(key string) accepted {
		t.Helper()
		select {
		case c := <-calls:
			require.Equal(t, key, c.key)
			require.NotEmpty(t, c.token, "X-Completion-Token")
			return c
		case <-time.After(redistest.WaitBound):
			t.Fatalf("waited %v for the callback of %s", redistest.WaitBound, key)
			panic("unreachable")
		}
	}
	create := func(key, completionTimeout string) {
		t.Helper()
		cb := map[string]any{"url": hook.URL + "/work", "method": "POST", "completion_timeout": completionTimeout}
		code, out := call("POST", "/v1/tasks", map[string]any{"key": key, "delay": "0s", "callback": cb})
		require.Equal(t, http.StatusCreated, code, "%v", out)
	}

	create("ok", "1h")
	c := next("ok")
	code, out := call("POST", "/v1/tasks/ok/complete", map[string]string{"token": c.token})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "done", out["state"])
	_, out = call("GET", "/v1/tasks/ok", nil)
	assert.Equal(t, "done", out["state"])
	assert.EqualValues(t, 1, out["attempts"])

	create("fails", "1h")
	c = next("fails")
	code, out = call("POST", "/v1/tasks/fails/fail", map[string]any{"token": c.token, "error": "no such order", "permanent": true})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "dead", out["state"])

	create("late", "300ms")
	first := next("late")
	second := next("late") // the completion timeout passed: delivered again
	assert.Equal(t, "2", second.attempt)
	code, out = call("POST", "/v1/tasks/late/complete", map[string]string{"token": first.token})
	assert.Equal(t, http.StatusConflict, code, "the first delivery's token: %v", out)
	code, out = call("POST", "/v1/tasks/late/complete", map[string]string{"token": second.token})
	require.Equal(t, http.StatusOK, code, "%v", out)
	_, out = call("GET", "/v1/tasks/late", nil)
	assert.Equal(t, "done", out["state"])
	assert.EqualValues(t, 2, out["attempts"])
}
