package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/pgwheel"
	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/api"
	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/go-timingwheel/timingwheel/timerd/internal/dashboard"
	"github.com/go-timingwheel/timingwheel/timerd/internal/pgtest"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
)

// testConfig is a configuration on redisURL in a fresh namespace.
func testConfig(t *testing.T, redisURL string) config.Config {
	var b [4]byte
	rand.Read(b[:])
	return config.Config{
		Listen: "127.0.0.1:0", Token: "tok", Store: config.StoreRedis, RedisURL: redisURL, Namespace: "timerd-test." + hex.EncodeToString(b[:]),
		Shards: 4, Concurrency: 4, Workers: true, MaxBody: 1 << 20, Rate: 0, History: 10,
		ShutdownGrace: 2 * time.Second, Lease: time.Second, AllowCallback: []string{"127.0.0.1/32"},
	}
}

func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewJSONHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// tWriter sends log lines to t.Log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// stubParts replaces the API and dashboard with handlers that answer 299
// and 298 and record what they were given, until t ends.
func stubParts(t *testing.T) (gotAPI *api.Config, gotDash *dashboard.Config) {
	oldAPI, oldDash := newAPI, newDashboard
	t.Cleanup(func() { newAPI, newDashboard = oldAPI, oldDash })
	gotAPI, gotDash = new(api.Config), new(dashboard.Config)
	newAPI = func(cfg api.Config) (http.Handler, error) {
		*gotAPI = cfg
		m := http.NewServeMux()
		m.HandleFunc("GET /v1/tasks/{key}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) })
		return m, nil
	}
	newDashboard = func(cfg dashboard.Config) (http.Handler, error) {
		*gotDash = cfg
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(298) }), nil
	}
	return gotAPI, gotDash
}

func newServer(t *testing.T, cfg config.Config) *Server {
	s, err := New(cfg, testLog(t))
	require.NoError(t, err)
	return s
}

func get(t *testing.T, h http.Handler, path, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", path, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func errorCode(t *testing.T, w *httptest.ResponseRecorder) apierror.Code {
	var b apierror.Body
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &b), w.Body.String())
	return b.Error.Code
}

// The routes: /v1/ behind auth, /ui/ without (the dashboard has its own
// login), the operations endpoints open, / to the dashboard, others 404.
func TestRoutes(t *testing.T) {
	gotAPI, gotDash := stubParts(t)
	cfg := testConfig(t, "redis://127.0.0.1:1/0") // nothing listens: no Redis needed here
	s := newServer(t, cfg)
	defer s.Close()
	h := s.Handler()

	require.Same(t, s.queue, gotAPI.Queue)
	require.Same(t, s.schedules, gotAPI.Schedules)
	require.Equal(t, cfg.MaxBody, gotAPI.MaxBody)
	require.NotNil(t, gotAPI.CheckCallback)
	require.Same(t, s.queue, gotDash.Queue)
	require.Equal(t, cfg.Namespace, gotDash.Namespace)
	require.True(t, gotDash.Auth.Token("tok") && !gotDash.Auth.Token("other"), "the dashboard checks the same token")
	require.NotNil(t, gotDash.VerifyCompletion, "the dashboard verifies completion tokens as the API does")

	w := get(t, h, "/v1/tasks/k", "")
	require.Equal(t, http.StatusUnauthorized, w.Code)
	require.Equal(t, apierror.Unauthenticated, errorCode(t, w))
	require.Equal(t, http.StatusUnauthorized, get(t, h, "/v1/tasks/k", "wrong").Code)
	require.Equal(t, 299, get(t, h, "/v1/tasks/k", "tok").Code)
	require.Equal(t, 298, get(t, h, "/ui/", "").Code)
	require.Equal(t, 298, get(t, h, "/ui/login", "").Code)

	w = get(t, h, "/", "")
	require.Equal(t, http.StatusFound, w.Code)
	require.Equal(t, "/ui/", w.Header().Get("Location"))
	w = get(t, h, "/nope", "")
	require.Equal(t, http.StatusNotFound, w.Code)
	require.Equal(t, apierror.NotFound, errorCode(t, w))

	w = get(t, h, "/healthz", "")
	require.Equal(t, http.StatusOK, w.Code)
	require.JSONEq(t, `{"status":"ok"}`, w.Body.String())

	// The API's own pattern labels its requests; auth's 401 is labelled
	// with the server's "/v1/"; the path (a task key) never is.
	w = get(t, h, "/metrics", "")
	require.Equal(t, http.StatusOK, w.Code)
	m := w.Body.String()
	require.Contains(t, m, `timerd_http_requests_total{code="299",route="GET /v1/tasks/{key}"} 1`)
	require.Contains(t, m, `timerd_http_requests_total{code="401",route="/v1/"} 2`)
	require.Contains(t, m, `timerd_http_requests_total{code="404",route="/"} 1`)
	require.Contains(t, m, `timerd_http_request_duration_seconds_count{route="GET /healthz"} 1`)
	require.Contains(t, m, `durable_tasks_fired_total{namespace="`+cfg.Namespace+`"} 0`)
	require.Contains(t, m, "go_goroutines")
	require.NotContains(t, m, "/v1/tasks/k")
}

func TestRateLimit(t *testing.T) {
	stubParts(t)
	cfg := testConfig(t, "redis://127.0.0.1:1/0")
	cfg.Rate = 1
	s := newServer(t, cfg)
	defer s.Close()
	h := s.Handler()
	require.Equal(t, 299, get(t, h, "/v1/tasks/k", "tok").Code)
	w := get(t, h, "/v1/tasks/k", "tok")
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	require.Equal(t, apierror.RateLimited, errorCode(t, w))
	require.NotEmpty(t, w.Header().Get("Retry-After"))
	require.Equal(t, http.StatusTooManyRequests, get(t, h, "/ui/", "").Code, "the dashboard shares the limit")
	require.Equal(t, http.StatusOK, get(t, h, "/healthz", "").Code, "probes are never limited")
}

func TestReadyz(t *testing.T) {
	stubParts(t)
	down := newServer(t, testConfig(t, "redis://127.0.0.1:1/0"))
	defer down.Close()
	w := get(t, down.Handler(), "/readyz", "")
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	require.Equal(t, apierror.Unavailable, errorCode(t, w))
	require.NotContains(t, w.Body.String(), "127.0.0.1:1", "the reason goes to the log, not to the caller")

	up := newServer(t, testConfig(t, "redis://"+redisAddr(t)+"/0"))
	defer up.Close()
	w = get(t, up.Handler(), "/readyz", "")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
}

// commandCounter is a go-redis hook counting the commands a client sends,
// by name, pipelines included.
type commandCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *commandCounter) count(cmds ...redis.Cmder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cmd := range cmds {
		c.n[cmd.Name()]++
	}
}

func (c *commandCounter) of(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

func (c *commandCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	sum := 0
	for _, n := range c.n {
		sum += n
	}
	return sum
}

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.count(cmd); return next(ctx, cmd) }
}
func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.count(cmds...); return next(ctx, cmds) }
}

// /readyz is open to anyone and unlimited, and a check runs a script on
// every shard: its answer is reused for readyCache, so that any number of
// probes, at once or one after another, cost one check per readyCache.
// Counted in Redis commands, on a clock the test moves.
func TestReadyzChecksOncePerInterval(t *testing.T) {
	stubParts(t)
	s := newServer(t, testConfig(t, "redis://"+redisAddr(t)+"/0"))
	defer s.Close()
	cmds := &commandCounter{n: map[string]int{}}
	s.backend.redis.AddHook(cmds)
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	s.readiness.now = func() time.Time { return now }
	h := s.Handler()

	probe := func(n int) {
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := get(t, h, "/readyz", "")
				assert.Equal(t, http.StatusOK, w.Code, w.Body.String())
			}()
		}
		redistest.Within(t, "the probes", wg.Wait)
	}
	probe(50)
	one := cmds.total()
	require.Positive(t, one, "a check sends commands")
	assert.Equal(t, 1, cmds.of("ping"), "50 probes at once: one check")
	now = now.Add(readyCache - time.Millisecond)
	probe(50)
	assert.Equal(t, one, cmds.total(), "within readyCache: no command")
	now = now.Add(time.Millisecond)
	probe(50)
	assert.Equal(t, 2, cmds.of("ping"), "readyCache later: one more check")
	t.Logf("the first check: %d commands; the second: %d", one, cmds.total()-one)
}

func TestNewRefuses(t *testing.T) {
	cfg := testConfig(t, "redis://127.0.0.1:1/0")
	cfg.AllowCallback = []string{"nonsense"}
	_, err := New(cfg, testLog(t))
	require.Error(t, err)
	cfg = testConfig(t, "http://127.0.0.1:1")
	_, err = New(cfg, testLog(t))
	require.ErrorContains(t, err, "-redis-url")
}

// receiver is a callback endpoint recording the keys it got.
type receiver struct {
	mu   sync.Mutex
	keys []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	rc.mu.Lock()
	rc.keys = append(rc.keys, r.Header.Get(rediswheel.HeaderIdempotencyKey))
	rc.mu.Unlock()
}

func (rc *receiver) got() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.keys...)
}

// Run serves, delivers callbacks through the guarded client, and returns
// nil once its context ends, on every store. A callback the guard refuses
// at dial time goes to the dead set at once.
func TestRunDelivers(t *testing.T) {
	eachStore(t, testRunDelivers)
}

func testRunDelivers(t *testing.T, cfg config.Config) {
	stubParts(t)
	rc := &receiver{}
	hook := httptest.NewServer(rc)
	defer hook.Close()

	cfg.AllowCallback = []string{hook.Listener.Addr().String()} // host:port: this server only
	s := newServer(t, cfg)
	q := s.queue

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
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

	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	_, err = q.AddHTTPAfter(ctx, "allowed", rediswheel.HTTPTask{URL: hook.URL + "/hook", Method: "POST"}, 0)
	require.NoError(t, err)
	// The same server under another name: not allowlisted, refused at dial.
	localhost := strings.Replace(hook.URL, "127.0.0.1", "localhost", 1)
	_, err = q.AddHTTPAfter(ctx, "refused", rediswheel.HTTPTask{URL: localhost + "/hook", Method: "POST"}, 0)
	require.NoError(t, err)

	deadline := time.Now().Add(redistest.WaitBound)
	for {
		dead, err := q.Dead(ctx, 10)
		require.NoError(t, err)
		if len(rc.got()) == 1 && len(dead) == 1 {
			require.Equal(t, "refused", dead[0].Key)
			require.Contains(t, dead[0].LastError, "destination not allowed")
			require.Equal(t, 1, dead[0].Attempts, "dead at the first attempt")
			break
		}
		require.True(t, time.Now().Before(deadline), "got %v, dead %v", rc.got(), dead)
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, []string{"allowed"}, rc.got())

	// /metrics tells the same in durable's words, on every store. A settle
	// is counted just after the store records it (the receiver may have its
	// callback before), and the gauges are read from the store at scrape
	// time (a store's commit may become visible to the scrape's read a
	// moment after the count), so the page is read until it says all of it.
	ns := `namespace="` + cfg.Namespace + `"`
	want := []string{
		`durable_tasks_settled_total{` + ns + `,result="dead"} 1`,
		`durable_tasks_settled_total{` + ns + `,result="done"} 1`,
		`durable_tasks{` + ns + `,state="dead"} 1`,
		`durable_tasks{` + ns + `,state="in_flight"} 0`,
	}
	for {
		m := scrape(t, "http://"+ln.Addr().String()+"/metrics")
		missing := ""
		for _, w := range want {
			if !strings.Contains(m, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			require.Contains(t, m, `durable_tasks_fired_total{`+ns+`} 2`)
			require.NotContains(t, strings.ToLower(m), "redis", "no series names the store")
			break
		}
		require.True(t, time.Now().Before(deadline), "no %s in\n%s", missing, m)
		time.Sleep(20 * time.Millisecond)
	}
}

// scrape GETs url, /metrics, and returns its body.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// eachStore runs test on a fresh configuration for each store: Redis (a
// fresh namespace, deleted afterwards) and SQLite (a file of its own).
func eachStore(t *testing.T, test func(t *testing.T, cfg config.Config)) {
	t.Run("redis", func(t *testing.T) {
		cfg := testConfig(t, "redis://"+redisAddr(t)+"/0")
		t.Cleanup(func() { cleanNamespace(t, cfg) })
		test(t, cfg)
	})
	t.Run("sqlite", func(t *testing.T) {
		test(t, sqliteConfig(t))
	})
	t.Run("postgres", func(t *testing.T) {
		cfg := postgresConfig(t)
		_, err := Migrate(context.Background(), cfg)
		require.NoError(t, err)
		test(t, cfg)
	})
}

// sqliteConfig is a configuration on a SQLite file of the test's own, in a
// directory that does not exist yet.
func sqliteConfig(t *testing.T) config.Config {
	cfg := testConfig(t, "")
	cfg.Store, cfg.RedisURL, cfg.StorePath = config.StoreSQLite, "", filepath.Join(t.TempDir(), "data", "timerd.db")
	return cfg
}

// postgresConfig is a configuration on a fresh, unmigrated schema.
func postgresConfig(t *testing.T) config.Config {
	cfg := testConfig(t, "")
	cfg.Store, cfg.RedisURL, cfg.StoreURL = config.StorePostgres, "", pgtest.Schema(t)
	return cfg
}

// A SQL store is migrated by Migrate (timerd migrate), never by New: New
// refuses a database that was not migrated and says what to run; Migrate
// twice is Migrate once. A new SQLite file is timerd's own and needs no
// migrate.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	cfg := postgresConfig(t)
	_, err := New(cfg, testLog(t))
	require.ErrorContains(t, err, "timerd migrate")
	what, err := Migrate(ctx, cfg)
	require.NoError(t, err)
	require.Contains(t, what, "PostgreSQL")
	_, err = Migrate(ctx, cfg)
	require.NoError(t, err, "again")
	s, err := New(cfg, testLog(t))
	require.NoError(t, err)
	require.NoError(t, s.Close())

	cfg = sqliteConfig(t)
	s, err = New(cfg, testLog(t))
	require.NoError(t, err, "a new file")
	require.NoError(t, s.Close())
	_, err = Migrate(ctx, cfg)
	require.NoError(t, err, "a current file")

	what, err = Migrate(ctx, testConfig(t, "redis://127.0.0.1:1/0"))
	require.NoError(t, err)
	require.Contains(t, what, "no schema")
}

// A database a newer timerd migrated is refused with what to do, which is
// not to run this timerd's migrate (it refuses too): run the newer timerd,
// or restore the backup from before (README.md, "Upgrade and rollback").
func TestNewerSchemaIsRefusedWithRollback(t *testing.T) {
	ctx := context.Background()
	cfg := postgresConfig(t)
	_, err := Migrate(ctx, cfg)
	require.NoError(t, err)
	pool, err := pgxpool.New(ctx, cfg.StoreURL)
	require.NoError(t, err)
	defer pool.Close()
	_, err = pool.Exec(ctx, `INSERT INTO pgwheel_schema (version) VALUES (99)`)
	require.NoError(t, err)
	_, err = New(cfg, testLog(t))
	require.ErrorIs(t, err, pgwheel.ErrSchemaTooNew)
	require.ErrorContains(t, err, "restore the backup")
	require.NotContains(t, err.Error(), "run timerd migrate")
	_, err = Migrate(ctx, cfg)
	require.ErrorIs(t, err, pgwheel.ErrSchemaTooNew, "this timerd's migrate refuses too")
}

// cleanNamespace deletes the keys of cfg's namespace.
func cleanNamespace(t *testing.T, cfg config.Config) {
	s, err := New(cfg, testLog(t))
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	iter := s.backend.redis.Scan(ctx, 0, "*"+cfg.Namespace+"*", 1000).Iterator()
	for iter.Next(ctx) {
		s.backend.redis.Del(ctx, iter.Val())
	}
}

// README.md states what a task without max_attempts or callback.timeout
// gets by default: rediswheel's defaults, which timerd's flags default to.
func TestDocumentedDefaults(t *testing.T) {
	assert.Equal(t, 25, rediswheel.DefaultMaxAttempts, "README.md: 25 attempts")
	assert.Equal(t, 30*time.Second, rediswheel.DefaultHTTPTimeout, "README.md: 30s a callback")
	c, err := config.Parse(nil, func(string) string { return "" })
	require.NoError(t, err)
	assert.Equal(t, rediswheel.DefaultMaxAttempts, c.MaxAttempts, "-max-attempts")
	assert.Equal(t, rediswheel.DefaultHTTPTimeout, c.CallbackTimeout, "-callback-timeout")
	assert.Equal(t, [2]time.Duration{time.Second, time.Hour}, [2]time.Duration{c.BackoffBase, c.BackoffLimit},
		"-backoff-base and -backoff-limit: DefaultBackoff's bounds")
}

// lockedBuffer is a log destination safe for Run's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// -max-attempts, -backoff-base/-limit and -callback-timeout take effect: a
// callback that never answers times out after the configured timeout, is
// retried within the configured backoff, and is dead after the configured
// attempts; and the start-up log states them.
func TestRunSettings(t *testing.T) {
	stubParts(t)
	release := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // hang past the callback timeout, until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hook.Close()
	defer close(release)

	cfg := testConfig(t, "redis://"+redisAddr(t)+"/0")
	cfg.AllowCallback = []string{hook.Listener.Addr().String()}
	cfg.MaxAttempts, cfg.BackoffBase, cfg.BackoffLimit, cfg.CallbackTimeout = 2, time.Millisecond, 5*time.Millisecond, 300*time.Millisecond
	var logs lockedBuffer
	s, err := New(cfg, slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	t.Cleanup(func() { cleanNamespace(t, cfg) })
	for range 1000 {
		require.LessOrEqual(t, s.queue.Options().Backoff(30), 5*time.Millisecond, "the backoff is not -backoff-limit's")
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
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
	_, err = s.queue.AddHTTPAfter(ctx, "hangs", rediswheel.HTTPTask{URL: hook.URL, Method: "POST"}, 0)
	require.NoError(t, err)

	deadline := time.Now().Add(redistest.WaitBound)
	for {
		info, err := s.queue.Get(ctx, "hangs")
		require.NoError(t, err)
		if info.State == rediswheel.StateDead {
			require.Equal(t, 2, info.Attempts, "dead after -max-attempts")
			require.Contains(t, info.LastError, "timed out after 300ms", "-callback-timeout")
			break
		}
		require.True(t, time.Now().Before(deadline), "not dead within %v: %+v", redistest.WaitBound, info)
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{`"msg":"listening"`, `"allow-callback":"` + cfg.AllowCallback[0] + `"`, `"lease":"1s"`,
		`"max-attempts":2`, `"backoff-base":"1ms"`, `"backoff-limit":"5ms"`, `"callback-timeout":"300ms"`, `"concurrency":4`} {
		require.Contains(t, logs.String(), want, "the start-up log")
	}
	require.NotContains(t, logs.String(), `"tok"`, "the token is never logged")
}
