package api

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/sqlitewheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixture is the API on a fresh namespace, served by a real net/http server.
type fixture struct {
	t     *testing.T
	q     *rediswheel.Queue
	store *schedules.Store
	api   *httptest.Server
	h     http.Handler // what api serves
	// check is Config.CheckCallback; nil allows everything.
	check func(ctx context.Context, u *url.URL) error
}

// testStore is where a fixture keeps its tasks: a Redis server, or (redis
// nil) a SQLite file of the test's own.
type testStore struct{ redis redis.UniversalClient }

// eachStore runs f as a parallel subtest on SQLite and on each Redis server
// (redistest.Each). The API holds a durable.Queue: what it answers must not
// depend on the store.
func eachStore(t *testing.T, f func(t *testing.T, s testStore)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		f(t, testStore{})
	})
	if redistest.Configured() {
		redistest.Each(t, func(t *testing.T, c redis.UniversalClient) { f(t, testStore{redis: c}) })
	}
}

// newFixture is newFixtureWith without changes: on Redis stream tasks are
// allowed, as on a server whose store is Redis; on SQLite they are not, as
// on a server without -stream-redis-url.
func newFixture(t *testing.T, s testStore, opts durable.Options) *fixture {
	return newFixtureWith(t, s, opts, nil)
}

// newFixtureWith makes a fixture whose Config change changes, if not nil.
func newFixtureWith(t *testing.T, s testStore, opts durable.Options, change func(*Config)) *fixture {
	var st durable.Store
	var defs schedules.Definitions
	if s.redis != nil {
		ns := redistest.Namespace(t, s.redis)
		rst, err := rediswheel.NewStore(s.redis, ns, 4)
		require.NoError(t, err)
		st, defs = rst, schedules.RedisDefinitions(s.redis, ns)
	} else {
		st, defs = sqliteStore(t)
	}
	q, err := durable.New(st, opts)
	require.NoError(t, err)
	f := &fixture{t: t, q: q, store: schedules.New(defs, q, slog.Default())}
	cfg := Config{
		Queue: q, Schedules: f.store, MaxBody: 4096, Streams: s.redis != nil,
		CheckCallback: func(ctx context.Context, u *url.URL) error {
			if f.check != nil {
				return f.check(ctx, u)
			}
			return nil
		},
	}
	// As the server does (routes.go): the callback's traceparent is shown
	// where the store can read a task's payload.
	if p, ok := st.(interface {
		Payload(ctx context.Context, key string) ([]byte, error)
	}); ok {
		cfg.Payload = p.Payload
	}
	if change != nil {
		change(&cfg)
	}
	h, err := New(cfg)
	require.NoError(t, err)
	f.h = h
	f.api = httptest.NewServer(h)
	t.Cleanup(func() { f.api.Close() })
	return f
}

// sqliteStore opens a SQLite store in a file of t's own, with the schedule
// definitions beside it, as the server does (backend.go); both close when t
// ends.
func sqliteStore(t *testing.T) (durable.Store, schedules.Definitions) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "timerd.db")
	st, err := sqlitewheel.Open(ctx, path, sqlitewheel.Options{Namespace: "timerd"})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	defs, err := schedules.SQLiteDefinitions(ctx, db, "timerd")
	require.NoError(t, err)
	return st, defs
}

// reply is a decoded answer.
type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

// errCode and errField read an error body.
func (r reply) errCode() string  { return r.errPart("code") }
func (r reply) errField() string { return r.errPart("field") }
func (r reply) errPart(k string) string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e[k].(string)
	return s
}

// do sends method path with body (JSON, unless contentType says otherwise).
func (f *fixture) do(method, path, body string, contentType ...string) reply {
	f.t.Helper()
	return f.doWith(nil, method, path, body, contentType...)
}

// doWith is do with the request headers header.
func (f *fixture) doWith(header http.Header, method, path, body string, contentType ...string) reply {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.api.URL+path, rd)
	require.NoError(f.t, err)
	for name, values := range header {
		req.Header[name] = values
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if len(contentType) > 0 {
		req.Header.Set("Content-Type", contentType[0])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	r := reply{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 {
		require.NoError(f.t, json.Unmarshal(raw, &r.body), "%s %s answered %s", method, path, raw)
		assert.Equal(f.t, "application/json", resp.Header.Get("Content-Type"), "%s %s", method, path)
	}
	return r
}

// jsonBody marshals v.
func jsonBody(v any) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(v)
	return b.String()
}

// createBody is a valid create request for key, due in delay.
func createBody(key, delay, url string) string {
	return jsonBody(map[string]any{"key": key, "delay": delay,
		"callback": map[string]any{"url": url, "method": "POST", "body": "{}"}})
}

// worker runs a Run of f's Queue delivering HTTP tasks until t ends.
func (f *fixture) worker() {
	ctx, cancel := context.WithCancel(context.Background())
	mux := rediswheel.NewMux()
	mux.Handle(rediswheel.HTTPTaskType, rediswheel.HTTPHandler(nil))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); assert.NoError(f.t, f.q.Run(ctx, mux.Handler)) }()
	f.t.Cleanup(func() { cancel(); redistest.Within(f.t, "the worker to stop", wg.Wait) })
}

// eventually polls cond every 20ms for up to timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// nothingStored checks that f's namespace has no task in any state.
func (f *fixture) nothingStored() {
	f.t.Helper()
	st, err := f.q.Stats(context.Background())
	require.NoError(f.t, err)
	tot := st.Total
	assert.Zero(f.t, tot.Due+tot.Scheduled+tot.InFlight+tot.Dead+tot.Retained, "nothing stored: %+v", tot)
}

func schedulesFor(c redis.UniversalClient, q *rediswheel.Queue) *schedules.Store {
	return schedules.New(schedules.WithErrors(schedules.RedisDefinitions(c, "unreachable"), rediswheel.Unavailable), q, slog.Default())
}
