package durable

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{
		{0, 0}, {-time.Second, 0}, {90 * time.Second, 90 * time.Second},
		{MaxRetryAfter, MaxRetryAfter}, {MaxRetryAfter + 1, MaxRetryAfter}, {1<<63 - 1, MaxRetryAfter},
	} {
		d, ok := retryAfterOf(RetryAfter(tc.in))
		assert.True(t, ok)
		assert.Equal(t, tc.want, d, "RetryAfter(%v)", tc.in)
	}
	assert.EqualError(t, RetryAfter(time.Minute), "durable: retry after 1m0s")
	assert.Equal(t, RetryAfter(time.Minute), RetryAfterError(time.Minute, nil))

	cause := errors.New("busy")
	err := fmt.Errorf("handler: %w", RetryAfterError(time.Minute, cause))
	d, ok := retryAfterOf(err)
	assert.True(t, ok, "found anywhere in the chain")
	assert.Equal(t, time.Minute, d)
	assert.ErrorIs(t, err, cause, "the cause stays in the chain")
	assert.EqualError(t, err, "handler: durable: retry after 1m0s: busy")

	_, ok = retryAfterOf(cause)
	assert.False(t, ok)
	_, ok = retryAfterOf(nil)
	assert.False(t, ok)
}

// TestHTTPHandlerRetryAfter: a 429 or 503 with a valid Retry-After becomes a RetryAfter that keeps
// the HTTPStatusError; anything else is handled as without the header.
func TestHTTPHandlerRetryAfter(t *testing.T) {
	// The server's clock, as its Date header says: far from ours, so that a delay computed
	// against our clock would show.
	serverNow := time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var code int
		fmt.Sscan(r.URL.Query().Get("code"), &code)
		switch r.URL.Query().Get("date") {
		case "server":
			w.Header().Set("Date", serverNow.Format(http.TimeFormat))
		case "none":
			w.Header()["Date"] = nil // net/http then sends none
		}
		if ra, ok := r.URL.Query()["ra"]; ok {
			w.Header().Set("Retry-After", ra[0])
		}
		w.WriteHeader(code)
		fmt.Fprint(w, "busy")
	}))
	defer srv.Close()
	h := HTTPHandler(srv.Client())
	send := func(code int, date string, retryAfter *string) error {
		q := url.Values{"code": {fmt.Sprint(code)}, "date": {date}}
		if retryAfter != nil {
			q.Set("ra", *retryAfter)
		}
		return sendHTTPTask(t, h, "k", 1, HTTPTask{URL: srv.URL + "/?" + q.Encode(), Method: "POST"})
	}
	str := func(s string) *string { return &s }
	httpDate := func(t time.Time) *string { return str(t.UTC().Format(http.TimeFormat)) }

	for _, tc := range []struct {
		name       string
		code       int
		date       string
		retryAfter *string
		want       string
		delay      time.Duration // when want is "later"
	}{
		{"429 seconds", 429, "", str("120"), "later", 2 * time.Minute},
		{"503 seconds", 503, "", str("7"), "later", 7 * time.Second},
		{"503 zero", 503, "", str("0"), "later", 0},
		{"429 over a day", 429, "", str("86401"), "later", MaxRetryAfter},
		{"429 beyond int64", 429, "", str("99999999999999999999999"), "later", MaxRetryAfter},
		{"429 date by the server's clock", 429, "server", httpDate(serverNow.Add(90 * time.Second)), "later", 90 * time.Second},
		{"503 past date", 503, "server", httpDate(serverNow.Add(-time.Hour)), "later", 0},
		{"503 RFC 850 date", 503, "server", str(serverNow.Add(time.Minute).Format("Monday, 02-Jan-06 15:04:05 GMT")), "later", time.Minute},
		{"429 no header", 429, "", nil, "retry", 0},
		{"429 empty", 429, "", str(""), "retry", 0},
		{"429 word", 429, "", str("soon"), "retry", 0},
		{"429 negative", 429, "", str("-5"), "retry", 0},
		{"503 fraction", 503, "", str("1.5"), "retry", 0},
		{"500 ignores it", 500, "", str("120"), "retry", 0},
		{"408 ignores it", 408, "", str("120"), "retry", 0},
		{"404 ignores it", 404, "", str("120"), "dead", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := send(tc.code, tc.date, tc.retryAfter)
			require.Equal(t, tc.want, httpOutcome(err), "%v", err)
			var se *HTTPStatusError
			require.ErrorAs(t, err, &se, "the status error stays in the chain")
			assert.Equal(t, tc.code, se.StatusCode)
			assert.Equal(t, "busy", se.Body)
			if tc.want == "later" {
				d, _ := retryAfterOf(err)
				assert.Equal(t, tc.delay, d)
				assert.Contains(t, err.Error(), fmt.Sprint(tc.code), "the last error names the status")
			}
		})
	}

	t.Run("date by our clock without a Date header", func(t *testing.T) {
		err := send(503, "none", httpDate(time.Now().Add(time.Hour)))
		d, ok := retryAfterOf(err)
		require.True(t, ok, "%v", err)
		// An HTTP-date has whole seconds, and the response took some time to arrive.
		assert.InDelta(t, time.Hour.Seconds(), d.Seconds(), 60)
	})
}
