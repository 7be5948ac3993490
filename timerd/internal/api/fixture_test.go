package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
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

// newFixture is newFixtureWith without changes: stream tasks allowed, as
// on a server whose store is Redis.
func newFixture(t *testing.T, c redis.UniversalClient, opts rediswheel.Options) *fixture {
	return newFixtureWith(t, c, opts, nil)
}

// newFixtureWith makes a fixture whose Config change changes, if not nil.
func newFixtureWith(t *testing.T, c redis.UniversalClient, opts rediswheel.Options, change func(*Config)) *fixture {
	ns := redistest.Namespace(t, c)
	opts.Namespace = ns
	if opts.Shards == 0 {
		opts.Shards = 4
	}
	q, err := rediswheel.New(c, opts)
	require.NoError(t, err)
	f := &fixture{t: t, q: q, store: schedules.New(schedules.RedisDefinitions(c, ns), q, slog.Default())}
	cfg := Config{
		Queue: q, Schedules: f.store, MaxBody: 4096, Payload: q.Store().(*rediswheel.Store).Payload, Streams: true,
		CheckCallback: func(ctx context.Context, u *url.URL) error {
			if f.check != nil {
				return f.check(ctx, u)
			}
			return nil
		},
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
	return schedules.New(schedules.RedisDefinitions(c, "unreachable"), q, slog.Default())
}
