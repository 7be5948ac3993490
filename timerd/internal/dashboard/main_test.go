package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/sqlitewheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// The tests run against real Redis servers named as rediswheel's tests name
// them (scripts/redis.sh writes them to .redis/env):
//
//	REDISWHEEL_ADDR          host:port of a standalone server
//	REDISWHEEL_CLUSTER_ADDRS comma-separated host:port of a cluster's masters
//
// and the browser test drives /usr/bin/chromium (scripts/chromium.sh). A
// test whose server or browser is missing is skipped, unless
// TIMERD_REQUIRE=1, when it fails. Each test works in a namespace of its own
// and deletes its keys afterwards; none flushes a server.
func TestMain(m *testing.M) {
	// After a failed dial go-redis keeps one goroutine probing the address
	// once a second, even past Close (rediswheel's TestMain says the same).
	goleak.VerifyTestMain(redistest.HoldRedisLog(m), redistest.IgnoreTryDial)
}

// required skips t, or fails it under TIMERD_REQUIRE=1, for the missing what.
func required(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("TIMERD_REQUIRE") == "1" {
		t.Fatalf("%s, and TIMERD_REQUIRE=1", what)
	}
	t.Skip(what)
}

func envOrSkip(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		required(t, name+" is unset: no Redis server for this test")
	}
	return v
}

// backends are the stores every forEachBackend test runs against: the Redis
// deployments, and SQLite (no client: newQueue opens a file of the test's
// own). The dashboard holds a durable.Queue; what it shows must not depend
// on the store.
var backends = []struct {
	name   string
	client func(t testing.TB) redis.UniversalClient
}{
	{"standalone", func(t testing.TB) redis.UniversalClient {
		c := redis.NewClient(&redis.Options{Addr: envOrSkip(t, "REDISWHEEL_ADDR")})
		t.Cleanup(func() { c.Close() })
		return c
	}},
	{"cluster", func(t testing.TB) redis.UniversalClient {
		addrs := strings.Split(envOrSkip(t, "REDISWHEEL_CLUSTER_ADDRS"), ",")
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
		t.Cleanup(func() { c.Close() })
		return c
	}},
	{"sqlite", func(testing.TB) redis.UniversalClient { return nil }},
}

// forEachBackend runs f as a subtest per backend.
func forEachBackend(t *testing.T, f func(t *testing.T, c redis.UniversalClient)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b.client(t)) })
	}
}

// standalone is the standalone backend, for tests that need only one.
func standalone(t testing.TB) redis.UniversalClient { return backends[0].client(t) }

// newQueue returns a Queue on a fresh namespace, 8 shards, with finished
// tasks retained for an hour; its keys are deleted when t ends. With no
// client, the Queue is on a SQLite file of t's own (one partition).
func newQueue(t testing.TB, c redis.UniversalClient) *durable.Queue {
	t.Helper()
	var st durable.Store
	var err error
	if c != nil {
		st, err = rediswheel.NewStore(c, redistest.Namespace(t, c), 8)
	} else {
		var sst *sqlitewheel.Store
		sst, err = sqlitewheel.Open(context.Background(), filepath.Join(t.TempDir(), "timerd.db"), sqlitewheel.Options{})
		if err == nil {
			t.Cleanup(func() { sst.Close() })
		}
		st = sst
	}
	if err != nil {
		t.Fatal(err)
	}
	q, err := durable.New(st, durable.Options{Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// hostileKey is a task key that is also HTML: every page must show it as text.
const hostileKey = `<script>alert(1)</script>`

// deadError is the error the fixture's dead tasks died of: HTML as well.
const deadError = `HTTP 410 <b>gone</b>`

// fixture fills an empty q with tasks in every state but in flight, and returns once
// they are all in place, with no worker left running:
//
//	dead      the keys in dead (Permanent(deadError) on their only delivery)
//	retained  the keys in done, delivered once each (with a delivery log)
//	due       due an hour ago, never claimed
//	scheduled due in an hour
func fixture(t testing.TB, q *rediswheel.Queue, dead, done []string, due, scheduled int) {
	t.Helper()
	ctx := context.Background()
	for _, k := range append(append([]string(nil), dead...), done...) {
		if _, err := q.Add(ctx, k, []byte("payload"), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	isDone := map[string]bool{}
	for _, k := range done {
		isDone[k] = true
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() {
		ran <- q.Run(runCtx, func(_ context.Context, task rediswheel.Task) error {
			if isDone[task.Key] {
				return nil
			}
			return rediswheel.Permanent(errors.New(deadError))
		})
	}()
	stopped := false
	defer func() { // even when eventually fails: no worker outlives the test
		if !stopped {
			stop()
			redistest.Within(t, "the fixture's Run to return", func() { <-ran })
		}
	}()
	eventually(t, redistest.WaitBound, "the fixture's deliveries", func() bool {
		st, err := q.Stats(ctx)
		return err == nil && st.Total.Dead == int64(len(dead)) && st.Total.Retained == int64(len(done))
	})
	stop()
	stopped = true
	var err error
	redistest.Within(t, "the fixture's Run to return", func() { err = <-ran })
	if err != nil {
		t.Fatal(err)
	}
	for i := range due {
		if _, err := q.Add(ctx, fmt.Sprintf("due/%03d", i), nil, time.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range scheduled {
		if _, err := q.AddAfter(ctx, fmt.Sprintf("later/%03d", i), nil, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
}

// eventually polls cond every 10ms until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testToken is the token of every test's dashboard.
const testToken = "s3cret-token"

// newDashboard returns the dashboard on q, behind the token testToken.
func newDashboard(t testing.TB, q *rediswheel.Queue) http.Handler {
	t.Helper()
	h, err := New(Config{Queue: q, Auth: auth.New(testToken), Namespace: "tdtest"})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// response is one answer, read whole.
type response struct {
	status int
	header http.Header
	body   string
}

// do sends req to h and returns the answer; it follows no redirect.
func do(t testing.TB, h http.Handler, req *http.Request) response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
}

// get is a GET of path with the session cookie when session is true.
func get(t testing.TB, h http.Handler, path string, session bool) response {
	t.Helper()
	req := newRequest(t, http.MethodGet, path, nil, session)
	return do(t, h, req)
}

// post is a browser's form POST of form to path from a page of the
// dashboard (Origin is the dashboard's), with the session cookie when
// session is true. headers replace the browser's.
func post(t testing.TB, h http.Handler, path string, form url.Values, session bool, headers map[string]string) response {
	t.Helper()
	req := newRequest(t, http.MethodPost, path, strings.NewReader(form.Encode()), session)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://"+req.Host)
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return do(t, h, req)
}

func newRequest(t testing.TB, method, path string, body io.Reader, session bool) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, "http://timerd.test"+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if session {
		req.AddCookie(sessionCookie(t))
	}
	return req
}

// sessionCookie is the cookie the login form sets for testToken.
func sessionCookie(t testing.TB) *http.Cookie { return cookieOf(t, auth.New(testToken)) }

// cookieOf is the session cookie c sets.
func cookieOf(t testing.TB, c *auth.Checker) *http.Cookie {
	t.Helper()
	rec := httptest.NewRecorder()
	c.SetSession(rec, httptest.NewRequest(http.MethodPost, "/ui/login", nil))
	ck, err := http.ParseSetCookie(rec.Header().Get("Set-Cookie"))
	if err != nil {
		t.Fatal(err)
	}
	return ck
}
