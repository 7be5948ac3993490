package api

import (
	"context"
	"fmt"
	"github.com/go-timingwheel/timingwheel/durable"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/go-timingwheel/timingwheel/timerd/internal/ssrf"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTaskLifecycle(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		due := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
		body := jsonBody(map[string]any{"key": "order:1001/cancel", "due_at": due.Format(time.RFC3339Nano),
			"callback": map[string]any{"url": "https://orders.example.com/hooks/cancel", "method": "POST",
				"headers": map[string]any{"Content-Type": []string{"application/json"}}, "body": `{"order":1001}`, "timeout": "10s"},
			"max_attempts": 10})

		r := f.do("POST", "/v1/tasks", body)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		assert.Equal(t, true, r.body["created"])
		assert.Equal(t, "order:1001/cancel", r.body["key"])
		assert.Equal(t, "scheduled", r.body["state"])
		assert.Equal(t, due.Format(timeLayout), r.body["due_at"])
		assert.Equal(t, due.Format(timeLayout), r.body["original_due_at"])
		assert.EqualValues(t, 10, r.body["max_attempts"])
		assert.EqualValues(t, 0, r.body["attempts"])
		assert.Equal(t, []any{}, r.body["deliveries"])
		assert.Nil(t, r.body["started_at"])

		// Idempotent: the same key again, whatever it asks, answers the existing task.
		r = f.do("POST", "/v1/tasks", createBody("order:1001/cancel", "1s", "https://other.example.com/"))
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, false, r.body["created"])
		assert.Equal(t, due.Format(timeLayout), r.body["due_at"], "the existing task, unchanged")

		path := "/v1/tasks/" + url.PathEscape("order:1001/cancel")
		r = f.do("GET", path, "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, "scheduled", r.body["state"])
		assert.NotContains(t, r.body, "created", "created is only in the create reply")

		later := due.Add(time.Hour)
		r = f.do("POST", path+"/reschedule", jsonBody(map[string]any{"due_at": later.Format(time.RFC3339Nano)}))
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, later.Format(timeLayout), r.body["due_at"])
		assert.Equal(t, due.Format(timeLayout), r.body["original_due_at"], "the create's due time: reschedule keeps it")
		// A delay counts from the answering process's clock, read during
		// the request: not before it began, not after it ended (to the ms).
		before := time.Now()
		r = f.do("POST", path+"/reschedule", `{"delay":"2h"}`)
		after := time.Now()
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		got, err := time.Parse(time.RFC3339, r.body["due_at"].(string))
		require.NoError(t, err)
		assert.False(t, got.Before(before.Add(2*time.Hour).Truncate(time.Millisecond)), "due %v, request began %v", got, before)
		assert.False(t, got.After(after.Add(2*time.Hour+time.Millisecond)), "due %v, request ended %v", got, after)

		r = f.do("DELETE", path, "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, map[string]any{"cancelled": true}, r.body)
		r = f.do("DELETE", path, "")
		assert.Equal(t, http.StatusNotFound, r.status)
		assert.Equal(t, "not_found", r.errCode())
		r = f.do("GET", path, "")
		assert.Equal(t, http.StatusNotFound, r.status)
		r = f.do("POST", path+"/reschedule", `{"delay":"1m"}`)
		assert.Equal(t, http.StatusNotFound, r.status, "reschedule of nothing is 404")
	})
}

// TestDeliveryStates drives tasks through the worker: done (retained),
// dead, in flight; reschedule answers 409 for each, requeue brings the dead
// one back, and the deliveries are in the task, each with the callback's
// status code and response body (text as body, other bytes as body_base64).
// Done after a failure, the task has no last error; /v1/stats counts the
// states as the lists name them.
func TestDeliveryStates(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{Retention: time.Hour, Lease: time.Second})
		release := make(chan struct{})
		var gone atomic.Bool
		cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/gone":
				if gone.Load() {
					w.WriteHeader(http.StatusGone)
					w.Write([]byte("gone for good")) //nolint:errcheck // the test reads what arrived
				} else {
					w.Write([]byte(`{"ok":true}`)) //nolint:errcheck
				}
			case "/bin":
				w.Write([]byte{0xff, 0xfe, 0}) //nolint:errcheck
			case "/slow":
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
		}))
		defer cb.Close()
		defer close(release)
		gone.Store(true)
		f.worker()

		for _, k := range []string{"ok", "gone", "slow", "bin"} {
			r := f.do("POST", "/v1/tasks", createBody(k, "0s", cb.URL+"/"+k))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		}
		state := func(key string) string {
			r := f.do("GET", "/v1/tasks/"+key, "")
			s, _ := r.body["state"].(string)
			return s
		}
		eventually(t, redistest.WaitBound, "done, dead, in flight", func() bool {
			return state("ok") == "done" && state("gone") == "dead" && state("slow") == "in_flight" && state("bin") == "done"
		})
		result := func(key string, i int) any {
			ds, _ := f.do("GET", "/v1/tasks/"+key, "").body["deliveries"].([]any)
			require.Greater(t, len(ds), i, "%s's deliveries", key)
			return ds[i].(map[string]any)["result"]
		}
		assert.Equal(t, map[string]any{"status_code": 200.0, "body": "", "body_truncated": false}, result("ok", 0))
		assert.Equal(t, map[string]any{"status_code": 410.0, "body": "gone for good", "body_truncated": false}, result("gone", 0))
		assert.Equal(t, map[string]any{"status_code": 200.0, "body_base64": "//4A", "body_truncated": false}, result("bin", 0))

		r := f.do("GET", "/v1/tasks/gone", "")
		assert.Contains(t, r.body["last_error"], "410")
		ds := r.body["deliveries"].([]any)
		require.Len(t, ds, 1)
		d := ds[0].(map[string]any)
		assert.EqualValues(t, 1, d["attempt"])
		assert.Equal(t, "dead", d["outcome"])
		assert.NotEmpty(t, d["worker"])
		assert.NotNil(t, d["ended_at"])
		assert.NotNil(t, r.body["finished_at"])
		r = f.do("GET", "/v1/tasks/slow", "")
		assert.NotNil(t, r.body["lease_expires_at"])
		assert.Nil(t, r.body["due_at"])

		for _, k := range []string{"ok", "gone", "slow"} {
			r := f.do("POST", "/v1/tasks/"+k+"/reschedule", `{"delay":"1h"}`)
			assert.Equal(t, http.StatusConflict, r.status, "%s: %s", k, r.raw)
			assert.Equal(t, "conflict", r.errCode())
		}

		r = f.do("GET", "/v1/dead", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		tasks := r.body["tasks"].([]any)
		require.Len(t, tasks, 1)
		assert.Equal(t, "gone", tasks[0].(map[string]any)["key"])
		assert.Equal(t, "", r.body["next_cursor"])

		r = f.do("POST", "/v1/dead/ok/requeue", "")
		assert.Equal(t, http.StatusNotFound, r.status, "a done task is not dead")
		r = f.do("POST", "/v1/dead/nothing/requeue", "")
		assert.Equal(t, http.StatusNotFound, r.status)
		r = f.do("POST", "/v1/dead/gone/requeue", `{"x":1}`)
		assert.Equal(t, http.StatusBadRequest, r.status, "requeue takes no fields")
		assert.Equal(t, "x", r.errField())
		gone.Store(false)
		r = f.do("POST", "/v1/dead/gone/requeue", `{}`)
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, map[string]any{"requeued": true}, r.body)
		eventually(t, redistest.WaitBound, "the requeued task done", func() bool { return state("gone") == "done" })
		r = f.do("GET", "/v1/tasks/gone", "")
		assert.Equal(t, "", r.body["last_error"], "done after a failure: no last error")
		assert.Equal(t, map[string]any{"status_code": 200.0, "body": `{"ok":true}`, "body_truncated": false}, result("gone", 1))
		assert.Contains(t, r.body["deliveries"].([]any)[0].(map[string]any)["error"], "410", "the history keeps the failure")

		r = f.do("GET", "/v1/stats", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		total := r.body["total"].(map[string]any)
		assert.EqualValues(t, 1, total["in_flight"])
		assert.EqualValues(t, 3, total["retained"])
		assert.Equal(t, map[string]any{"scheduled": 0.0, "retrying": 0.0, "in_flight": 1.0, "dead": 0.0, "done": 3.0, "cancelled": 0.0},
			total["states"])
		assert.Len(t, r.body["shards"], f.q.Store().Partitions(), "one per partition: 4 on Redis here, 1 on SQLite")
		assert.NotContains(t, total, "shard")

		// A DELETE of a finished task kept for its retention forgets it,
		// and says so: nothing was cancelled.
		r = f.do("DELETE", "/v1/tasks/ok", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, map[string]any{"cancelled": false, "forgotten": true}, r.body, "a done task is forgotten, not cancelled")
		assert.Equal(t, http.StatusNotFound, f.do("GET", "/v1/tasks/ok", "").status)
	})
}

// TestCreateRace: many concurrent creates of one key store one task; one
// answer is 201, the others 200 with that task.
func TestCreateRace(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		const n = 20
		codes := make(chan int, n)
		for range n {
			go func() {
				resp, err := http.Post(f.api.URL+"/v1/tasks", "application/json",
					strings.NewReader(createBody("same", "1h", "https://example.com/")))
				if err != nil {
					codes <- 0
					return
				}
				resp.Body.Close()
				codes <- resp.StatusCode
			}()
		}
		count := map[int]int{}
		for i := range n {
			select {
			case code := <-codes:
				count[code]++
			case <-time.After(redistest.WaitBound):
				t.Fatalf("%d of %d creates answered within %v: %v", i, n, redistest.WaitBound, count)
			}
		}
		assert.Equal(t, map[int]int{201: 1, 200: n - 1}, count)
	})
}

func TestForbiddenDestination(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		for name, refusal := range map[string]error{
			"sentinel": ssrf.ErrForbidden,
			"wrapped":  fmt.Errorf("%w: 10.0.0.1 is private (10.0.0.0/8)", ssrf.ErrForbidden),
		} {
			f.check = func(context.Context, *url.URL) error { return refusal }
			r := f.do("POST", "/v1/tasks", createBody("k", "1h", "http://10.0.0.1/"))
			assert.Equal(t, http.StatusBadRequest, r.status, name)
			assert.Equal(t, "destination_forbidden", r.errCode(), name)
			assert.Equal(t, "callback.url", r.errField(), name)
			r = f.do("POST", "/v1/schedules", jsonBody(map[string]any{"name": "s", "every": "1h",
				"callback": map[string]any{"url": "http://10.0.0.1/", "method": "GET"}}))
			assert.Equal(t, "destination_forbidden", r.errCode(), name)
		}
		f.check = func(context.Context, *url.URL) error { return errNoSuchHost }
		r := f.do("POST", "/v1/tasks", createBody("k", "1h", "http://nowhere.invalid/"))
		assert.Equal(t, "invalid_argument", r.errCode(), "a check that fails otherwise")
		assert.Equal(t, "callback.url", r.errField())
		f.nothingStored()
		r = f.do("GET", "/v1/schedules", "")
		assert.Equal(t, []any{}, r.body["schedules"])
	})
}

// A host name that does not resolve at create is no refusal: the task and
// the schedule are stored, the check left to the dial (README.md,
// "Callbacks").
func TestUnresolvedDestinationDeferred(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		f.check = func(context.Context, *url.URL) error {
			return fmt.Errorf("%w: resolve \"orders.example.com\": no such host", ssrf.ErrUnresolved)
		}
		r := f.do("POST", "/v1/tasks", createBody("k", "1h", "https://orders.example.com/hooks/cancel"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		r = f.do("GET", "/v1/tasks/k", "")
		assert.Equal(t, "scheduled", r.body["state"], "%s", r.raw)
		r = f.do("POST", "/v1/schedules", jsonBody(map[string]any{"name": "s", "every": "1h",
			"callback": map[string]any{"url": "https://orders.example.com/", "method": "GET"}}))
		assert.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
	})
}

var errNoSuchHost = &url.Error{Op: "lookup", URL: "nowhere.invalid", Err: context.DeadlineExceeded}

// TestDueAtIsAnInstant: due_at is checked and kept as an instant, whatever
// its offset: the first millisecond after the epoch, written at +14:00, is
// stored and read back as that instant (the epoch itself and anything
// before it are refused: TestBadInput).
func TestDueAtIsAnInstant(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		r := f.do("POST", "/v1/tasks", `{"key":"k","due_at":"1970-01-01T14:00:00.001+14:00","callback":{"url":"https://e.com/","method":"POST"}}`)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		assert.Equal(t, "1970-01-01T00:00:00.001Z", r.body["due_at"], "%s", r.raw)
		r = f.do("POST", "/v1/tasks/k/reschedule", `{"due_at":"1969-12-31T19:00:00.002-05:00"}`)
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, "1970-01-01T00:00:00.002Z", r.body["due_at"], "%s", r.raw)
		r = f.do("GET", "/v1/tasks/k", "")
		assert.Equal(t, "1970-01-01T00:00:00.002Z", r.body["due_at"], "%s", r.raw)
	})
}

func TestUnavailable(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer c.Close()
	q, err := rediswheel.New(c, rediswheel.Options{Namespace: "unreachable"})
	require.NoError(t, err)
	f := &fixture{t: t}
	h, err := New(Config{Queue: q, Schedules: schedulesFor(c, q), CheckCallback: func(context.Context, *url.URL) error { return nil }})
	require.NoError(t, err)
	f.api = httptest.NewServer(h)
	defer f.api.Close()
	for _, req := range [][3]string{
		{"POST", "/v1/tasks", createBody("k", "1s", "https://example.com/")},
		{"GET", "/v1/tasks/k", ""},
		{"GET", "/v1/tasks?state=dead", ""},
		{"GET", "/v1/stats", ""},
		{"GET", "/v1/schedules", ""},
	} {
		r := f.do(req[0], req[1], req[2])
		assert.Equal(t, http.StatusServiceUnavailable, r.status, "%v: %s", req, r.raw)
		assert.Equal(t, "unavailable", r.errCode())
	}
}

func TestNewConfig(t *testing.T) {
	_, err := New(Config{})
	assert.ErrorIs(t, err, ErrConfig)
}
