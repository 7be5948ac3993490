// Package limit bounds the request rate of timerd's API, per client address,
// with token buckets; over the limit a request gets 429 rate_limited and a
// Retry-After header.
//
// A client is the address the connection comes from (http.Request's
// RemoteAddr), never a header such as X-Forwarded-For, which any client can
// write: behind a proxy every request shares the proxy's bucket. IPv6
// clients are counted by their /64, the block one host usually gets, so a
// host cannot escape its bucket by changing addresses within it.
package limit

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
)

// maxClients caps the buckets kept at once. A bucket idle long enough to be
// full again is deleted (it is the same as a new one); past maxClients
// buckets that are not yet full are deleted too, which can only let their
// clients through sooner. At about 100 bytes a bucket this is ~10 MB.
const maxClients = 100_000

// Limiter is a token bucket per client: each holds up to burst tokens,
// gains perSecond of them every second, and a request takes one. It is safe
// for concurrent use.
type Limiter struct {
	rate  float64 // tokens per second; 0: no limit
	burst float64
	now   func() time.Time // time.Now; tests replace it
	cap   int              // maxClients; tests lower it

	// mu guards buckets and lastSweep.
	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	tokens float64   // at last
	last   time.Time // when tokens was computed
}

// New returns a Limiter of perSecond requests per second per client, up to
// burst at once (at least 1). perSecond 0 means no limit. It panics if
// perSecond is negative or not finite.
func New(perSecond float64, burst int) *Limiter {
	if perSecond < 0 || math.IsNaN(perSecond) || math.IsInf(perSecond, 0) {
		panic("limit.New: perSecond must be finite and ≥ 0")
	}
	return &Limiter{rate: perSecond, burst: float64(max(burst, 1)), now: time.Now, cap: maxClients,
		buckets: map[string]*bucket{}}
}

// Wrap passes to next the requests within their client's limit and answers
// the others 429 (apierror.RateLimited) with Retry-After in whole seconds,
// at least 1. With no limit it returns next itself.
func (l *Limiter) Wrap(next http.Handler) http.Handler {
	if l.rate == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wait := l.take(client(r.RemoteAddr)); wait > 0 {
			w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
			apierror.Write(w, apierror.RateLimited, "", "too many requests from this address; see Retry-After")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// take takes a token from key's bucket and returns 0, or, if it has none,
// how long until it has one.
func (l *Limiter) take(key string) time.Duration {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.tokens = min(l.burst, b.tokens+dt*l.rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	return time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// refill is how long an empty bucket takes to fill: a bucket idle that long
// is the same as a new one.
func (l *Limiter) refill() time.Duration {
	return time.Duration(l.burst / l.rate * float64(time.Second))
}

// sweep deletes the full buckets, at most once per refill period (at least a
// second), so its cost is spread over the requests of that period; then, if
// there are still maxClients (l.cap), any buckets until a tenth of the room is free,
// so the next forced sweep is that many new clients away. Memory is so
// bounded by the clients seen in one refill period, at most maxClients.
func (l *Limiter) sweep(now time.Time) {
	period := max(l.refill(), time.Second)
	if now.Sub(l.lastSweep) < period && len(l.buckets) < l.cap {
		return
	}
	l.lastSweep = now
	full := l.refill()
	for k, b := range l.buckets {
		if now.Sub(b.last) >= full {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets { // map order: an arbitrary choice
		if len(l.buckets) < l.cap-l.cap/10 {
			break
		}
		delete(l.buckets, k)
	}
}

// client is the bucket key of a RemoteAddr: the IPv4 address, or the /64 of
// an IPv6 one; RemoteAddr itself if it is not ip:port.
func client(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.WithZone("").Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
