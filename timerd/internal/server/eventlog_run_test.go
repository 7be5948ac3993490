package server

import (
	"context"
	"io"
	"log/slog"
	"math/bits"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
)

// runLogged runs s on a port of its own until t ends, and returns its
// address.
func runLogged(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(redistest.WaitBound):
			t.Errorf("Run did not return %v after its context ended", redistest.WaitBound)
		}
	})
	return ln.Addr().String()
}

// A running timerd logs the task that dies (a 404: key, origin, status,
// attempt) and the 202 delivery, which the dashboard showed as "No delivery
// yet". Issue 31: the info log said nothing of 29 deaths.
func TestRunLogsDeathsAndDetachedDeliveries(t *testing.T) {
	stubParts(t)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/later") {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		http.NotFound(w, r)
	}))
	defer hook.Close()
	cfg := sqliteConfig(t)
	cfg.AllowCallback = []string{hook.Listener.Addr().String()}
	rec := &lines{}
	s, err := New(cfg, slog.New(rec))
	require.NoError(t, err)
	runLogged(t, s)

	ctx := context.Background()
	_, err = s.queue.AddHTTPAfter(ctx, "gone", durable.HTTPTask{URL: hook.URL + "/gone", Method: "POST"}, 0)
	require.NoError(t, err)
	_, err = s.queue.AddHTTPAfter(ctx, "later", durable.HTTPTask{URL: hook.URL + "/later", Method: "POST"}, 0)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rec.count("task died") == 1 && rec.count("delivery detached") == 1 },
		redistest.WaitBound, 10*time.Millisecond)

	origin, err := durable.Origin(hook.URL)
	require.NoError(t, err)
	level, a := rec.last(t, "task died")
	assert.Equal(t, slog.LevelWarn, level)
	assert.Equal(t, "gone", a["key"])
	assert.Equal(t, origin, a["origin"])
	assert.Equal(t, "404", a["status"])
	assert.Equal(t, "1", a["attempt"])
	assert.Contains(t, a["err"], "404")
	_, a = rec.last(t, "delivery detached")
	assert.Equal(t, "later", a["key"])
	assert.Equal(t, "202", a["status"])
}

// A receiver that answered 202 and then fails the task through the API at
// its last attempt kills it: a running timerd logs that death as it logs
// the others ("task died", WARN, via=complete), on every store. Issue 31:
// Complete's deaths reached the dead set without a line.
func TestRunLogsDeathsByCompletion(t *testing.T) {
	eachStore(t, func(t *testing.T, cfg config.Config) {
		tokens := make(chan string, 4)
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tokens <- r.Header.Get(durable.HeaderCompletionToken)
			w.WriteHeader(http.StatusAccepted)
		}))
		defer hook.Close()
		cfg.AllowCallback = []string{hook.Listener.Addr().String()}
		rec := &lines{}
		s, err := New(cfg, slog.New(rec))
		require.NoError(t, err)
		base := "http://" + runLogged(t, s)

		post := func(path, body string) string {
			t.Helper()
			req, err := http.NewRequest("POST", base+path, strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+cfg.Token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Less(t, resp.StatusCode, 300, "%s", b)
			return string(b)
		}
		post("/v1/tasks", `{"key": "order:7", "delay": "0s", "max_attempts": 1, "callback": {"url": "`+hook.URL+`/work", "method": "POST"}}`)
		var token string
		select {
		case token = <-tokens:
		case <-time.After(redistest.WaitBound):
			t.Fatalf("no callback in %v", redistest.WaitBound)
		}
		assert.JSONEq(t, `{"state": "dead"}`, post("/v1/tasks/order:7/fail", `{"token": "`+token+`", "error": "out of stock"}`))

		level, a := rec.last(t, "task died")
		assert.Equal(t, slog.LevelWarn, level)
		assert.Equal(t, map[string]string{"key": "order:7", "attempt": "1", "err": "out of stock", "via": "complete"}, a)
	})
}

// While the store is down a running timerd writes one line, then lines as
// the backoff allows (after 1, 3, 7, 15... s: about log2 of the seconds
// down), not one per failed store call (40 lines for 40 failures before).
// Issue 31: 6 WARN lines a second while PostgreSQL was down.
func TestRunLogsStoreOutageWithBackoff(t *testing.T) {
	stubParts(t)
	cfg := testConfig(t, "redis://127.0.0.1:1/0") // nothing listens: no Redis needed here
	rec := &lines{}
	s, err := New(cfg, slog.New(rec))
	require.NoError(t, err)
	began := time.Now()
	addr := runLogged(t, s)

	failures := func() int {
		n := 0
		for _, l := range strings.Split(scrape(t, "http://"+addr+"/metrics"), "\n") {
			if strings.HasPrefix(l, "durable_store_errors_total{") && !strings.Contains(l, `op="stats"`) {
				v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
				require.NoError(t, err)
				n += int(v)
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return failures() >= 40 }, redistest.WaitBound, 20*time.Millisecond)
	assert.Equal(t, 1, rec.count("store unavailable"))
	// Lines at 1, 3, 7... s: within e seconds, at most log2(e+1); one more
	// for slack.
	allowed := bits.Len(uint(time.Since(began).Seconds()) + 1)
	assert.LessOrEqual(t, rec.count("store still unavailable"), allowed)
	assert.Zero(t, rec.count("durable"), "no line per failure")
}
