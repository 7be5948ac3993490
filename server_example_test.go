package timingwheel_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel"
)

// idleListener gives every connection it accepts an idle timer on the wheel,
// which closes the connection once it has been idle for idle; with
// idleConnState as the http.Server's ConnState hook, the timer runs only
// while the connection has no request in progress. One wheel serves every
// connection; Reset to a later deadline touches no bucket.
//
// Idle means between requests, as for http.Server's IdleTimeout: a timer
// pushed back only by reads would close a connection whose handler takes
// longer than idle to answer, in the middle of its request.
type idleListener struct {
	net.Listener
	tw   *timingwheel.TimingWheel
	idle time.Duration
}

func (l idleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	// Armed at once: a connection that never sends a request is idle too.
	ic := &idleConn{Conn: c, idle: l.idle}
	ic.timer = l.tw.AfterFunc(l.idle, func() { c.Close() })
	return ic, nil
}

type idleConn struct {
	net.Conn
	timer *timingwheel.Timer
	idle  time.Duration
}

func (c *idleConn) Close() error {
	c.timer.Stop()
	return c.Conn.Close()
}

// idleConnState is the http.Server's ConnState hook: net/http calls it with
// the connection the listener returned (inside a *tls.Conn with TLS) when a
// request begins (StateActive: stop the timer, however long the handler
// takes) and when the connection waits for the next one (StateIdle: arm it
// again). A request that begins just as the timer fires may find its
// connection closed, as with http.Server's IdleTimeout.
func idleConnState(c net.Conn, state http.ConnState) {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok { // *tls.Conn
		c = tc.NetConn()
	}
	ic, ok := c.(*idleConn)
	if !ok {
		return
	}
	switch state {
	case http.StateActive:
		ic.timer.Stop()
	case http.StateIdle:
		ic.timer.Reset(ic.idle)
	}
}

// newIdleServer serves h on 127.0.0.1 with an idle timeout on the wheel.
func newIdleServer(tw *timingwheel.TimingWheel, idle time.Duration, h http.Handler) (*http.Server, net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	ln = idleListener{Listener: ln, tw: tw, idle: idle}
	srv := &http.Server{Handler: h, ConnState: idleConnState}
	go srv.Serve(ln)
	return srv, ln, nil
}

// workHandler answers /work?ms=N after N milliseconds.
var workHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
	if err != nil {
		http.Error(w, "ms: "+err.Error(), http.StatusBadRequest)
		return
	}
	time.Sleep(time.Duration(ms) * time.Millisecond)
	fmt.Fprintf(w, "worked %dms\n", ms)
})

// An idle timeout per connection of an http.Server, on a wheel: the listener
// gives each connection a timer that closes it, and the server's ConnState
// hook stops the timer while a request is in progress and arms it again when
// the connection goes idle, so a handler slower than the idle timeout keeps
// its connection.
func Example_idleTimeoutListener() {
	tw, err := timingwheel.New(time.Millisecond, 512)
	if err != nil {
		panic(err)
	}
	defer tw.Stop() // last: after the server has closed
	const idle = 300 * time.Millisecond
	srv, ln, err := newIdleServer(tw, idle, workHandler)
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // no read below waits longer
	r := bufio.NewReader(conn)
	sent := time.Now()
	// Two requests slower than the idle timeout, on one keep-alive
	// connection; sent at once (pipelined), so that the connection is never
	// idle for long between them however late this goroutine runs.
	fmt.Fprint(conn, strings.Repeat("GET /work?ms=450 HTTP/1.1\r\nHost: example\r\n\r\n", 2))
	for range 2 {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			fmt.Println("request cut:", err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Print(resp.StatusCode, " ", string(body))
	}
	_, err = r.ReadByte() // idle now: the server closes it idle after the last response
	fmt.Println("closed after the idle timeout:", err == io.EOF, time.Since(sent) >= 2*450*time.Millisecond+idle)
	// Output:
	// 200 worked 450ms
	// 200 worked 450ms
	// closed after the idle timeout: true true
}

// withDeadline gives every request a deadline on the wheel: the handler's
// context is done, with context.DeadlineExceeded, once d has elapsed.
func withDeadline(tw *timingwheel.TimingWheel, d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := tw.WithTimeout(r.Context(), d)
		defer cancel() // the common case: the handler finished in time; frees the timer
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// A net/http middleware that gives each request a deadline on the wheel, as
// http.TimeoutHandler or context.WithTimeout would with a runtime timer.
func Example_requestDeadlineMiddleware() {
	tw, err := timingwheel.New(time.Millisecond, 512)
	if err != nil {
		panic(err)
	}
	defer tw.Stop() // last: after the server has closed
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Minute): // work that takes too long
			fmt.Fprintln(w, "done")
		case <-r.Context().Done():
			http.Error(w, r.Context().Err().Error(), http.StatusGatewayTimeout)
		}
	})
	srv := httptest.NewServer(withDeadline(tw, 30*time.Millisecond, slow))
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.StatusCode, " ", string(body))
	fmt.Println(context.DeadlineExceeded.Error() == string(body[:len(body)-1]))
	// Output:
	// 504 context deadline exceeded
	// true
}
