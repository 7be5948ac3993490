package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHTTPTaskValidation(t *testing.T) {
	// AddHTTP checks before it stores, and the stub store panics if called, so a bad task is
	// refused without a store call.
	q := stubQueue(t, Options{})

	ok := HTTPTask{URL: "https://example.com:8443/hook?x=1", Method: "POST"}
	with := func(change func(*HTTPTask)) HTTPTask {
		t := ok
		change(&t)
		return t
	}
	for _, tc := range []struct {
		name string
		task HTTPTask
		want error
	}{
		{"empty URL", with(func(t *HTTPTask) { t.URL = "" }), ErrInvalidURL},
		{"relative URL", with(func(t *HTTPTask) { t.URL = "/hook" }), ErrInvalidURL},
		{"no scheme", with(func(t *HTTPTask) { t.URL = "example.com/hook" }), ErrInvalidURL},
		{"ftp", with(func(t *HTTPTask) { t.URL = "ftp://example.com/hook" }), ErrInvalidURL},
		{"no host", with(func(t *HTTPTask) { t.URL = "http:///hook" }), ErrInvalidURL},
		{"unparsable", with(func(t *HTTPTask) { t.URL = "http://exa mple.com/%zz" }), ErrInvalidURL},
		{"empty method", with(func(t *HTTPTask) { t.Method = "" }), ErrInvalidMethod},
		{"method with space", with(func(t *HTTPTask) { t.Method = "GE T" }), ErrInvalidMethod},
		{"method with newline", with(func(t *HTTPTask) { t.Method = "GET\n" }), ErrInvalidMethod},
		{"non-ASCII method", with(func(t *HTTPTask) { t.Method = "GÉT" }), ErrInvalidMethod},
		{"header name", with(func(t *HTTPTask) { t.Header = http.Header{"Bad Name": {"x"}} }), ErrInvalidHeader},
		{"header value CRLF", with(func(t *HTTPTask) { t.Header = http.Header{"X-A": {"a\r\nX-B: b"}} }), ErrInvalidHeader},
		{"header value NUL", with(func(t *HTTPTask) { t.Header = http.Header{"X-A": {"a\x00"}} }), ErrInvalidHeader},
		{"Host header", with(func(t *HTTPTask) { t.Header = http.Header{"host": {"other.example"}} }), ErrInvalidHeader},
		{"Content-Length header", with(func(t *HTTPTask) { t.Header = http.Header{"Content-Length": {"3"}} }), ErrInvalidHeader},
		{"negative timeout", with(func(t *HTTPTask) { t.Timeout = -time.Second }), ErrInvalidTimeout},
		// Issue 9: each of these was stored, then failed on every attempt.
		{"header value SOH", with(func(t *HTTPTask) { t.Header = http.Header{"X-A": {"a\x01b"}} }), ErrInvalidHeader},
		{"header value DEL", with(func(t *HTTPTask) { t.Header = http.Header{"X-A": {"a\x7f"}} }), ErrInvalidHeader},
		{"port above 65535", with(func(t *HTTPTask) { t.URL = "http://127.0.0.1:99999/" }), ErrInvalidURL},
		{"port 65536", with(func(t *HTTPTask) { t.URL = "http://[::1]:65536/" }), ErrInvalidURL},
		{"port 0", with(func(t *HTTPTask) { t.URL = "http://127.0.0.1:0/" }), ErrInvalidURL},
		{"huge port", with(func(t *HTTPTask) { t.URL = "http://h:99999999999999999999999/" }), ErrInvalidURL},
		{"host byte", with(func(t *HTTPTask) { t.URL = "http://a<b/" }), ErrInvalidURL},
		{"colon in host", with(func(t *HTTPTask) { t.URL = "http://h:80:80/" }), ErrInvalidURL},
		{"non-ASCII host", with(func(t *HTTPTask) { t.URL = "http://exämple.com/" }), ErrInvalidURL},
		{"Upgrade", with(func(t *HTTPTask) { t.Header = http.Header{"Upgrade": {"websocket"}} }), ErrInvalidHeader},
		{"Connection token", with(func(t *HTTPTask) { t.Header = http.Header{"Connection": {"X-A"}} }), ErrInvalidHeader},
		{"two Connection values", with(func(t *HTTPTask) { t.Header = http.Header{"Connection": {"close"}, "connection": {"close"}} }), ErrInvalidHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			added, err := q.AddHTTP(context.Background(), "k", tc.task, time.Now())
			require.ErrorIs(t, err, tc.want)
			assert.False(t, added)
			_, err = q.AddHTTPAfter(context.Background(), "k", tc.task, time.Second)
			require.ErrorIs(t, err, tc.want)
			require.ErrorIs(t, q.ReplaceHTTP(context.Background(), "k", tc.task, time.Now()), tc.want)
		})
	}

	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PURGE", "M-SEARCH", "get"} {
		_, err := encodeHTTPTask("k", with(func(t *HTTPTask) { t.Method = m }))
		assert.NoError(t, err, m)
	}
	for _, u := range []string{"http://localhost/", "HTTPS://Example.COM", "http://[::1]:8080/a?b=c#d", "http://user:pw@h/",
		"http://h:65535/", "http://h:0080/", "http://h:/", "http://xn--exmple-cua.com/", "http://[fe80::1%25eth0]:1/"} {
		_, err := encodeHTTPTask("k", with(func(t *HTTPTask) { t.URL = u }))
		assert.NoError(t, err, u)
	}
	for _, h := range []http.Header{
		{"X-A": {"tab\there", "obs-text \xff\x80", "", "  padded  "}},
		{"Connection": {"close"}}, {"connection": {"Keep-Alive"}}, {"Upgrade": {""}},
	} {
		_, err := encodeHTTPTask("k", with(func(t *HTTPTask) { t.Header = h }))
		assert.NoError(t, err, "%q", h)
	}

	// The key is sent as the Idempotency-Key header, so it must be a header value that arrives
	// as it is.
	for _, key := range []string{"order\n1", "a\x7f", "a\rb", "a\x00", " lead", "trail\t"} {
		added, err := q.AddHTTP(context.Background(), key, ok, time.Now())
		require.ErrorIs(t, err, ErrKey, "%q", key)
		assert.False(t, added)
		_, err = q.AddHTTPAfter(context.Background(), key, ok, time.Second)
		require.ErrorIs(t, err, ErrKey, "%q", key)
		require.ErrorIs(t, q.ReplaceHTTP(context.Background(), key, ok, time.Now()), ErrKey, "%q", key)
	}
	for _, key := range []string{"order 1", "tab\tinside", "заказ-1", "a:b/c?d"} {
		_, err := encodeHTTPTask(key, ok)
		assert.NoError(t, err, "%q", key)
	}
}

func TestHTTPTaskEncoding(t *testing.T) {
	in := HTTPTask{
		URL:     "https://example.com/hook",
		Method:  "PATCH",
		Header:  http.Header{"Content-Type": {"application/json"}, "X-Multi": {"a", "b"}},
		Body:    []byte("{\"n\":1}\x00\xff"),
		Timeout: 1500 * time.Microsecond,
	}
	payload, err := encodeHTTPTask("k", in)
	require.NoError(t, err)

	var raw map[string]any
	require.NoError(t, json.Unmarshal(payload, &raw))
	assert.Equal(t, float64(1), raw["v"], "the stored form carries its version")

	out, err := DecodeHTTPTask(payload)
	require.NoError(t, err)
	assert.Equal(t, in, out)

	for _, notHTTP := range []string{"", "not json", "null", "[1]", `"s"`, `{"order":42}`,
		`{"v":2,"url":"http://h/","method":"GET"}`, `{"url":"http://h/","method":"GET"}`, `{"v":"1"}`} {
		_, err := DecodeHTTPTask([]byte(notHTTP))
		assert.ErrorIs(t, err, ErrNotHTTPTask, notHTTP)
		assert.Contains(t, err.Error(), "not an HTTP task", notHTTP)
	}
	exported, err := EncodeHTTPTask(in)
	require.NoError(t, err)
	assert.Equal(t, payload, exported, "EncodeHTTPTask writes what AddHTTP stores")
	_, err = EncodeHTTPTask(HTTPTask{URL: "ftp://h/", Method: "GET"})
	assert.ErrorIs(t, err, ErrInvalidURL, "EncodeHTTPTask checks as AddHTTP does")
	_, err = EncodeHTTPTask(HTTPTask{URL: "http://h/", Method: "GET", Timeout: -1})
	assert.ErrorIs(t, err, ErrInvalidTimeout)

	_, err = DecodeHTTPTask([]byte(`{"v":2,"url":"http://h/","method":"GET"}`))
	assert.ErrorContains(t, err, "version 2, this code reads version 1")
	_, err = DecodeHTTPTask([]byte(`{"v":1,"url":"http://h/","method":"BAD METHOD"}`))
	assert.ErrorIs(t, err, ErrInvalidMethod, "an HTTP task, but one AddHTTP would have refused")
	assert.NotErrorIs(t, err, ErrNotHTTPTask)
}

// sendHTTPTask runs h on a task made from ht, as Run would on its attempt-th delivery.
func sendHTTPTask(t *testing.T, h Handler, key string, attempt int, ht HTTPTask) error {
	t.Helper()
	payload, err := encodeHTTPTask(key, ht)
	require.NoError(t, err)
	return handleWithin(t, h, context.Background(), Task{Key: key, Payload: payload, Attempt: attempt, Due: time.Now()})
}

// handleWithin returns h(ctx, tk), failing t if h has not returned within
// patience: a timeout that does not cut a request shows as a failure, not a
// hung test.
func handleWithin(t *testing.T, h Handler, ctx context.Context, tk Task) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- h(ctx, tk) }()
	return await(t, done, "the handler to return")
}

// httpOutcome classifies a handler's result as the queue would act on it.
func httpOutcome(err error) string {
	_, later := retryAfterOf(err)
	_, detached := detachOf(err)
	switch {
	case err == nil:
		return "done"
	case detached:
		return "detach"
	case later:
		return "later"
	case IsPermanent(err):
		return "dead"
	default:
		return "retry"
	}
}

func TestHTTPHandlerStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var code int
		fmt.Sscan(strings.TrimPrefix(r.URL.Path, "/"), &code)
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d", code)
	}))
	defer srv.Close()
	h := HTTPHandler(srv.Client())

	for code, want := range map[int]string{
		200: "done", 201: "done", 202: "detach", 204: "done", 299: "done",
		300: "dead", 304: "dead", // no Location: nothing to follow
		400: "dead", 401: "dead", 403: "dead", 404: "dead", 405: "dead", 409: "dead", 410: "dead", 422: "dead",
		408: "retry", 429: "retry",
		500: "retry", 501: "retry", 502: "retry", 503: "retry", 504: "retry", 599: "retry",
	} {
		err := sendHTTPTask(t, h, "k", 1, HTTPTask{URL: fmt.Sprintf("%s/%d", srv.URL, code), Method: "POST"})
		assert.Equal(t, want, httpOutcome(err), "status %d: %v", code, err)
		if err != nil && want != "detach" {
			var se *HTTPStatusError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, code, se.StatusCode)
			if code != http.StatusNotModified { // which has no body
				assert.Equal(t, fmt.Sprintf("status %d", code), se.Body)
			}
			assert.Contains(t, err.Error(), fmt.Sprint(code))
		}
	}
}

func TestHTTPHandlerRequest(t *testing.T) {
	type seen struct {
		method, path, body string
		header             http.Header
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.RequestURI(), string(b), r.Header}
	}))
	defer srv.Close()
	h := HTTPHandler(srv.Client())

	for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "PURGE"} {
		body := []byte(`{"order":42,"method":"` + method + `"}`)
		err := sendHTTPTask(t, h, "order-42/"+method, 3, HTTPTask{
			URL:    srv.URL + "/hooks/order?id=42",
			Method: method,
			Header: http.Header{
				"Content-Type":         {"application/json"},
				"X-Multi":              {"a", "b"},
				"Idempotency-Key":      {"forged"}, // the handler's own value wins,
				"x-durable-attempt":    {"8"},      // whatever the case of the name,
				"x-rediswheel-attempt": {"9"},      // the old name too
			},
			Body: body,
		})
		require.NoError(t, err, method)
		s := await(t, got, "the request")
		assert.Equal(t, method, s.method)
		assert.Equal(t, "/hooks/order?id=42", s.path)
		assert.Equal(t, string(body), s.body)
		assert.Equal(t, "application/json", s.header.Get("Content-Type"))
		assert.Equal(t, []string{"a", "b"}, s.header.Values("X-Multi"))
		assert.Equal(t, []string{"order-42/" + method}, s.header.Values(HeaderIdempotencyKey))
		assert.Equal(t, []string{"3"}, s.header.Values(HeaderAttempt))
		assert.Equal(t, []string{"3"}, s.header.Values(HeaderAttemptRediswheel), "the old name too, until v1.0.0")
	}

	require.NoError(t, sendHTTPTask(t, h, "k", 1, HTTPTask{URL: srv.URL, Method: "POST"}))
	s := await(t, got, "the request")
	assert.Empty(t, s.body, "a nil Body sends no body")
	assert.Equal(t, "1", s.header.Get(HeaderAttempt))
}

func TestHTTPHandlerTimeout(t *testing.T) {
	quit := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Never answers; returns once the client gives up, or, should a
		// timeout be broken, when the test ends, so that Close does not wait.
		select {
		case <-r.Context().Done():
		case <-quit:
		}
	}))
	defer srv.Close()
	defer close(quit)

	t.Run("task timeout", func(t *testing.T) {
		err := sendHTTPTask(t, HTTPHandler(srv.Client()), "k", 1, HTTPTask{URL: srv.URL, Method: "GET", Timeout: 50 * time.Millisecond})
		assert.Equal(t, "retry", httpOutcome(err))
		assert.Contains(t, err.Error(), "timed out after 50ms")
	})
	t.Run("default timeout", func(t *testing.T) {
		err := sendHTTPTask(t, HTTPHandler(srv.Client(), HTTPDefaultTimeout(30*time.Millisecond)), "k", 1, HTTPTask{URL: srv.URL, Method: "GET"})
		assert.Equal(t, "retry", httpOutcome(err))
		assert.Contains(t, err.Error(), "timed out after 30ms")
	})
	t.Run("caller cancels", func(t *testing.T) {
		payload, err := encodeHTTPTask("k", HTTPTask{URL: srv.URL, Method: "GET"})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		err = handleWithin(t, HTTPHandler(srv.Client()), ctx, Task{Key: "k", Payload: payload, Attempt: 1})
		assert.Equal(t, "retry", httpOutcome(err))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotContains(t, err.Error(), "timed out after", "the caller's deadline is not the task's timeout")
	})
}

func TestHTTPHandlerNetworkError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	err := sendHTTPTask(t, HTTPHandler(nil), "k", 1, HTTPTask{URL: addr, Method: "POST"})
	assert.Equal(t, "retry", httpOutcome(err), "%v", err)
}

func TestHTTPHandlerBadPayload(t *testing.T) {
	h := HTTPHandler(nil)
	for _, p := range []string{"", "{", `{"v":99,"url":"http://h/","method":"GET"}`, `{"v":1,"url":"mailto:x@y","method":"GET"}`} {
		err := h(context.Background(), Task{Key: "k", Payload: []byte(p), Attempt: 1})
		assert.Equal(t, "dead", httpOutcome(err), "payload %q: %v", p, err)
	}
	err := h(context.Background(), Task{Key: "k", Payload: []byte(`{"order":42}`), Attempt: 1})
	assert.Equal(t, "dead", httpOutcome(err))
	assert.ErrorIs(t, err, ErrNotHTTPTask)

	// A valid HTTP task stored by Add under a key net/http cannot send: dead at once, not retried.
	payload, err := encodeHTTPTask("k", HTTPTask{URL: "http://127.0.0.1:1/", Method: "GET"})
	require.NoError(t, err)
	err = h(context.Background(), Task{Key: "order\n1", Payload: payload, Attempt: 1})
	assert.Equal(t, "dead", httpOutcome(err), "%v", err)
	assert.ErrorIs(t, err, ErrKey)
}

func TestHTTPHandlerBoundedBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		chunk := strings.Repeat("x", 1<<10)
		for range 4 << 10 { // 4 MiB, of which at most 64 KiB is read
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	err := sendHTTPTask(t, HTTPHandler(srv.Client()), "k", 1, HTTPTask{URL: srv.URL, Method: "GET"})
	var se *HTTPStatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, strings.Repeat("x", maxErrorSnippet), se.Body)
	assert.Less(t, len(err.Error()), 2*maxErrorSnippet)
}

func TestHTTPHandlerRedirect(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()

	var hits atomic.Int32
	var finalBody atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/307":
			http.Redirect(w, r, "/final", http.StatusTemporaryRedirect)
		case "/302":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
		case "/elsewhere":
			http.Redirect(w, r, other.URL+"/final", http.StatusTemporaryRedirect)
		case "/final":
			b, _ := io.ReadAll(r.Body)
			finalBody.Store(r.Method + " " + string(b) + " " + r.Header.Get(HeaderIdempotencyKey))
		}
	}))
	defer srv.Close()

	for _, tc := range []struct {
		name, method, path string
		opts               []HTTPOption
		want               string
		hits               int32
		final              string // what /final saw: method, body, idempotency key
	}{
		{"307 same host keeps POST and body", "POST", "/307", nil, "done", 2, "POST payload key-1"},
		{"302 same host for GET drops body", "GET", "/302", nil, "done", 2, "GET  key-1"},
		{"302 would turn POST into GET", "POST", "/302", nil, "dead", 1, ""},
		{"another host", "POST", "/elsewhere", nil, "dead", 1, ""},
		{"loop stops after 3", "GET", "/loop", nil, "dead", 4, ""},
		{"HTTPMaxRedirects(0)", "POST", "/307", []HTTPOption{HTTPMaxRedirects(0)}, "dead", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			finalBody.Store("")
			err := sendHTTPTask(t, HTTPHandler(srv.Client(), tc.opts...), "key-1", 1,
				HTTPTask{URL: srv.URL + tc.path, Method: tc.method, Body: []byte("payload")})
			assert.Equal(t, tc.want, httpOutcome(err), "%v", err)
			assert.Equal(t, tc.hits, hits.Load())
			assert.Equal(t, tc.final, finalBody.Load())
			if tc.want == "dead" {
				assert.ErrorIs(t, err, ErrRedirectRefused)
			}
		})
	}
	assert.Zero(t, otherHits.Load(), "a refused redirect never reaches the other host")
}

func TestHTTPHandlerCheckRedirect(t *testing.T) {
	h := &httpHandler{maxRedirects: defaultMaxRedirects}
	req := func(method, rawURL string) *http.Request {
		u, err := url.Parse(rawURL)
		require.NoError(t, err)
		return &http.Request{Method: method, URL: u}
	}
	first := req("POST", "https://a.example/hook")
	assert.NoError(t, h.checkRedirect(req("POST", "https://a.example/v2/hook"), []*http.Request{first}))
	assert.ErrorIs(t, h.checkRedirect(req("POST", "http://a.example/v2/hook"), []*http.Request{first}), ErrRedirectRefused, "https to http")
	assert.ErrorIs(t, h.checkRedirect(req("POST", "https://a.example:8443/hook"), []*http.Request{first}), ErrRedirectRefused, "another port")
	assert.ErrorIs(t, h.checkRedirect(req("POST", "https://b.example/hook"), []*http.Request{first}), ErrRedirectRefused, "another host")
	assert.NoError(t, h.checkRedirect(req("GET", "https://a.example/"), []*http.Request{req("GET", "http://a.example/")}), "http to https")
}

func TestHTTPOptionsPanic(t *testing.T) {
	assert.PanicsWithValue(t, "durable: HTTPDefaultTimeout: timeout must be positive", func() { HTTPDefaultTimeout(0) })
	assert.PanicsWithValue(t, "durable: HTTPMaxRedirects: negative limit", func() { HTTPMaxRedirects(-1) })
}
