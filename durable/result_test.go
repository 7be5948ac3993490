package durable

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// HTTPHandler records each callback's status code and response body as the
// delivery's Result, on success and failure alike, the body cut at
// MaxResultBody with Truncated set.
func TestHTTPHandlerSetsResult(t *testing.T) {
	long := bytes.Repeat([]byte("x"), MaxResultBody+1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte(`{"id":7}`)) //nolint:errcheck
		case "/fail":
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("upstream down")) //nolint:errcheck
		case "/long":
			w.Write(long) //nolint:errcheck
		case "/exact":
			w.Write(long[:MaxResultBody]) //nolint:errcheck
		}
	}))
	defer srv.Close()
	h := HTTPHandler(srv.Client())
	for _, c := range []struct {
		path string
		want Result
	}{
		{"/ok", Result{Code: 200, Body: []byte(`{"id":7}`)}},
		{"/fail", Result{Code: 502, Body: []byte("upstream down")}},
		{"/long", Result{Code: 200, Body: long[:MaxResultBody], Truncated: true}},
		{"/exact", Result{Code: 200, Body: long[:MaxResultBody]}},
	} {
		var slot resultSlot
		payload, err := encodeHTTPTask("k", HTTPTask{URL: srv.URL + c.path, Method: "POST"})
		require.NoError(t, err)
		handleWithin(t, h, withResultSlot(context.Background(), &slot), Task{Key: "k", Payload: payload, Attempt: 1, Due: time.Now()}) //nolint:errcheck // the outcome is TestHTTPHandlerStatus's
		got := slot.take()
		assert.Equal(t, c.want.Code, got.Code, c.path)
		assert.Equal(t, c.want.Truncated, got.Truncated, c.path)
		assert.True(t, bytes.Equal(c.want.Body, got.Body), "%s: body of %d bytes, want %d", c.path, len(got.Body), len(c.want.Body))
	}
}

// SetResult keeps a copy, the last call wins, and nothing changes once the
// outcome took the result or outside a handler's context.
func TestSetResult(t *testing.T) {
	SetResult(context.Background(), Result{Code: 1}) // not a handler's: nothing happens, no panic
	var slot resultSlot
	ctx := withResultSlot(context.Background(), &slot)
	body := []byte("first")
	SetResult(ctx, Result{Code: 1, Body: body})
	SetResult(ctx, Result{Code: 2, Body: body})
	body[0] = 'F' // the caller reuses its buffer
	got := slot.take()
	assert.Equal(t, Result{Code: 2, Body: []byte("first")}, got)
	SetResult(ctx, Result{Code: 3})
	assert.Equal(t, 2, slot.r.Code, "a SetResult after the outcome was made changed it")
	var empty resultSlot
	SetResult(withResultSlot(context.Background(), &empty), Result{Code: 204, Body: []byte{}})
	assert.Nil(t, empty.take().Body, "an empty body is stored as none")
}
