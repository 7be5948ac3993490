package durable

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// HTTPHandler sends the delivery's token and maps 202 Accepted to Detach with the task's
// completion timeout (DefaultCompletionTimeout when zero); any other 2xx is done.
func TestHTTPAcceptedDetaches(t *testing.T) {
	tokens := make(chan string, 4)
	status := http.StatusAccepted
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokens <- r.Header.Get(HeaderCompletionToken)
		w.WriteHeader(status)
	}))
	defer srv.Close()
	h := HTTPHandler(srv.Client())
	for _, tc := range []struct {
		name   string
		within time.Duration // the task's CompletionTimeout
		status int
		want   time.Duration // Detach's deadline; 0: done (nil)
	}{
		{"202, own timeout", 5 * time.Minute, http.StatusAccepted, 5 * time.Minute},
		{"202, default", 0, http.StatusAccepted, DefaultCompletionTimeout},
		{"200", 5 * time.Minute, http.StatusOK, 0},
		{"204", 0, http.StatusNoContent, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status = tc.status
			payload, err := EncodeHTTPTask(HTTPTask{URL: srv.URL, Method: "POST", CompletionTimeout: tc.within})
			require.NoError(t, err)
			err = h(context.Background(), Task{Key: "k", Payload: payload, Attempt: 1, Token: "0.1.0.0.42"})
			assert.Equal(t, "0.1.0.0.42", await(t, tokens, "the callback"), "the token header")
			within, detached := detachOf(err)
			if tc.want == 0 {
				assert.NoError(t, err)
				return
			}
			assert.True(t, detached, "a Detach error, got %v", err)
			assert.Equal(t, tc.want, within)
		})
	}
}

func TestHTTPCompletionTimeoutValidation(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, MaxDetach + time.Millisecond} {
		_, err := EncodeHTTPTask(HTTPTask{URL: "https://example.com/", Method: "POST", CompletionTimeout: d})
		assert.ErrorIs(t, err, ErrInvalidTimeout, "completion timeout %v", d)
	}
	payload, err := EncodeHTTPTask(HTTPTask{URL: "https://example.com/", Method: "POST", CompletionTimeout: MaxDetach})
	require.NoError(t, err)
	back, err := DecodeHTTPTask(payload)
	require.NoError(t, err)
	assert.Equal(t, MaxDetach, back.CompletionTimeout, "stored and read back")
}

// Complete refuses a malformed token before any store call (the stub store panics if called):
// "<partition>.<store token>", or the five fields of the form before it.
func TestCompleteBadToken(t *testing.T) {
	q := stubQueue(t, Options{})
	for _, tok := range []string{"", "1", "0.", ".7", "1.7", "-1.7", "0.7.8", "0.1.0.7", "0.1.0.0", "0.1.0.0.",
		"1.1.0.0.7", "-1.1.0.0.7", "0.x.0.0.7", "0.1.-5.0.7", "0.1.0.0.7.8"} {
		code, err := q.Complete(context.Background(), "k", tok, nil)
		assert.ErrorIs(t, err, ErrToken, "token %q", tok)
		assert.Equal(t, SettleRejected, code)
	}
	_, err := q.Complete(context.Background(), "", "0.7", nil)
	assert.ErrorIs(t, err, ErrKey)
}

// parseToken reads Task.Token, "<partition>.<store token>", and the five
// fields of the form before it, whose attempt and backoff it ignores.
func TestParseTokenReadsBothForms(t *testing.T) {
	q := stubQueue(t, Options{})
	for tok, want := range map[string]completion{
		"0.7":                       {partition: 0, token: "7"},
		"0.1.0.0.7":                 {partition: 0, token: "7"},
		"0.99999999999.864000.0.42": {partition: 0, token: "42"},
	} {
		c, err := q.parseToken(tok)
		require.NoError(t, err, tok)
		assert.Equal(t, want, c, tok)
	}
}
