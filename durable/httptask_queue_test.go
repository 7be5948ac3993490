package durable_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTTPHandlerQueue runs HTTP callbacks through a Queue.
func TestHTTPHandlerQueue(t *testing.T) {
	q := newQueue(t, 2, durable.Options{
		Lease:       time.Second,
		MaxAttempts: 5,
		Backoff:     func(int) time.Duration { return 20 * time.Millisecond },
		Concurrency: 4,
	})

	var mu sync.Mutex
	attempts := map[string][]string{} // path -> HeaderAttempt of each request
	keys := map[string][]string{}     // path -> HeaderIdempotencyKey of each request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		attempts[r.URL.Path] = append(attempts[r.URL.Path], r.Header.Get(durable.HeaderAttempt))
		keys[r.URL.Path] = append(keys[r.URL.Path], r.Header.Get(durable.HeaderIdempotencyKey))
		switch {
		case r.URL.Path == "/gone":
			http.Error(w, "no such hook", http.StatusNotFound)
		case len(attempts[r.URL.Path]) < 3:
			http.Error(w, "try later", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	stop := run(t, q, durable.HTTPHandler(srv.Client()))

	ctx := context.Background()
	added, err := q.AddHTTP(ctx, "flaky", durable.HTTPTask{URL: srv.URL + "/flaky", Method: "POST", Body: []byte("x")}, time.Now())
	require.NoError(t, err)
	require.True(t, added)
	added, err = q.AddHTTPAfter(ctx, "gone", durable.HTTPTask{URL: srv.URL + "/gone", Method: "DELETE"}, 0)
	require.NoError(t, err)
	require.True(t, added)

	eventually(t, "flaky done and gone dead", func() bool {
		s := totals(t, q)
		return s.Due == 0 && s.Scheduled == 0 && s.InFlight == 0 && s.Dead == 1
	})
	stop()

	dead, err := q.Dead(ctx, 10)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, "gone", dead[0].Key)
	assert.Contains(t, dead[0].LastError, "404")
	assert.Contains(t, dead[0].LastError, "no such hook")

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"1", "2", "3"}, attempts["/flaky"], "503, 503, then 200")
	assert.Equal(t, []string{"flaky", "flaky", "flaky"}, keys["/flaky"])
	assert.Equal(t, []string{"1"}, attempts["/gone"], "a 404 is not retried")
	assert.Equal(t, []string{"gone"}, keys["/gone"])
}
