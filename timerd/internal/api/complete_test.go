package api

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// receive takes one value from ch, failing t after redistest.WaitBound.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(redistest.WaitBound):
		t.Fatalf("waited %v for %s", redistest.WaitBound, what)
		panic("unreachable")
	}
}

// asyncCall is one callback the asyncReceiver got.
type asyncCall struct {
	key, token string
	attempt    string
}

// asyncReceiver answers every callback 202 Accepted and reports it.
func asyncReceiver(t *testing.T) (*httptest.Server, <-chan asyncCall) {
	calls := make(chan asyncCall, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls <- asyncCall{r.Header.Get(durable.HeaderIdempotencyKey), r.Header.Get(durable.HeaderCompletionToken), r.Header.Get(durable.HeaderAttempt)}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	return srv, calls
}

func asyncBody(key, url, completionTimeout string) string {
	cb := map[string]any{"url": url, "method": "POST"}
	if completionTimeout != "" {
		cb["completion_timeout"] = completionTimeout
	}
	return jsonBody(map[string]any{"key": key, "delay": "0s", "callback": cb})
}

// A callback that answers 202 leaves its task in flight until /complete or
// /fail with the token it was sent; a stale token is 409 and changes
// nothing; a bad or missing one 400.
func TestCompleteAndFail(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{Retention: time.Hour, Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
		f.worker()
		srv, calls := asyncReceiver(t)

		r := f.do("POST", "/v1/tasks", asyncBody("order/1", srv.URL, ""))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		call := receive(t, calls, "the callback")
		require.NotEmpty(t, call.token, "the callback carries X-Completion-Token")
		path := "/v1/tasks/" + url.PathEscape("order/1")
		eventually(t, redistest.WaitBound, "the task waiting for completion", func() bool {
			r := f.do("GET", path, "")
			lease, _ := r.body["lease_expires_at"].(string)
			at, err := time.Parse(time.RFC3339, lease)
			// The default completion timeout is an hour; a heartbeat's lease is 30s.
			return r.body["state"] == "in_flight" && err == nil && at.After(time.Now().Add(50*time.Minute))
		})

		r = f.do("POST", path+"/complete", jsonBody(map[string]string{"token": call.token + "9"}))
		assert.Equal(t, http.StatusConflict, r.status, "a stale token: %s", r.raw)
		r = f.do("POST", path+"/complete", jsonBody(map[string]string{"token": "nonsense"}))
		assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.raw)
		assert.Equal(t, "token", r.errField())
		r = f.do("POST", path+"/complete", `{}`)
		assert.Equal(t, "token", r.errField(), "a missing token: %s", r.raw)
		assert.Equal(t, "in_flight", f.do("GET", path, "").body["state"], "refused completions change nothing")

		r = f.do("POST", path+"/complete", jsonBody(map[string]string{"token": call.token}))
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, "done", r.body["state"])
		assert.Equal(t, "done", f.do("GET", path, "").body["state"])
		r = f.do("POST", path+"/complete", jsonBody(map[string]string{"token": call.token}))
		assert.Equal(t, http.StatusConflict, r.status, "completed twice: %s", r.raw)

		// /fail: retried with a new token, the attempt counted; then permanent.
		require.Equal(t, http.StatusCreated, f.do("POST", "/v1/tasks", asyncBody("order/2", srv.URL, "")).status)
		first := receive(t, calls, "the callback of order/2")
		path = "/v1/tasks/" + url.PathEscape("order/2")
		r = f.do("POST", path+"/fail", jsonBody(map[string]any{"token": first.token, "error": "out of stock"}))
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, "retrying", r.body["state"])
		second := receive(t, calls, "the retry of order/2")
		assert.Equal(t, "2", second.attempt)
		assert.NotEqual(t, first.token, second.token)
		r = f.do("POST", path+"/fail", jsonBody(map[string]any{"token": first.token}))
		assert.Equal(t, http.StatusConflict, r.status, "the first delivery's token: %s", r.raw)
		r = f.do("POST", path+"/fail", jsonBody(map[string]any{"token": second.token, "error": "order unknown", "permanent": true}))
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, "dead", r.body["state"])
		r = f.do("GET", path, "")
		assert.Equal(t, "dead", r.body["state"])
		assert.Equal(t, "order unknown", r.body["last_error"])
	})
}

// A task not completed within its completion_timeout is delivered again,
// its attempt counted, and the old token is then refused.
func TestCompletionTimeoutPasses(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{PollInterval: 50 * time.Millisecond})
		f.worker()
		srv, calls := asyncReceiver(t)
		r := f.do("POST", "/v1/tasks", asyncBody("k", srv.URL, "200ms"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		first := receive(t, calls, "the first callback")
		second := receive(t, calls, "the callback after the completion timeout")
		assert.Equal(t, "2", second.attempt)
		r = f.do("POST", "/v1/tasks/k/complete", jsonBody(map[string]string{"token": first.token}))
		assert.Equal(t, http.StatusConflict, r.status, "%s", r.raw)
		r = f.do("GET", "/v1/tasks/k", "")
		assert.Equal(t, "lease expired", r.body["last_error"], "%s", r.raw)
		r = f.do("POST", "/v1/tasks/k/complete", jsonBody(map[string]string{"token": second.token}))
		assert.Equal(t, http.StatusOK, r.status, "%s", r.raw)

		for _, bad := range []string{"0s", "-1s", "169h", "soon"} {
			r := f.do("POST", "/v1/tasks", asyncBody("bad", srv.URL, bad))
			assert.Equal(t, "callback.completion_timeout", r.errField(), "%s: %s", bad, r.raw)
		}
	})
}
