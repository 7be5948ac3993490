package api

import (
	"github.com/go-timingwheel/timingwheel/durable"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// A traceparent given on create is stored with the task, shown by the
// create and GET answers until the task finishes, and sent with every
// delivery, a retry included.
func TestTraceparent(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		var mu sync.Mutex
		var got []string // each delivery's traceparent
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, r.Header.Get("Traceparent"))
			if len(got) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable) // retried
			}
		}))
		defer hook.Close()
		f := newFixture(t, s, durable.Options{Backoff: func(int) time.Duration { return 0 }, Retention: time.Hour})
		f.worker()

		tp := http.Header{"Traceparent": {traceparent}}
		r := f.doWith(tp, "POST", "/v1/tasks", createBody("later", "1h", "https://e.com/"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		assert.Equal(t, traceparent, r.body["traceparent"])
		r = f.do("GET", "/v1/tasks/later", "")
		assert.Equal(t, traceparent, r.body["traceparent"], "GET shows it: %s", r.raw)
		r = f.do("POST", "/v1/tasks", createBody("later", "1h", "https://e.com/"))
		assert.Equal(t, traceparent, r.body["traceparent"], "the existing task's, on a repeated create: %s", r.raw)
		r = f.do("POST", "/v1/tasks", createBody("plain", "1h", "https://e.com/"))
		assert.NotContains(t, r.body, "traceparent", "none given")

		r = f.doWith(tp, "POST", "/v1/tasks", createBody("now", "0s", hook.URL))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		eventually(t, redistest.WaitBound, "two deliveries", func() bool {
			r = f.do("GET", "/v1/tasks/now", "")
			return r.body["state"] == "done"
		})
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []string{traceparent, traceparent}, got, "every delivery carries it")
		assert.NotContains(t, r.body, "traceparent", "a finished task's payload is freed (README.md): %s", r.raw)
	})
}

// A bad traceparent is refused, naming it, and nothing is stored.
func TestBadTraceparent(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		for _, tc := range []struct {
			name, field string
			header      http.Header
			body        string
		}{
			{"upper-case hex", "traceparent", http.Header{"Traceparent": {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"}}, ""},
			{"zero trace id", "traceparent", http.Header{"Traceparent": {"00-00000000000000000000000000000000-00f067aa0ba902b7-01"}}, ""},
			{"zero parent id", "traceparent", http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"}}, ""},
			{"version ff", "traceparent", http.Header{"Traceparent": {"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}, ""},
			{"short", "traceparent", http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01"}}, ""},
			{"extra field", "traceparent", http.Header{"Traceparent": {traceparent + "-xx"}}, ""},
			{"not hex", "traceparent", http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01"}}, ""},
			{"twice", "traceparent", http.Header{"Traceparent": {traceparent, traceparent}}, ""},
			{"also in callback.headers", "callback.headers.traceparent", http.Header{"Traceparent": {traceparent}},
				`{"key":"k","delay":"1h","callback":{"url":"https://e.com/","method":"POST","headers":{"traceparent":["` + traceparent + `"]}}}`},
		} {
			body := tc.body
			if body == "" {
				body = createBody("k", "1h", "https://e.com/")
			}
			r := f.doWith(tc.header, "POST", "/v1/tasks", body)
			assert.Equal(t, http.StatusBadRequest, r.status, "%s: %s", tc.name, r.raw)
			assert.Equal(t, "invalid_argument", r.errCode(), tc.name)
			assert.Equal(t, tc.field, r.errField(), tc.name)
		}
		f.nothingStored()
	})
}
