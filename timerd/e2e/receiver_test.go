package e2e

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// delivery is one callback the receiver got.
type delivery struct {
	key       string
	attempt   int
	from      int // the sender's port
	arrived   time.Time
	ended     time.Time
	completed bool // answered 200; false: the sender went away first
}

// receiver is a slow callback endpoint: it answers each callback 200 after
// delay, unless the sender goes away first, and records everything.
type receiver struct {
	srv   *httptest.Server
	delay time.Duration

	mu       sync.Mutex
	all      []delivery
	inFlight map[int]int // sender port → callbacks being answered
}

func newReceiver(t *testing.T, delay time.Duration) *receiver {
	rc := &receiver{delay: delay, inFlight: map[int]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) url() string { return rc.srv.URL + "/hook" }

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	d := delivery{key: r.Header.Get(rediswheel.HeaderIdempotencyKey), arrived: time.Now()}
	d.attempt, _ = strconv.Atoi(r.Header.Get(rediswheel.HeaderAttempt))
	_, port, _ := net.SplitHostPort(r.RemoteAddr)
	d.from, _ = strconv.Atoi(port)
	io.Copy(io.Discard, r.Body)
	rc.mu.Lock()
	rc.inFlight[d.from]++
	rc.mu.Unlock()

	t := time.NewTimer(rc.delay)
	select {
	case <-t.C:
		d.completed = true
	case <-r.Context().Done():
		t.Stop()
	}
	d.ended = time.Now()
	rc.mu.Lock()
	if rc.inFlight[d.from]--; rc.inFlight[d.from] == 0 {
		delete(rc.inFlight, d.from)
	}
	rc.all = append(rc.all, d)
	rc.mu.Unlock()
	if d.completed {
		w.WriteHeader(http.StatusOK)
	}
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.all...)
}

// senders returns the ports with callbacks being answered now.
func (rc *receiver) senders() []int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var ports []int
	for p := range rc.inFlight {
		ports = append(ports, p)
	}
	return ports
}

// completed returns the keys answered 200.
func (rc *receiver) completed() map[string]bool {
	done := map[string]bool{}
	for _, d := range rc.deliveries() {
		if d.completed {
			done[d.key] = true
		}
	}
	return done
}
