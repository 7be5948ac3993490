package limit_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
	"github.com/go-timingwheel/timingwheel/timerd/internal/limit"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newLimiter(perSecond float64, burst int) (*limit.Limiter, *fakeClock, http.Handler) {
	l := limit.New(perSecond, burst)
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l.SetClock(clock.now)
	h := l.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	return l, clock, h
}

// do sends one request from remote and returns the recorder.
func do(h http.Handler, remote string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", "/v1/tasks", nil)
	r.RemoteAddr = remote
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestBurstThenRate(t *testing.T) {
	_, clock, h := newLimiter(2, 3)
	for i := range 3 {
		require.Equal(t, http.StatusNoContent, do(h, "192.0.2.1:1000").Code, "request %d of the burst", i)
	}
	w := do(h, "192.0.2.1:1001")
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	require.Equal(t, "1", w.Header().Get("Retry-After"), "a token comes in 0.5s: rounded up to 1s")
	var body apierror.Body
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
	require.Equal(t, apierror.RateLimited, body.Error.Code)

	clock.advance(499 * time.Millisecond)
	require.Equal(t, http.StatusTooManyRequests, do(h, "192.0.2.1:1").Code, "not yet a whole token")
	clock.advance(time.Millisecond)
	require.Equal(t, http.StatusNoContent, do(h, "192.0.2.1:1").Code, "one token after 0.5s at 2/s")
	require.Equal(t, http.StatusTooManyRequests, do(h, "192.0.2.1:1").Code)

	clock.advance(time.Hour)
	for range 3 {
		require.Equal(t, http.StatusNoContent, do(h, "192.0.2.1:1").Code, "the bucket holds at most the burst")
	}
	require.Equal(t, http.StatusTooManyRequests, do(h, "192.0.2.1:1").Code)
}

func TestRetryAfterSeconds(t *testing.T) {
	_, _, h := newLimiter(0.1, 1) // one request every 10s
	require.Equal(t, http.StatusNoContent, do(h, "192.0.2.1:1").Code)
	w := do(h, "192.0.2.1:1")
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	require.Equal(t, "10", w.Header().Get("Retry-After"))
}

// Each client address has its own bucket; ports do not matter, and an IPv6
// host's /64 is one client.
func TestPerClient(t *testing.T) {
	_, _, h := newLimiter(1, 1)
	for _, tc := range []struct {
		remote string
		code   int
	}{
		{"192.0.2.1:1", http.StatusNoContent},
		{"192.0.2.1:2", http.StatusTooManyRequests},
		{"192.0.2.2:1", http.StatusNoContent},
		{"[2001:db8:1:2::1]:1", http.StatusNoContent},
		{"[2001:db8:1:2:ffff::9]:1", http.StatusTooManyRequests},
		{"[2001:db8:1:3::1]:1", http.StatusNoContent},
		{"[::ffff:192.0.2.2]:5", http.StatusTooManyRequests}, // 192.0.2.2 again
	} {
		require.Equal(t, tc.code, do(h, tc.remote).Code, tc.remote)
	}
}

func TestZeroRateIsNoLimit(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	l := limit.New(0, 0)
	require.Equal(t, fmt.Sprint(next), fmt.Sprint(l.Wrap(next)), "no limit: next itself")
}

// Idle buckets are forgotten once full again; memory never exceeds the cap.
func TestEviction(t *testing.T) {
	l, clock, h := newLimiter(10, 10) // a bucket refills in 1s
	for i := range 100 {
		do(h, fmt.Sprintf("192.0.2.%d:1", i))
	}
	require.Equal(t, 100, l.Buckets())
	clock.advance(500 * time.Millisecond)
	do(h, "198.51.100.1:1")
	require.Equal(t, 101, l.Buckets(), "not full yet: kept")
	clock.advance(600 * time.Millisecond)
	do(h, "198.51.100.2:1")
	require.Equal(t, 2, l.Buckets(), "the 100 are full again: forgotten")

	// A client forgotten while its bucket was not full gets a full one: the
	// only effect of eviction is to let it through sooner, never later.
	const maxClients = 1000
	l, _, h = newLimiter(1, 1)
	l.SetMaxClients(maxClients)
	for i := range 3 * maxClients {
		do(h, fmt.Sprintf("10.%d.%d.%d:1", i>>16&255, i>>8&255, i&255))
		if l.Buckets() > maxClients {
			t.Fatalf("%d buckets after %d clients, cap %d", l.Buckets(), i+1, maxClients)
		}
	}
	require.GreaterOrEqual(t, l.Buckets(), maxClients*9/10, "evicted down to nine tenths, no further")
}
