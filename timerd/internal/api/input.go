package api

import (
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
)

// MaxKeyLen caps a task key (README: 1–512 bytes).
const MaxKeyLen = 512

// periodicPrefix starts the keys of schedules' occurrences (durable's
// Periodic): a created task may not take one.
const periodicPrefix = "periodic:"

// checkKey checks a task key from a path or a body: 1..MaxKeyLen bytes of
// UTF-8 without control characters, and no space or tab at either end (it is
// sent as the Idempotency-Key header, which would lose them).
func checkKey(key string) error {
	switch {
	case key == "" || len(key) > MaxKeyLen:
		return invalid("key", "key must be 1 to %d bytes, not %d", MaxKeyLen, len(key))
	case !utf8.ValidString(key):
		return invalid("key", "key must be UTF-8")
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return invalid("key", "key must have no control character")
	case strings.Trim(key, " \t") != key:
		return invalid("key", "key must not start or end with a space or tab")
	}
	return nil
}

// checkNewKey is checkKey for a task being created.
func checkNewKey(key string) error {
	if strings.HasPrefix(key, periodicPrefix) {
		return invalid("key", "keys starting with %q are the schedules'", periodicPrefix)
	}
	return checkKey(key)
}

// when is a due time: absolute (at), or a delay after now.
type when struct {
	at       time.Time
	delay    time.Duration
	relative bool
}

// parseWhen reads exactly one of due_at (RFC 3339 with a zone, after the
// Unix epoch) and delay (a Go duration, at least 0).
func parseWhen(dueAt, delay *string) (when, error) {
	switch {
	case dueAt != nil && delay != nil:
		return when{}, invalid("due_at", "give exactly one of due_at and delay, not both")
	case dueAt == nil && delay == nil:
		return when{}, invalid("due_at", "give exactly one of due_at and delay")
	case delay != nil:
		d, err := time.ParseDuration(*delay)
		if err != nil {
			return when{}, invalid("delay", "delay must be a duration such as \"90s\" or \"1h30m\"")
		}
		if d < 0 {
			return when{}, invalid("delay", "delay must not be negative")
		}
		return when{delay: d, relative: true}, nil
	}
	at, err := time.Parse(time.RFC3339, *dueAt)
	if err != nil {
		return when{}, invalid("due_at", "due_at must be an RFC 3339 time with a zone, such as \"2026-11-25T10:00:00Z\"")
	}
	// The instant, not the year on its own clock: 1970-01-01T00:00:00+14:00
	// is 1969-12-31T10:00:00Z. durable keeps due times as Unix ms, 0
	// meaning none, so the epoch itself would read back as no due time.
	if !at.After(time.Unix(0, 0)) {
		return when{}, invalid("due_at", "due_at must be after 1970-01-01T00:00:00Z")
	}
	return when{at: at}, nil
}

// callbackJSON is a callback as a request gives it.
type callbackJSON struct {
	URL        string              `json:"url"`
	Method     string              `json:"method"`
	Headers    map[string][]string `json:"headers"`
	Body       *string             `json:"body"`
	BodyBase64 *string             `json:"body_base64"`
	Timeout    string              `json:"timeout"`
	// CompletionTimeout is how long a task whose callback answered 202 waits
	// for /complete or /fail (durable's HTTPTask.CompletionTimeout).
	CompletionTimeout string `json:"completion_timeout"`
}

var callbackShape = shape{"url": nil, "method": nil, "headers": anyFields, "body": nil, "body_base64": nil, "timeout": nil,
	"completion_timeout": nil}

// task checks c as AddHTTP will, naming the field of each fault, and then
// asks check whether its destination is allowed.
func (c *callbackJSON) task(ctx context.Context, check func(context.Context, *url.URL) error) (durable.HTTPTask, error) {
	if c == nil {
		return durable.HTTPTask{}, invalid("callback", "callback is required")
	}
	t := durable.HTTPTask{URL: c.URL, Method: c.Method, Header: c.Headers}
	switch {
	case c.URL == "":
		return t, invalid("callback.url", "callback.url is required")
	case c.Method == "":
		return t, invalid("callback.method", "callback.method is required")
	case c.Method != strings.ToUpper(c.Method):
		// HTTP allows lower-case tokens, but no receiver implements "post"
		// (one answered 501, which is retried): a typo, refused now rather
		// than retried until the task is dead.
		return t, invalid("callback.method", "callback.method must be upper case, such as POST")
	case c.Body != nil && c.BodyBase64 != nil:
		return t, invalid("callback.body_base64", "give at most one of callback.body and callback.body_base64")
	case c.Body != nil:
		t.Body = []byte(*c.Body)
	case c.BodyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*c.BodyBase64)
		if err != nil {
			return t, invalid("callback.body_base64", "callback.body_base64 must be standard base64 with padding")
		}
		t.Body = b
	}
	if c.Timeout != "" {
		d, err := time.ParseDuration(c.Timeout)
		if err != nil || d <= 0 {
			return t, invalid("callback.timeout", "callback.timeout must be a positive duration such as \"10s\"")
		}
		t.Timeout = d
	}
	if c.CompletionTimeout != "" {
		d, err := time.ParseDuration(c.CompletionTimeout)
		if err != nil || d <= 0 || d > durable.MaxDetach {
			return t, invalid("callback.completion_timeout", "callback.completion_timeout must be a positive duration up to %v, such as \"30m\"", durable.MaxDetach)
		}
		t.CompletionTimeout = d
	}
	if _, err := durable.EncodeHTTPTask(t); err != nil {
		return t, callbackError(t, err)
	}
	u, err := url.Parse(t.URL)
	if err != nil { // EncodeHTTPTask parsed it already
		return t, invalid("callback.url", "%v", err)
	}
	if err := check(ctx, u); err != nil && !isUnresolved(err) {
		if isForbidden(err) {
			return t, &apiError{apierror.DestinationForbidden, "callback.url", err.Error()}
		}
		if ctx.Err() != nil {
			return t, ctx.Err()
		}
		return t, invalid("callback.url", "%v", err)
	}
	return t, nil
}

// callbackError maps an error of the HTTP task checks (package durable's,
// whose texts start "durable: ", trimmed here) to its field,
// or returns err as it is.
func callbackError(t durable.HTTPTask, err error) error {
	switch {
	case errors.Is(err, durable.ErrInvalidURL):
		return invalid("callback.url", "%v", strings.TrimPrefix(err.Error(), "durable: "))
	case errors.Is(err, durable.ErrInvalidMethod):
		return invalid("callback.method", "callback.method must be an HTTP method token (GET, POST, ...)")
	case errors.Is(err, durable.ErrInvalidTimeout):
		return invalid("callback.timeout", "%v", strings.TrimPrefix(err.Error(), "durable: "))
	case errors.Is(err, durable.ErrInvalidHeader):
		field := "callback.headers"
		// Name the header when one alone is refused (Connection and
		// connection given together fail only together).
		names := make([]string, 0, len(t.Header))
		for name := range t.Header {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			one := durable.HTTPTask{URL: t.URL, Method: t.Method, Header: map[string][]string{name: t.Header[name]}}
			if _, e := durable.EncodeHTTPTask(one); e != nil {
				field += "." + name
				break
			}
		}
		return invalid(field, "%v", strings.TrimPrefix(err.Error(), "durable: "))
	}
	return err
}

// definitionError maps an error of schedules.Definition.Validate to its field.
func definitionError(d schedules.Definition, err error) error {
	msg := strings.TrimPrefix(err.Error(), "schedules: ")
	switch {
	case errors.Is(err, schedules.ErrName):
		return invalid("name", "%s", msg)
	case errors.Is(err, schedules.ErrTiming):
		return invalid("every", "%s", msg)
	case errors.Is(err, schedules.ErrEvery):
		return invalid("every", "%s", msg)
	case errors.Is(err, schedules.ErrCron):
		return invalid("cron", "%s", msg)
	case errors.Is(err, schedules.ErrMaxAttempts):
		return invalid("max_attempts", "%s", msg)
	}
	return callbackError(d.Callback, err)
}
