package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// HTTP callbacks.
//
// An HTTPTask is stored as the task's payload, as JSON with a version field:
//
//	{"v":1,"url":"https://example.com/hook","method":"POST",
//	 "header":{"Content-Type":["application/json"]},"body":"<base64>","timeout_ns":5000000000}
//
// AddHTTP validates the task before it is stored (httpvalid.go), so a task that can never be sent
// is refused at once instead of failing MaxAttempts times. HTTPHandler sends it; DecodeHTTPTask
// reads the stored form back, and EncodeHTTPTask writes it for other ways of adding (Periodic). Delivery is at-least-once: the receiver sees the task key in the
// Idempotency-Key header and should de-duplicate on it.

// Errors returned by AddHTTP, AddHTTPAfter and ReplaceHTTP for a task that could never be sent
// (with ErrKey for a key that is not a valid header value). Test with errors.Is.
var (
	ErrInvalidURL     = errors.New("durable: bad HTTP task URL")
	ErrInvalidMethod  = errors.New("durable: bad HTTP task method")
	ErrInvalidHeader  = errors.New("durable: bad HTTP task header")
	ErrInvalidTimeout = errors.New("durable: bad HTTP task timeout")
)

// ErrNotHTTPTask is wrapped by the error of DecodeHTTPTask, and so of HTTPHandler, for a payload
// that is not an HTTP task written by AddHTTP: not JSON, JSON without the version field, or a
// version this code does not read.
var ErrNotHTTPTask = errors.New("durable: not an HTTP task")

// ErrRedirectRefused is wrapped by the error a handler from HTTPHandler returns when it refuses to
// follow a redirect (see HTTPHandler). Such a task is dead-lettered at once.
var ErrRedirectRefused = errors.New("durable: HTTP redirect refused")

// Headers HTTPHandler sets on every callback, overriding a task header of the same name.
const (
	// HeaderIdempotencyKey carries the task key, the same on every attempt.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderAttempt carries the attempt number, 1 for the first delivery.
	HeaderAttempt = "X-Durable-Attempt"
	// HeaderAttemptRediswheel carries the attempt number too, under its name
	// from before durable left rediswheel, so that receivers written for
	// that name keep working.
	//
	// Deprecated: read HeaderAttempt. Every v0 release sends both headers,
	// with the same value; v1.0.0 (docs/RELEASING.md) stops sending this
	// one.
	HeaderAttemptRediswheel = "X-Rediswheel-Attempt"
)

// DefaultHTTPTimeout bounds a callback whose task has no Timeout, unless HTTPDefaultTimeout says otherwise.
const DefaultHTTPTimeout = 30 * time.Second

const (
	httpPayloadVersion = 1
	// defaultMaxRedirects is the number of same-host redirects a callback may follow.
	defaultMaxRedirects = 3
	// maxResponseRead bounds how much of a response body is read (and so drained for connection
	// reuse); maxErrorSnippet bounds how much of it goes into an error, and so into the dead set.
	// One byte past MaxResultBody, so that SetResult sees a longer body as truncated.
	maxResponseRead = MaxResultBody + 1
	maxErrorSnippet = 256
)

// HTTPTask is an HTTP request to make when a task is due.
type HTTPTask struct {
	// URL is absolute, http or https, with an ASCII host (give an internationalized name in its
	// xn-- form) and a port, if any, in 1..65535.
	URL string
	// Method is any RFC 9110 token: GET, POST, PUT, PATCH, DELETE or a custom one. It is
	// case-sensitive and never defaulted.
	Method string
	// Header is sent as given, except HeaderIdempotencyKey, HeaderAttempt (and
	// HeaderAttemptRediswheel) and
	// HeaderCompletionToken, which the handler sets. Names must be tokens other than Host, Content-Length and Transfer-Encoding (net/http
	// sets those from URL and Body); values must have no control character but tab. Upgrade, and
	// Connection other than "close" or "keep-alive", are refused: HTTP/2 refuses to send them.
	Header http.Header
	// Body is sent as the request body; nil sends none.
	Body []byte
	// Timeout bounds one attempt, from sending the request to reading the response. Zero means the
	// handler's default (DefaultHTTPTimeout unless set with HTTPDefaultTimeout).
	Timeout time.Duration
	// CompletionTimeout is how long the task waits for Complete after the receiver answers 202
	// Accepted (httpdetach.go); zero means DefaultCompletionTimeout. At most MaxDetach.
	CompletionTimeout time.Duration
}

// httpPayload is HTTPTask's stored form. Fields are only ever added; a change that an older
// handler would misread gets a new version, which older handlers dead-letter.
type httpPayload struct {
	Version   int         `json:"v"`
	URL       string      `json:"url"`
	Method    string      `json:"method"`
	Header    http.Header `json:"header,omitempty"`
	Body      []byte      `json:"body,omitempty"`
	TimeoutNS int64       `json:"timeout_ns,omitempty"`
	// CompletionNS is CompletionTimeout; older handlers ignore it and take 202 as done.
	CompletionNS int64 `json:"completion_timeout_ns,omitempty"`
}

// AddHTTP schedules t to be sent at time at, like Add, after checking that net/http can send it:
// it returns an error wrapping ErrInvalidURL, ErrInvalidMethod, ErrInvalidHeader or
// ErrInvalidTimeout, and stores nothing, if not. The key is sent as HeaderIdempotencyKey, so a key
// with a control character other than tab, or with a space or tab at either end (which HTTP/1
// would trim), is refused with ErrKey.
//
// The task's type is HTTPTaskType, so a Mux routes it to the handler registered for that type;
// opts (TaskTimeout, TaskMaxAttempts, TaskBackoff) apply as for Add, and a TaskType among them
// overrides the type.
func (q *Queue) AddHTTP(ctx context.Context, key string, t HTTPTask, at time.Time, opts ...TaskOption) (bool, error) {
	payload, err := encodeHTTPTask(key, t)
	if err != nil {
		return false, err
	}
	return q.Add(ctx, key, payload, at, httpTaskOptions(opts)...)
}

// httpTaskOptions puts TaskType(HTTPTaskType) before opts, so that a later TaskType wins.
func httpTaskOptions(opts []TaskOption) []TaskOption {
	return append([]TaskOption{TaskType(HTTPTaskType)}, opts...)
}

// AddHTTPAfter is AddHTTP with a delay measured on the store's clock, like AddAfter.
func (q *Queue) AddHTTPAfter(ctx context.Context, key string, t HTTPTask, delay time.Duration, opts ...TaskOption) (bool, error) {
	payload, err := encodeHTTPTask(key, t)
	if err != nil {
		return false, err
	}
	return q.AddAfter(ctx, key, payload, delay, httpTaskOptions(opts)...)
}

// ReplaceHTTP stores t under key to be sent at time at, like Replace, after the checks of AddHTTP.
func (q *Queue) ReplaceHTTP(ctx context.Context, key string, t HTTPTask, at time.Time, opts ...TaskOption) error {
	payload, err := encodeHTTPTask(key, t)
	if err != nil {
		return err
	}
	return q.Replace(ctx, key, payload, at, httpTaskOptions(opts)...)
}

func encodeHTTPTask(key string, t HTTPTask) ([]byte, error) {
	if err := validateHTTPKey(key); err != nil {
		return nil, err
	}
	return EncodeHTTPTask(t)
}

// EncodeHTTPTask returns t in the stored form AddHTTP writes as the payload, after the checks of
// AddHTTP (an error wrapping ErrInvalidURL, ErrInvalidMethod, ErrInvalidHeader or
// ErrInvalidTimeout). It is for adding an HTTP task by another way than AddHTTP, such as Periodic:
// give the payload with TaskType(HTTPTaskType), and HTTPHandler sends it. The key is not checked
// here: HTTPHandler dead-letters a task whose key AddHTTP would refuse (ErrKey).
func EncodeHTTPTask(t HTTPTask) ([]byte, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	return json.Marshal(httpPayload{
		Version:   httpPayloadVersion,
		URL:       t.URL,
		Method:    t.Method,
		Header:    t.Header,
		Body:      t.Body,
		TimeoutNS: int64(t.Timeout),

		CompletionNS: int64(t.CompletionTimeout),
	})
}

// DecodeHTTPTask returns the HTTPTask stored as payload by AddHTTP, AddHTTPAfter or ReplaceHTTP.
// For a payload that is not one it returns an error wrapping ErrNotHTTPTask; for a stored task
// that fails the checks of AddHTTP (written by other code), the error of that check.
func DecodeHTTPTask(payload []byte) (HTTPTask, error) {
	var p httpPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return HTTPTask{}, fmt.Errorf("%w: %v", ErrNotHTTPTask, err)
	}
	switch p.Version {
	case httpPayloadVersion:
	case 0:
		return HTTPTask{}, fmt.Errorf("%w: no version field \"v\"", ErrNotHTTPTask)
	default:
		return HTTPTask{}, fmt.Errorf("%w: version %d, this code reads version %d", ErrNotHTTPTask, p.Version, httpPayloadVersion)
	}
	t := HTTPTask{URL: p.URL, Method: p.Method, Header: p.Header, Body: p.Body, Timeout: time.Duration(p.TimeoutNS),
		CompletionTimeout: time.Duration(p.CompletionNS)}
	if err := t.validate(); err != nil {
		return HTTPTask{}, err
	}
	return t, nil
}

// HTTPStatusError is the error a handler from HTTPHandler returns for a response that is not 2xx.
type HTTPStatusError struct {
	StatusCode int
	// Body is the start of the response body, at most 256 bytes.
	Body string
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("durable: HTTP callback: %d %s: %q", e.StatusCode, http.StatusText(e.StatusCode), e.Body)
}

// HTTPOption configures HTTPHandler.
type HTTPOption func(*httpHandler)

// HTTPDefaultTimeout sets the timeout of a callback whose task has no Timeout. It panics unless d > 0.
func HTTPDefaultTimeout(d time.Duration) HTTPOption {
	if d <= 0 {
		panic("durable: HTTPDefaultTimeout: timeout must be positive")
	}
	return func(h *httpHandler) { h.defaultTimeout = d }
}

// HTTPMaxRedirects sets how many same-host redirects a callback may follow (default 3; 0 follows
// none, so a redirect is dead-lettered). It panics if n < 0.
func HTTPMaxRedirects(n int) HTTPOption {
	if n < 0 {
		panic("durable: HTTPMaxRedirects: negative limit")
	}
	return func(h *httpHandler) { h.maxRedirects = n }
}

type httpHandler struct {
	client         http.Client
	defaultTimeout time.Duration
	maxRedirects   int
}

// HTTPHandler returns a Handler that sends tasks added with AddHTTP using client (a new client
// with http.DefaultTransport if nil; client's own CheckRedirect is replaced, its Timeout still
// applies). Each attempt:
//
//   - is bounded by the task's Timeout, or the default timeout;
//   - carries the task key in HeaderIdempotencyKey and the attempt number in HeaderAttempt (and,
//     until v1.0.0, in HeaderAttemptRediswheel);
//   - carries the delivery's Task.Token in HeaderCompletionToken;
//   - is done on a 2xx response, except 202 Accepted, which returns Detach(the task's
//     CompletionTimeout): the task waits for Complete with that token (httpdetach.go);
//   - is retried, as the queue's Backoff and MaxAttempts say, on 408, 429 and 5xx, on a network
//     error and on a timeout;
//   - on 429 or 503 with a valid Retry-After header (seconds or an HTTP-date), returns
//     RetryAfterError(delay, the HTTPStatusError) instead: the task runs again after that delay,
//     at most MaxRetryAfter, without using up an attempt (see RetryAfter for the bound); a delay
//     of 0 or a date in the past waits the normal backoff, never none;
//   - is dead-lettered at once (Permanent) on any other status, for a payload that is not an
//     HTTPTask (ErrNotHTTPTask) or fails the checks of AddHTTP, and for a key AddHTTP would refuse
//     (ErrKey: a task stored with Add whose key net/http cannot send as HeaderIdempotencyKey).
//
// A redirect is followed only to the same host and port, without a downgrade from https to http,
// without a change of method (so 307 and 308 always, 301, 302 and 303 only for GET and HEAD), and at
// most 3 times (see HTTPMaxRedirects). Any other redirect is refused and the task dead-lettered with
// an error wrapping ErrRedirectRefused: the callback URL sends us elsewhere and will go on doing so,
// so an operator should fix it rather than have it retried; and following it could hand the body to
// another party, or turn a POST into a GET that answers 200 without the callback having happened.
//
// The response body is read up to 64 KiB (MaxResultBody), so the connection can be reused; the
// status code and that body are the delivery's Result (SetResult), on success and failure alike,
// with Truncated set for a longer body; the first 256 bytes of a non-2xx response go into the
// error, and so into the dead set. Errors name the task URL: do not
// put secrets in URLs.
func HTTPHandler(client *http.Client, opts ...HTTPOption) Handler {
	h := &httpHandler{defaultTimeout: DefaultHTTPTimeout, maxRedirects: defaultMaxRedirects}
	if client != nil {
		h.client = *client
	}
	h.client.CheckRedirect = h.checkRedirect
	for _, opt := range opts {
		opt(h)
	}
	return h.handle
}

func (h *httpHandler) checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	switch {
	case req.URL.Host != first.URL.Host:
		return fmt.Errorf("%w: to another host: %s", ErrRedirectRefused, req.URL.Redacted())
	case first.URL.Scheme == "https" && req.URL.Scheme != "https":
		return fmt.Errorf("%w: from https to %s", ErrRedirectRefused, req.URL.Scheme)
	case req.Method != first.Method:
		return fmt.Errorf("%w: it would turn %s into %s", ErrRedirectRefused, first.Method, req.Method)
	case len(via) > h.maxRedirects:
		return fmt.Errorf("%w: more than %d redirects", ErrRedirectRefused, h.maxRedirects)
	}
	return nil
}

func (h *httpHandler) handle(ctx context.Context, task Task) error {
	t, err := DecodeHTTPTask(task.Payload)
	if err != nil {
		return Permanent(err)
	}
	if err := validateHTTPKey(task.Key); err != nil {
		// Added with Add rather than AddHTTP: net/http would refuse it on every attempt.
		return Permanent(err)
	}
	timeout := t.Timeout
	if timeout == 0 {
		timeout = h.defaultTimeout
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var body io.Reader
	if t.Body != nil {
		body = bytes.NewReader(t.Body)
	}
	req, err := http.NewRequestWithContext(callCtx, t.Method, t.URL, body)
	if err != nil {
		return Permanent(fmt.Errorf("durable: HTTP callback: %w", err))
	}
	for name, values := range t.Header {
		for _, v := range values {
			req.Header.Add(name, v) // canonicalized, so the Set calls below replace any task value
		}
	}
	req.Header.Set(HeaderIdempotencyKey, task.Key)
	req.Header.Set(HeaderAttempt, strconv.Itoa(task.Attempt))
	req.Header.Set(HeaderAttemptRediswheel, strconv.Itoa(task.Attempt)) // until v1.0.0: see its doc
	setCompletionHeader(req, task)

	resp, err := h.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrRedirectRefused) {
			return Permanent(err)
		}
		if ctx.Err() == nil && callCtx.Err() != nil {
			return fmt.Errorf("durable: HTTP callback timed out after %v: %w", timeout, err)
		}
		return err
	}
	defer resp.Body.Close()
	read, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseRead))
	code := resp.StatusCode
	SetResult(ctx, Result{Code: code, Body: read}) // cut to MaxResultBody, Truncated if longer

	if 200 <= code && code <= 299 {
		// The callback happened; a body cut short by the timeout does not undo that.
		return accepted(t, code)
	}
	if len(read) > maxErrorSnippet {
		read = read[:maxErrorSnippet]
	}
	statusErr := &HTTPStatusError{StatusCode: code, Body: string(read)}
	if readErr != nil {
		err = fmt.Errorf("%w (reading the body: %v)", statusErr, readErr)
	} else {
		err = statusErr
	}
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		if d, ok := retryAfterHeader(resp.Header); ok {
			return RetryAfterError(d, err)
		}
	}
	if code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500 {
		return err
	}
	return Permanent(err)
}

// retryAfterHeader reads the delay a response's Retry-After header asks for (RFC 9110, section
// 10.2.3): delay-seconds, or an HTTP-date taken relative to the response's own Date header when it
// has one, so that a receiver's clock ahead of ours does not stretch the wait, and to our clock
// otherwise. A date in the past is 0 (RetryAfter then waits the backoff); a delay too large for a
// Duration is MaxRetryAfter (which RetryAfterError clamps to anyway). ok is false when the header
// is missing or malformed.
func retryAfterHeader(h http.Header) (d time.Duration, ok bool) {
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	// ParseUint takes digits only (no sign, no spaces), which is delay-seconds' grammar.
	secs, err := strconv.ParseUint(v, 10, 64)
	switch {
	case err == nil && secs <= uint64(MaxRetryAfter/time.Second):
		return time.Duration(secs) * time.Second, true
	case err == nil || errors.Is(err, strconv.ErrRange):
		return MaxRetryAfter, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	now := time.Now()
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date
	}
	return max(at.Sub(now), 0), true
}
