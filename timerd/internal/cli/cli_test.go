package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeAPI answers from a table of "METHOD request-URI" → status and body,
// records what it got, and 404s anything else as the API would.
type fakeAPI struct {
	mu      sync.Mutex
	answers map[string]answer
	got     []string // "METHOD request-URI token"
	bodies  []string // the request bodies, as got
}

type answer struct {
	status int
	body   string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	req := r.Method + " " + r.URL.RequestURI()
	f.got = append(f.got, req+" "+r.Header.Get("Authorization"))
	body, _ := io.ReadAll(r.Body)
	f.bodies = append(f.bodies, string(body))
	a, ok := f.answers[req]
	if !ok {
		a = answer{404, `{"error":{"code":"not_found","message":"no task under this key","field":""}}`}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	w.Write([]byte(a.body))
}

func (f *fakeAPI) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

// run runs the command line against api with TIMERD_TOKEN=tok.
func run(t *testing.T, api *httptest.Server, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"TIMERD_TOKEN": "tok", "TIMERD_SERVER": api.URL}
	code = Run(context.Background(), args, func(k string) string { return env[k] }, &out, &errb)
	return code, out.String(), errb.String()
}

func newFake(t *testing.T, answers map[string]answer) (*fakeAPI, *httptest.Server) {
	f := &fakeAPI{answers: answers}
	s := httptest.NewServer(f)
	t.Cleanup(s.Close)
	return f, s
}

// Each command calls its API route with the token, prints the answer, and
// exits 0; an API error is printed with its status and code, exit 1.
func TestCommands(t *testing.T) {
	f, api := newFake(t, map[string]answer{
		"GET /v1/tasks/order%2F1":                {200, `{"key":"order/1","state":"scheduled"}`},
		"DELETE /v1/tasks/order%2F1":             {200, `{"cancelled":true}`},
		"DELETE /v1/tasks/-odd":                  {200, `{"cancelled":true}`},
		"GET /v1/tasks?limit=5&state=dead":       {200, `{"tasks":[],"next_cursor":""}`},
		"GET /v1/schedules":                      {200, `{"schedules":[{"name":"nightly"}]}`},
		"POST /v1/dead/k/requeue":                {200, `{"requeued":true}`},
		"GET /v1/tasks?cursor=c1&state=retrying": {200, `{"tasks":[],"next_cursor":""}`},
	})
	for _, tc := range []struct {
		args    []string
		request string
		out     string
	}{
		{[]string{"tasks", "get", "order/1"}, "GET /v1/tasks/order%2F1", `"state": "scheduled"`},
		{[]string{"tasks", "cancel", "order/1"}, "DELETE /v1/tasks/order%2F1", `"cancelled": true`},
		{[]string{"tasks", "list", "-state", "dead", "-limit", "5"}, "GET /v1/tasks?limit=5&state=dead", `"next_cursor": ""`},
		{[]string{"tasks", "list", "-state", "retrying", "-cursor", "c1"}, "GET /v1/tasks?cursor=c1&state=retrying", `"tasks": []`},
		{[]string{"schedules", "list"}, "GET /v1/schedules", `"name": "nightly"`},
		{[]string{"dead", "requeue", "k"}, "POST /v1/dead/k/requeue", `"requeued": true`},
		// Flags after the argument, as the README's session writes them.
		{[]string{"tasks", "get", "order/1", "-server", api.URL}, "GET /v1/tasks/order%2F1", `"state": "scheduled"`},
		// After "--" a key may start with '-'.
		{[]string{"tasks", "cancel", "--", "-odd"}, "DELETE /v1/tasks/-odd", `"cancelled": true`},
	} {
		before := len(f.requests())
		code, out, errOut := run(t, api, tc.args...)
		require.Equal(t, 0, code, "%v: %s", tc.args, errOut)
		require.Contains(t, out, tc.out, tc.args)
		require.Equal(t, []string{tc.request + " Bearer tok"}, f.requests()[before:], tc.args)
	}

	code, out, errOut := run(t, api, "tasks", "get", "nope")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "timerd tasks: 404 not_found: no task under this key\n", errOut)

	_, unreachable := newFake(t, nil)
	unreachable.Close()
	code, _, errOut = run(t, unreachable, "schedules", "list")
	assert.Equal(t, 1, code, "no answer")
	assert.Contains(t, errOut, "connection refused")
}

// The token comes from -token-file (first line, trimmed) over TIMERD_TOKEN,
// and the server from -server over TIMERD_SERVER.
func TestTokenAndServer(t *testing.T) {
	f, api := newFake(t, map[string]answer{"GET /v1/schedules": {200, `{"schedules":[]}`}})
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte(" filetok \nrest\n"), 0o600))
	var out, errb bytes.Buffer
	env := map[string]string{"TIMERD_TOKEN": "envtok", "TIMERD_SERVER": "http://127.0.0.1:1"}
	code := Run(context.Background(), []string{"schedules", "list", "-server", api.URL, "-token-file", file},
		func(k string) string { return env[k] }, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	require.Equal(t, []string{"GET /v1/schedules Bearer filetok"}, f.requests())
}

// Bad command lines exit 2 with the usage, and call nothing.
func TestUsage(t *testing.T) {
	f, api := newFake(t, nil)
	for _, args := range [][]string{
		{"tasks"},
		{"tasks", "frobnicate"},
		{"tasks", "get"},
		{"tasks", "get", "a", "b"},
		{"tasks", "list"},
		{"tasks", "get", "-state", "dead", "k"},
		{"dead", "requeue"},
		{"dead", "requeue", "-all", "k"},
		{"schedules", "list", "-limit", "3"},
		{"tasks", "get", "-server", "ftp://x", "k"},
		{"tasks", "get", "-nosuchflag", "k"},
	} {
		code, _, errOut := run(t, api, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Contains(t, errOut, "usage: timerd COMMAND", "%v", args)
	}
	assert.Empty(t, f.requests())
}

// dead requeue -all walks the dead set by its cursor and requeues every
// task, counting those gone meanwhile (404), and stops at the end.
func TestRequeueAll(t *testing.T) {
	f, api := newFake(t, map[string]answer{
		"GET /v1/dead?limit=1000":           {200, `{"tasks":[{"key":"a"},{"key":"b/1"}],"next_cursor":"c1"}`},
		"GET /v1/dead?cursor=c1&limit=1000": {200, `{"tasks":[],"next_cursor":"c2"}`},
		"GET /v1/dead?cursor=c2&limit=1000": {200, `{"tasks":[{"key":"c"}],"next_cursor":""}`},
		"POST /v1/dead/a/requeue":           {200, `{"requeued":true}`},
		"POST /v1/dead/c/requeue":           {200, `{"requeued":true}`},
		// b/1 is not in the table: 404, requeued by someone else meanwhile
	})
	code, out, errOut := run(t, api, "dead", "requeue", "--all")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "requeued 2 dead task(s); 1 were gone meanwhile\n", out)
	var reqs []string
	for _, r := range f.requests() {
		reqs = append(reqs, strings.TrimSuffix(r, " Bearer tok"))
	}
	require.Equal(t, []string{"GET /v1/dead?limit=1000", "POST /v1/dead/a/requeue", "POST /v1/dead/b%2F1/requeue",
		"GET /v1/dead?cursor=c1&limit=1000", "GET /v1/dead?cursor=c2&limit=1000", "POST /v1/dead/c/requeue"}, reqs)

	f.answers["POST /v1/dead/a/requeue"] = answer{503, `{"error":{"code":"unavailable","message":"Redis is down"}}`}
	code, _, errOut = run(t, api, "dead", "requeue", "-all")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `requeue "a", after 0 requeued: 503 unavailable: Redis is down`)
}

// The receiver prints each request on one line, with the headers timerd
// sends, and answers 200.
func TestReceiver(t *testing.T) {
	var out syncBuffer
	var errOut syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"receiver", "-listen", "127.0.0.1:0"}, nil, &out, &errOut) }()
	var addr string
	require.Eventually(t, func() bool {
		s := errOut.String()
		i := strings.Index(s, "http://")
		if i < 0 {
			return false
		}
		addr = strings.Fields(s[i:])[0]
		addr = strings.TrimSuffix(addr, ";")
		return true
	}, receiverWait, pollEvery, "the receiver did not say where it listens: %q", errOut.String())
	req, _ := http.NewRequest("POST", addr+"/hooks/cancel", strings.NewReader(`{"order":1001}`))
	req.Header.Set("Idempotency-Key", "order:1001:cancel")
	req.Header.Set("X-Rediswheel-Attempt", "1") // an older sender's name, printed under the new one
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	cancel()
	select {
	case code := <-done:
		require.Equal(t, 0, code, errOut.String())
	case <-time.After(receiverWait):
		t.Fatalf("the receiver did not stop within %v of its context ending", receiverWait)
	}
	line := out.String()
	for _, want := range []string{`POST /hooks/cancel`, `Idempotency-Key="order:1001:cancel"`, `X-Durable-Attempt=1`,
		`traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`, `body="{\"order\":1001}"`} {
		require.Contains(t, line, want)
	}
	var v any
	require.Error(t, json.Unmarshal([]byte(line), &v), "one plain line, not JSON")
}
